// RUN: tile-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the tile ops and attributes (TileOps.cpp,
// TileDialect.cpp); kernel-level attributes are in kernel-attrs-invalid.mlir.

func.func @f() {
  // expected-error @+1 {{grid must have 1 to 3 dimensions, got 0}}
  tile.launch blocks() in () threads(128) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{grid must have 1 to 3 dimensions, got 4}}
  tile.launch blocks(%a, %b, %c, %d) in (%n, %n, %n, %n) threads(128) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{expected 'threads(N)': a launch needs a thread count per block}}
  tile.launch blocks(%bx) in (%n) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{needs a positive thread count per block, got 0}}
  tile.launch blocks(%bx) in (%n) threads(0) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{needs a positive thread count per block, got -32}}
  tile.launch blocks(%bx) in (%n) threads(-32) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{thread count 1025 exceeds the 1024 threads of a block}}
  tile.launch blocks(%bx) in (%n) threads(1025) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{rasterization applies to a 2-D grid, got rank 1}}
  tile.launch blocks(%bx) in (%n) threads(128) attributes {raster = #tile.raster<panel = 8>} {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{rasterization panel must be positive, got 0}}
  tile.launch blocks(%bx, %by) in (%n, %n) threads(128) attributes {raster = #tile.raster<panel = 0>} {
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{may not be nested in another tile.launch}}
    tile.launch blocks(%by) in (%n) threads(128) {
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{expects one block index per grid dimension (1), got 2}}
  tile.launch blocks(%bx, %by) in (%n) threads(128) {
  }
  return
}

// -----

func.func @f(%n: index) {
  // expected-error @+1 {{block indices must be of index type}}
  "tile.launch"(%n) <{threads = 128 : i64}> ({
  ^bb0(%bx: i32):
    "tile.yield"() : () -> ()
  }) : (index) -> ()
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{expects parent op to be one of 'tile.launch, tile.parallel, tile.pipelined'}}
  tile.yield
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{result must be in a tile memory scope (#tile.scope<shared|fragment|local>), got 'memref<4xf32>'}}
    %a = tile.alloc : memref<4xf32>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{buffers are allocated with the identity layout}}
    %a = tile.alloc : memref<4x4xf32, strided<[1, 4]>, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{buffer has no elements}}
    %a = tile.alloc : memref<0x4xf32, #tile.scope<shared>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'vector<4xf32>' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xvector<4xf32>, #tile.scope<shared>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'complex<f32>' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xcomplex<f32>, #tile.scope<fragment>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'index' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xindex, #tile.scope<local>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'i17' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xi17, #tile.scope<shared>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'ui32' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xui32, #tile.scope<fragment>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'f80' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xf80, #tile.scope<shared>>
  }
  return
}

// -----

