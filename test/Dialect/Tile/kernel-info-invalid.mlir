// RUN: tile-opt %s -split-input-file -verify-diagnostics

// One case per rule of the kernel description's verifiers and parsers.

// expected-error @+1 {{expected ','}}
func.func private @f() attributes {a = #tile.grid_expr<add(1)>}

// -----

// expected-error @+1 {{unknown grid op 'pow'}}
func.func private @f() attributes {a = #tile.grid_expr<pow(2, 3)>}

// -----

// expected-error @+1 {{a grid symbol needs a non-empty name}}
func.func private @f() attributes {a = #tile.grid_expr<add("", 1)>}

// -----

// expected-error @+1 {{grid scalar refers to parameter -1}}
func.func private @f() attributes {a = #tile.grid_expr<scalar(-1)>}

// -----

// expected-error @+1 {{a kernel parameter needs a non-empty name}}
func.func private @f() attributes {a = #tile.param<"" : f32>}

// -----

// expected-error @+1 {{scalars must be i32, i64, index, f32 or f64}}
func.func private @f() attributes {a = #tile.param<"x" : f16>}

// -----

// expected-error @+1 {{scalar parameter 'x' can have no dims, access, output or inplace}}
func.func private @f() attributes {a = #tile.param<"x" : f32, access = write>}

// -----

// expected-error @+1 {{tensor parameter 'x' must be a memref with the identity layout and no memory space}}
func.func private @f() attributes {a = #tile.param<"x" : memref<4xf32, #tile.scope<shared>>, dims = [""]>}

// -----

// expected-error @+1 {{tensor parameter 'x' has element type 'vector<4xf32>'; only integer and float elements have a dtype}}
func.func private @f() attributes {a = #tile.param<"x" : memref<4xvector<4xf32>>, dims = [""]>}

// -----

// expected-error @+1 {{tensor parameter 'x' has 1 dim names for rank 2}}
func.func private @f() attributes {a = #tile.param<"x" : memref<4x4xf32>, dims = [""]>}

// -----

// expected-error @+1 {{dynamic dim 0 of parameter 'x' needs a symbol name}}
func.func private @f() attributes {a = #tile.param<"x" : memref<?xf32>, dims = [""]>}

// -----

// expected-error @+1 {{parameter 'x' is declared inplace, but the kernel never writes it}}
func.func private @f() attributes {a = #tile.param<"x" : memref<4xf32>, dims = [""], inplace>}

// -----

// expected-error @+1 {{unknown kernel parameter field 'shape'}}
func.func private @f() attributes {a = #tile.param<"x" : memref<4xf32>, shape = [4]>}

// -----

// expected-error @+1 {{a tensor map has 1 to 5 dims, got 6}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [1, 1, 1, 1, 1, 1], element_strides = [1, 1, 1, 1, 1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map has 2 box dims but 1 element strides}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [64, 64], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map box dims must be in [1, 256], got 512}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [512], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map element strides must be in [1, 8], got 9}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [64], element_strides = [9], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map swizzle must be 0, 32, 64 or 128 bytes}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [64], element_strides = [1], interleave = 0, swizzle = 96, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map interleave must be 0, 16 or 32 bytes}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [64], element_strides = [1], interleave = 8, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map L2 promotion must be 0, 64, 128 or 256 bytes}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = f16, box = [64], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 32, oob_fill = zero>}

// -----

// expected-error @+1 {{tensor map element type 'index' is not an integer or float type}}
func.func private @f() attributes {a = #tile.tma<param = 0, type = index, box = [64], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}

// -----

// expected-error @+1 {{a kernel variant's block must be three positive sizes of at most 1024 threads in all}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [512, 4, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{a kernel variant's max_tiles must be >= 0}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, max_tiles = -1>}

// -----

// expected-error @+1 {{a kernel variant's split_k must be [param, dim, block_k, slice_bytes] with param, dim >= 0, block_k >= 1 and slice_bytes in [1, 2^30]}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, split_k = [0, 1]>}

// -----

// expected-error @+1 {{a kernel variant's split_k must be [param, dim, block_k, slice_bytes] with param, dim >= 0, block_k >= 1 and slice_bytes in [1, 2^30]}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, split_k = [0, 1, 0, 4]>}

// -----

// expected-error @+1 {{a kernel variant's split_k must be [param, dim, block_k, slice_bytes] with param, dim >= 0, block_k >= 1 and slice_bytes in [1, 2^30]}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, split_k = [0, 1, 64, 0]>}

// -----

// expected-error @+1 {{a kernel variant's max_rows must be [rows, param, ...] with rows >= 1 and at least one param >= 0}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, max_rows = [16]>}

// -----

// expected-error @+1 {{a kernel variant's max_rows must be [rows, param, ...] with rows >= 1 and at least one param >= 0}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, max_rows = [0, 1]>}

// -----

// expected-error @+1 {{a kernel variant's max_rows must be [rows, param, ...] with rows >= 1 and at least one param >= 0}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, max_rows = [16, -1]>}

// -----

// expected-error @+1 {{a kernel variant's workspace_bytes must be in [0, 2^40]}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, workspace_bytes = -8>}

// -----

// expected-error @+1 {{a kernel variant's pack and pack_elem_bytes go together, with pack_elem_bytes 1, 2, 4 or 8}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "p", pack_elem_bytes = 3>}

// -----

// expected-error @+1 {{a kernel variant's pack and pack_elem_bytes go together, with pack_elem_bytes 1, 2, 4 or 8}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "p">}

// -----

// expected-error @+1 {{a kernel variant's pack kernel must be a non-empty name other than the variant's kernel}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "k", pack_elem_bytes = 2>}

// -----

// expected-error @+1 {{a kernel variant's pack_operands must be 1 or 2, and 1 without a pack kernel}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "p", pack_elem_bytes = 2, pack_operands = 3>}

// -----

// expected-error @+1 {{a kernel variant's pack_operands must be 1 or 2, and 1 without a pack kernel}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, pack_operands = 2>}

// -----

// expected-error @+1 {{a kernel variant with a pack kernel needs tma entries}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, pack = "p", pack_elem_bytes = 2>}

// -----

// expected-error @+1 {{a kernel variant's shared_bytes must be in [0, 2^30]}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = -4>}

// -----

// expected-error @+1 {{a kernel variant needs a kind, a chip and a kernel name}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "", block = [32, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{unknown kernel variant field 'stages'}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, stages = 3>}

// -----

// expected-error @+1 {{a kernel description needs a name}}
func.func private @f() attributes {a = #tile.kernel_info<"", target = "cpu", chip = "", features = "", params = [], grid = [1, 1, 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{two kernel parameters are named 'x' (set distinct tile.name attributes)}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [<"x" : f32>, <"x" : i32>], grid = [1, 1, 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{a kernel description has three grid extents, got 2}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [], grid = [1, 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{grid extent 0 uses symbol 'M', which no tensor dim binds}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [<"x" : memref<?xf32>, dims = ["N"]>], grid = ["M", 1, 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{grid extent 1 uses parameter #0, which is not an integer scalar}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [<"x" : f32>], grid = [1, scalar(0), 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{grid extent 0 uses parameter #3, which is not an integer scalar}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [<"x" : i32>], grid = [add(scalar(3), 1), 1, 1], block = [1, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{a kernel description's block must be three positive sizes}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [], grid = [1, 1, 1], block = [0, 1, 1], shared_bytes = 0>}

// -----

// expected-error @+1 {{a kernel description's shared_bytes must be >= 0}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cpu", chip = "", features = "", params = [], grid = [1, 1, 1], block = [1, 1, 1], shared_bytes = -1>}

// -----

// expected-error @+1 {{variant 'k_sm90_nr' limits the rows of parameter #1, which is not a tensor}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cuda", chip = "sm_90a", features = "", params = [<"A" : memref<?x?xf16>, dims = ["M", "K"]>, <"alpha" : f32>], grid = [1, 1, 1], block = [128, 1, 1], shared_bytes = 0, variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_nr", block = [384, 1, 1], shared_bytes = 0, max_rows = [16, 0, 1]>]>}

// -----

// expected-error @+1 {{variant 'k_sm90' maps parameter #1, which is not a tensor of the map's rank and element size}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cuda", chip = "sm_90a", features = "", params = [<"A" : memref<?x?xf16>, dims = ["M", "K"]>, <"alpha" : f32>], grid = [1, 1, 1], block = [128, 1, 1], shared_bytes = 0, variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 0, tma = [<param = 1, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>]>]>}

// -----

// expected-error @+1 {{variant 'k_sm90' maps parameter #0, which is not a tensor of the map's rank and element size}}
func.func private @f() attributes {a = #tile.kernel_info<"k", target = "cuda", chip = "sm_90a", features = "", params = [<"A" : memref<?x?xf32>, dims = ["M", "K"]>], grid = [1, 1, 1], block = [128, 1, 1], shared_bytes = 0, variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 0, tma = [<param = 0, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>]>]>}

// -----

// expected-error @+1 {{'tile.kernel_info' must be a #tile.kernel_info on a module}}
module attributes {tile.kernel_info = "{}"} {
}

// -----

// expected-error @+1 {{a kernel variant's coarse_speedup must be in [100, 10000] and come with coarsen}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, coarse_speedup = 125>}

// -----

// expected-error @+1 {{a kernel variant's coarse_speedup must be in [100, 10000] and come with coarsen}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, coarsen = [2, 1, 1], coarse_speedup = 99>}

// -----

// expected-error @+1 {{a kernel variant's split must be in [2, 64] and come with coarsen and grid = sms}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, grid = sms, split = 2>}

// -----

// expected-error @+1 {{a kernel variant's split must be in [2, 64] and come with coarsen and grid = sms}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, coarsen = [1, 1, 1], split = 2>}

// -----

// expected-error @+1 {{a kernel variant's split must be in [2, 64] and come with coarsen and grid = sms}}
func.func private @f() attributes {a = #tile.variant<"k", chip = "", kernel = "k", block = [32, 1, 1], shared_bytes = 0, grid = sms, coarsen = [1, 1, 1], split = 65>}