// On-chip element types are those every lowering handles.
func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{unsupported element type 'f8E4M3FNUZ' (on-chip buffers hold i1, i8, i16, i32, i64, f16, bf16, f32, f64, f8E4M3FN or f8E5M2)}}
    %a = tile.alloc : memref<64xf8E4M3FNUZ, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{must be statically shaped memref}}
    %a = tile.alloc : memref<?xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'tile.alloc' op must be nested in a tile.launch}}
  %a = tile.alloc : memref<4xf32, #tile.scope<shared>>
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{a #tile.fragment layout needs a fragment buffer, got a shared buffer}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32>} : memref<32xf32, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{a #tile.swizzle needs a shared buffer, got a fragment buffer}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3>} : memref<64x64xf16, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout maps an element to thread 32, outside [0, 32)}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(4) {
    // expected-error @+1 {{fragment layout map affine_map<(d0) -> (d0 floordiv 0)> cannot be evaluated at (0): division or modulo by a non-positive value, or overflow}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i floordiv 0), index = (i) -> (0), threads = 4>} : memref<4xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout maps two elements to thread 0 register 0}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i mod 32), index = (i) -> (0), threads = 32>} : memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout maps an element to negative register index -1}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (-1), threads = 32>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout has 1 dims but the buffer has rank 2}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32>} : memref<32x2xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{fragment layout spreads over 32 threads but the launch has 128}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{fragment of 2097152 elements is too large to live in registers}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i, j) -> (j mod 128), index = (i, j) -> (i), threads = 128>} : memref<2048x1024xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout maps must each have one result}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i, i), index = (i) -> (0), threads = 32>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout thread map has 1 dims but the index map has 2}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i, j) -> (j), threads = 32>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout maps may not use symbols}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i)[s] -> (i + s), index = (i) -> (0), threads = 32>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout needs a positive thread count}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 0>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{fragment layout replicate (3) must be positive and divide threads (32)}}
    %a = tile.alloc {layout = #tile.fragment<thread = (i) -> (i), index = (i) -> (0), threads = 32, replicate = 3>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle parameters must be non-negative}}
    %a = tile.alloc {layout = #tile.swizzle<bits = -1, base = 4, shift = 3>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle shift (2) must be at least bits (3)}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 2>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle reaches bit 24, beyond any shared-memory offset}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 8, base = 8, shift = 8>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle parameter 9223372036854775807 reaches beyond any shared-memory offset (bit 20)}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 9223372036854775807, shift = 9223372036854775807>} : memref<32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle panel (96 bytes) must be a power of two of at least 16}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3, panel = 96>} : memref<64x128xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{swizzle panel (64 bytes) is narrower than the swizzled row (128 bytes)}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3, panel = 64>} : memref<64x128xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(32) {
    // expected-error @+1 {{a swizzle panel of 128 bytes needs rows (the last dim) of a multiple of 128 bytes, got 2-D rows of 160 bytes}}
    %a = tile.alloc {layout = #tile.swizzle<bits = 3, base = 4, shift = 3, panel = 128>} : memref<64x80xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{copies between global tensors are not tile copies; one side must be a shared, fragment or local buffer}}
    tile.copy %A[%m, %m] to %B[%m, %m] : memref<?x?xf16> to memref<?x?xf16>
  }
  return
}

// -----

func.func @f(%X: memref<?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{source rank (1) and target rank (2) differ}}
    tile.copy %X[%m] to %S : memref<?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{the on-chip target takes no indices: the copy covers it whole}}
    tile.copy %A[%m, %m] to %S[%m, %m] : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{the on-chip source takes no indices: the copy covers it whole}}
    tile.copy %S[%m, %m] to %F : memref<64x32xf16, #tile.scope<shared>> to memref<64x32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{the global source needs 2 start indices, got 1}}
    tile.copy %A[%m] to %S : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{the global target needs 2 start indices, got 0}}
    tile.copy %F to %A : memref<64x32xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %G = tile.alloc : memref<32x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{on-chip copy shapes differ: 64x32 (shared) vs 32x64 (fragment)}}
    tile.copy %S to %G : memref<64x32xf16, #tile.scope<shared>> to memref<32x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %D: memref<?x32xf16, #tile.scope<shared>>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %unused = tile.alloc : memref<1xf32, #tile.scope<local>>
    // expected-error @+1 {{target must have a static shape, got 'memref<?x32xf16, #tile.scope<shared>>'}}
    tile.copy %A[%m, %m] to %D : memref<?x?xf16> to memref<?x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{drop_dims names dims of a global side; both sides are on-chip}}
    tile.copy %S to %F drop_dims [0] : memref<64x32xf16, #tile.scope<shared>> to memref<64x32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%Q: memref<?x?x?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    // expected-error @+1 {{drop_dims entry 4 is not a dim of the rank-4 global source}}
    tile.copy %Q[%m, %m, %m, %m] to %S drop_dims [1, 4] : memref<?x?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%Q: memref<?x?x?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    // expected-error @+1 {{drop_dims must be strictly increasing}}
    tile.copy %Q[%m, %m, %m, %m] to %S drop_dims [1, 0] : memref<?x?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%Q: memref<?x?x?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %F = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{the rank-4 global side less 1 dropped dims has rank 3 but the on-chip side has rank 2}}
    tile.copy %F to %Q[%m, %m, %m, %m] drop_dims [0] : memref<64x32xf32, #tile.scope<fragment>> to memref<?x?x?x?xf16>
  }
  return
}

// -----

func.func @f(%Q: memref<?x?x?xf16>, %m: index) {
  tile.launch blocks(%bx) in (%m) threads(128) {
    %S = tile.alloc : memref<1x64x32xf16, #tile.scope<shared>>
    %V = memref.collapse_shape %S [[0, 1], [2]] : memref<1x64x32xf16, #tile.scope<shared>> into memref<64x32xf16, #tile.scope<shared>>
    // expected-error @+1 {{the on-chip target must be a tile.alloc buffer, not a view ('memref.collapse_shape'); to drop unit dims of a global tensor use drop_dims}}
    tile.copy %Q[%m, %m, %m] to %V drop_dims [0] : memref<?x?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%A: memref<?x?xf16>, %S: memref<64x32xf16, #tile.scope<shared>>, %m: index) {
  // expected-error @+1 {{'tile.copy' op must be nested in a tile.launch}}
  tile.copy %A[%m, %m] to %S : memref<?x?xf16> to memref<64x32xf16, #tile.scope<shared>>
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<local>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{A must be a shared or fragment buffer, got a local buffer}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<local>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<local>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{B must be a shared buffer, got a local buffer}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<local>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<fragment>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{B must be a shared buffer, got a fragment buffer}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<fragment>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<local>>
    // expected-error @+1 {{C (the accumulator) must be a fragment buffer, got a local buffer}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<local>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    // expected-error @+1 {{C (the accumulator) must be a fragment buffer, got a shared buffer}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<2x64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{A, B and C must be 2-D tiles}}
    tile.gemm %A, %B, %C : memref<2x64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<16x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{reduction dims differ: op(A) is 64x32 but op(B) is 16x64}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<16x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{reduction dims differ: op(A) is 64x32 but op(B) is 64x32}}
    tile.gemm %A, %B, %C {transpose_b} : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x32xf32, #tile.scope<fragment>>
    // expected-error @+1 {{C is 64x32 but op(A) x op(B) is 64x64}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x32xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xbf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xbf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf16, #tile.scope<fragment>>
    // expected-error @+1 {{unsupported element types: A 'bf16', B 'bf16', C 'f16'}}
    tile.gemm %A, %B, %C : memref<64x32xbf16, #tile.scope<shared>>, memref<32x64xbf16, #tile.scope<shared>>, memref<64x64xf16, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf16, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xbf16, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{unsupported element types: A 'f16', B 'bf16', C 'f32'}}
    tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xbf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xi8, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xi8, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{unsupported element types: A 'i8', B 'i8', C 'f32'}}
    tile.gemm %A, %B, %C : memref<64x32xi8, #tile.scope<shared>>, memref<32x64xi8, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %A = tile.alloc : memref<64x32xf64, #tile.scope<shared>>
    %B = tile.alloc : memref<32x64xf64, #tile.scope<shared>>
    %C = tile.alloc : memref<64x64xf64, #tile.scope<fragment>>
    // expected-error @+1 {{unsupported element types: A 'f64', B 'f64', C 'f64'}}
    tile.gemm %A, %B, %C : memref<64x32xf64, #tile.scope<shared>>, memref<32x64xf64, #tile.scope<shared>>, memref<64x64xf64, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%A: memref<64x32xf16, #tile.scope<shared>>, %B: memref<32x64xf16, #tile.scope<shared>>, %C: memref<64x64xf32, #tile.scope<fragment>>) {
  // expected-error @+1 {{'tile.gemm' op must be nested in a tile.launch}}
  tile.gemm %A, %B, %C : memref<64x32xf16, #tile.scope<shared>>, memref<32x64xf16, #tile.scope<shared>>, memref<64x64xf32, #tile.scope<fragment>>
  return
}

// -----

func.func @f(%n: index, %v: f16) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{value type 'f16' differs from the element type 'f32'}}
    tile.fill %F, %v : memref<64x64xf32, #tile.scope<fragment>>, f16
  }
  return
}

// -----

func.func @f(%X: memref<?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{fills on-chip buffers only, got a global tensor}}
    tile.fill %X, %v : memref<?xf32>, f32
  }
  return
}

// -----

func.func @f(%X: memref<?xf32>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{fills on-chip buffers only, got a global tensor}}
    tile.clear %X : memref<?xf32>
  }
  return
}

// -----

func.func @f(%F: memref<64x64xf32, #tile.scope<fragment>>) {
  // expected-error @+1 {{'tile.clear' op must be nested in a tile.launch}}
  tile.clear %F : memref<64x64xf32, #tile.scope<fragment>>
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %D = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{reduction dim 2 is out of range for a rank-2 source}}
    tile.reduce sum %S into %D {dim = 2 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %D = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{reduction dim -1 is out of range for a rank-2 source}}
    tile.reduce sum %S into %D {dim = -1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %D = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{target must have shape 128 (source without dim 0), got 64}}
    tile.reduce sum %S into %D {dim = 0 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<128xf32, #tile.scope<fragment>>
    %D = tile.alloc : memref<1xf32, #tile.scope<fragment>>
    // expected-error @+1 {{target must have shape [] (rank 0) (source without dim 0), got 1}}
    tile.reduce sum %S into %D {dim = 0 : i64} : memref<128xf32, #tile.scope<fragment>> into memref<1xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf32, #tile.scope<fragment>>
    %D = tile.alloc : memref<64xf16, #tile.scope<fragment>>
    // expected-error @+1 {{source element type 'f32' differs from target element type 'f16'}}
    tile.reduce max %S into %D {dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf16, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %S = tile.alloc : memref<64x128xf8E4M3FN, #tile.scope<fragment>>
    %D = tile.alloc : memref<64xf8E4M3FN, #tile.scope<fragment>>
    // expected-error @+1 {{reduces integer or f16/bf16/f32/f64 buffers, got 'f8E4M3FN'}}
    tile.reduce sum %S into %D {dim = 1 : i64} : memref<64x128xf8E4M3FN, #tile.scope<fragment>> into memref<64xf8E4M3FN, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%X: memref<?x?xf32>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %D = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{reduces between on-chip buffers; got a global source and a fragment target}}
    tile.reduce sum %X into %D {dim = 1 : i64} : memref<?x?xf32> into memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%S: memref<64x128xf32, #tile.scope<fragment>>, %D: memref<64xf32, #tile.scope<fragment>>) {
  // expected-error @+1 {{'tile.reduce' op must be nested in a tile.launch}}
  tile.reduce sum %S into %D {dim = 1 : i64} : memref<64x128xf32, #tile.scope<fragment>> into memref<64xf32, #tile.scope<fragment>>
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{needs at least one extent}}
    tile.parallel (%i) in [] {
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{extents must be positive, got 0}}
    tile.parallel (%i) in [4, 0] {
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{extents must be positive, got -2}}
    tile.parallel (%i) in [-2] {
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{expects one induction variable per extent (1), got 2}}
    tile.parallel (%i, %j) in [4] {
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{induction variables must be of index type}}
    "tile.parallel"() <{extents = array<i64: 4>}> ({
    ^bb0(%i: i32):
      "tile.yield"() : () -> ()
    }) : () -> ()
  }
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'tile.parallel' op must be nested in a tile.launch}}
  tile.parallel (%i) in [4] {
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{stages must be in [1, 32], got 0}}
    tile.pipelined %k = %c0 to %n step %c1 stages(0) {
      %x0 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{stages must be in [1, 32], got -1}}
    tile.pipelined %k = %c0 to %n step %c1 stages(-1) {
      %x0 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{stages must be in [1, 32], got 65536}}
    tile.pipelined %k = %c0 to %n step %c1 stages(65536) {
      %x0 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{'stage' has 1 entries but the body has 2 ops}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {stage = array<i64: 0>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{stage 2 is outside [0, 2)}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {stage = array<i64: 0, 2>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{stage -1 is outside [0, 2)}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {stage = array<i64: -1, 0>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{'order' has 3 entries but the body has 2 ops}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {order = array<i64: 0, 1, 2>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{'order' must be a permutation of [0, 2)}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {order = array<i64: 1, 1>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{'order' must be a permutation of [0, 2)}}
    tile.pipelined %k = %c0 to %n step %c1 stages(2) attributes {order = array<i64: 0, 2>} {
      %x0 = arith.addi %k, %k : index
      %x1 = arith.addi %k, %k : index
    }
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{body must take one index induction variable}}
    "tile.pipelined"(%c0, %n, %n) <{stages = 2 : i64}> ({
    ^bb0(%k: i32):
      "tile.yield"() : () -> ()
    }) : (index, index, index) -> ()
  }
  return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tile.pipelined' op must be nested in a tile.launch}}
  tile.pipelined %k = %c0 to %n step %n stages(2) {
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f16) {
  tile.launch blocks(%bx) in (%n) threads(128) {

    // expected-error @+1 {{value type 'f16' differs from the element type 'f32'}}
    tile.atomic add %v, %O[%n, %n] : f16, memref<?x?xf32>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {

    // expected-error @+1 {{needs 2 indices, got 1}}
    tile.atomic add %v, %O[%n] : f32, memref<?x?xf32>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{atomics target global or shared memory, got a fragment buffer}}
    tile.atomic max %v, %F[%n] : f32, memref<64xf32, #tile.scope<fragment>>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64xf32, #tile.scope<local>>
    // expected-error @+1 {{atomics target global or shared memory, got a local buffer}}
    tile.atomic max %v, %F[%n] : f32, memref<64xf32, #tile.scope<local>>
  }
  return
}

// -----

func.func @f(%O: memref<?xi8>, %n: index, %v: i8) {
  tile.launch blocks(%bx) in (%n) threads(128) {

    // expected-error @+1 {{atomics support f16, bf16, f32, f64, i32 and i64 elements, got 'i8'}}
    tile.atomic add %v, %O[%n] : i8, memref<?xi8>
  }
  return
}

// -----

func.func @f(%O: memref<?xf8E5M2>, %n: index, %v: f8E5M2) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    // expected-error @+1 {{atomics support f16, bf16, f32, f64, i32 and i64 elements, got 'f8E5M2'}}
    tile.atomic max %v, %O[%n] : f8E5M2, memref<?xf8E5M2>
  }
  return
}

// -----

func.func @f(%O: memref<?xf32>, %n: index, %v: f32) {
  // expected-error @+1 {{'tile.atomic' op must be nested in a tile.launch}}
  tile.atomic add %v, %O[%n] : f32, memref<?xf32>
  return
}

// -----

func.func @f(%X: memref<?x?xf32>, %O: memref<?x?xf32>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {

    // expected-error @+1 {{source must be an on-chip buffer, got a global tensor}}
    tile.atomic_tile add %X to %O[%n, %n] : memref<?x?xf32> to memref<?x?xf32>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    %S = tile.alloc : memref<64x64xf32, #tile.scope<shared>>
    // expected-error @+1 {{target must be a global tensor, got a shared buffer}}
    tile.atomic_tile add %F to %S[%n, %n] : memref<64x64xf32, #tile.scope<fragment>> to memref<64x64xf32, #tile.scope<shared>>
  }
  return
}

// -----

func.func @f(%O: memref<?xf32>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{source rank (2) and target rank (1) differ}}
    tile.atomic_tile add %F to %O[%n] : memref<64x64xf32, #tile.scope<fragment>> to memref<?xf32>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf32>, %n: index, %v: f32) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{needs 2 start indices, got 1}}
    tile.atomic_tile add %F to %O[%n] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xf16>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xf32, #tile.scope<fragment>>
    // expected-error @+1 {{source element type 'f32' differs from target element type 'f16'}}
    tile.atomic_tile add %F to %O[%n, %n] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf16>
  }
  return
}

// -----

func.func @f(%O: memref<?x?xi16>, %n: index) {
  tile.launch blocks(%bx) in (%n) threads(128) {
    %F = tile.alloc : memref<64x64xi16, #tile.scope<fragment>>
    // expected-error @+1 {{atomics support f16, bf16, f32, f64, i32 and i64 elements, got 'i16'}}
    tile.atomic_tile min %F to %O[%n, %n] : memref<64x64xi16, #tile.scope<fragment>> to memref<?x?xi16>
  }
  return
}

// -----

func.func @f(%F: memref<64x64xf32, #tile.scope<fragment>>, %O: memref<?x?xf32>, %n: index) {
  // expected-error @+1 {{'tile.atomic_tile' op must be nested in a tile.launch}}
  tile.atomic_tile add %F to %O[%n, %n] : memref<64x64xf32, #tile.scope<fragment>> to memref<?x?xf32>
  return
}

// -----

func.func @alloc_in_parallel() {
  %c1 = arith.constant 1 : index
  tile.launch blocks(%bx) in (%c1) threads(32) {
    tile.parallel (%i) in [4] {
      // expected-error @+1 {{may not be nested in a tile.parallel}}
      %s = tile.alloc : memref<4xf32, #tile.scope<local>>
    }
  }
  return
}
