// RUN: tile-opt %s -split-input-file | FileCheck %s
// RUN: tile-opt %s -split-input-file | tile-opt -split-input-file | FileCheck %s

// The typed kernel description and its parts print and parse back
// unchanged; optional fields (access = read, no output/inplace, grid =
// launch, max_tiles = 0, no schedule, no variants) are omitted.

// CHECK-LABEL: module attributes
// CHECK-SAME: tile.kernel_info = #tile.kernel_info<"add", target = "cpu", chip = "", features = "",
// CHECK-SAME: params = [<"A" : memref<?xf32>, dims = ["N"]>, <"C" : memref<?xf32>, dims = ["N"], access = write, output>, <"n" : i32>],
// CHECK-SAME: grid = [ceildivu("N", scalar(2)), 1, 1], block = [128, 1, 1], shared_bytes = 0>
module attributes {tile.kernel_info = #tile.kernel_info<"add", target = "cpu", chip = "", features = "", params = [<"A" : memref<?xf32>, dims = ["N"], access = read>, <"C" : memref<?xf32>, dims = ["N"], access = write, output>, <"n" : i32>], grid = [ceildivu("N", scalar(2)), 1, 1], block = [128, 1, 1], shared_bytes = 0>} {
}

// -----

// A static dim without a name binds no symbol; inplace on a written param.
// CHECK-LABEL: func.func private @params
// CHECK-SAME: a = #tile.param<"X" : memref<?x64xbf16>, dims = ["M", ""], access = readwrite, inplace>
// CHECK-SAME: b = #tile.param<"s" : memref<f16>>
// CHECK-SAME: c = #tile.param<"alpha" : f64>
func.func private @params() attributes {
  a = #tile.param<"X" : memref<?x64xbf16>, dims = ["M", ""], access = readwrite, inplace>,
  b = #tile.param<"s" : memref<f16>>,
  c = #tile.param<"alpha" : f64>}

// -----

// CHECK-LABEL: func.func private @grid_exprs
// CHECK-SAME: a = #tile.grid_expr<-3>
// CHECK-SAME: b = #tile.grid_expr<maxs(mul("M", 2), minu(scalar(0), remu(sub("K", 1), rems(divs(4, 2), 3))))>
// CHECK-SAME: c = #tile.grid_expr<ceildivs(add(divu("M", 1), maxu(1, mins(2, 3))), 7)>
func.func private @grid_exprs() attributes {
  a = #tile.grid_expr<-3>,
  b = #tile.grid_expr<maxs(mul("M", 2), minu(scalar(0), remu(sub("K", 1), rems(divs(4, 2), 3))))>,
  c = #tile.grid_expr<ceildivs(add(divu("M", 1), maxu(1, mins(2, 3))), 7)>}

// -----

// CHECK-LABEL: func.func private @variant
// CHECK-SAME: a = #tile.tma<param = 1, type = bf16, box = [64, 128], element_strides = [1, 1], interleave = 16, swizzle = 64, l2_promotion = 0, oob_fill = nan>
// CHECK-SAME: b = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 1024>
// CHECK-SAME: c = #tile.variant<"x", chip = "", kernel = "k2", block = [32, 2, 1], shared_bytes = 0, grid = sms, max_tiles = 8, schedule = "pingpong", tma = [<param = 0, type = f16, box = [64], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>]>
func.func private @variant() attributes {
  a = #tile.tma<param = 1, type = bf16, box = [64, 128], element_strides = [1, 1], interleave = 16, swizzle = 64, l2_promotion = 0, oob_fill = nan>,
  b = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 1024>,
  c = #tile.variant<"x", chip = "", kernel = "k2", block = [32, 2, 1], shared_bytes = 0, grid = sms, max_tiles = 8, schedule = "pingpong", tma = [<param = 0, type = f16, box = [64], element_strides = [1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>]>}

// -----

// An optional map (the TMA-store epilogue's C): printed only when set.
// CHECK-LABEL: func.func private @optional_map
// CHECK-SAME: a = #tile.tma<param = 2, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero, optional = true>
// CHECK-SAME: b = #tile.tma<param = 2, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>}
func.func private @optional_map() attributes {
  a = #tile.tma<param = 2, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero, optional = true>,
  b = #tile.tma<param = 2, type = f16, box = [64, 64], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero, optional = false>}

// -----

// A split-K variant: split_k = [param, dim, block_k, slice_bytes] (its
// workspace per tile and slice).
// CHECK-LABEL: func.func private @splitk_variant
// CHECK-SAME: a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_sk", block = [384, 1, 1], shared_bytes = 1024, max_tiles = 66, schedule = "splitk", split_k = [0, 1, 64, 65540]>
func.func private @splitk_variant() attributes {
  a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_sk", block = [384, 1, 1], shared_bytes = 1024, max_tiles = 66, schedule = "splitk", split_k = [0, 1, 64, 65540]>}

// -----

// A narrow variant: max_rows = [rows, params whose dim 0 is limited].
// CHECK-LABEL: func.func private @narrow_variant
// CHECK-SAME: a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_nr", block = [384, 1, 1], shared_bytes = 1024, schedule = "narrow", split_k = [0, 1, 64, 8192], max_rows = [16, 0, 2]>
func.func private @narrow_variant() attributes {
  a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_nr", block = [384, 1, 1], shared_bytes = 1024, schedule = "narrow", split_k = [0, 1, 64, 8192], max_rows = [16, 0, 2]>}

// -----

// A variant naming its operand repack kernel.
// CHECK-LABEL: func.func private @pack_variant
// CHECK-SAME: tma = [<param = 0, {{.*}}>], pack = "k_pack_b2", pack_elem_bytes = 2>
// CHECK-SAME: b = #tile.variant<{{.*}}pack = "k_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>
func.func private @pack_variant() attributes {
  a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 1024, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "k_pack_b2", pack_elem_bytes = 2>,
  b = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90", block = [384, 1, 1], shared_bytes = 1024, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>], pack = "k_pack2_b2", pack_elem_bytes = 2, pack_operands = 2>}

// -----

// A description with a variant and no parameters at all.
// CHECK-LABEL: module attributes
// CHECK-SAME: #tile.kernel_info<"gemm", target = "cuda", chip = "sm_90a", features = "+ptx80", params = [<"A" : memref<?x?xf16>, dims = ["M", "K"]>],
// CHECK-SAME: variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 164864, grid = sms, tma = [<param = 0, type = f16,
// CHECK-LABEL: module attributes
// CHECK-SAME: #tile.kernel_info<"empty", target = "cpu", chip = "", features = "", params = [], grid = [1, 1, 1], block = [1, 1, 1], shared_bytes = 0>
module attributes {tile.kernel_info = #tile.kernel_info<"gemm", target = "cuda", chip = "sm_90a", features = "+ptx80", params = [<"A" : memref<?x?xf16>, dims = ["M", "K"]>], grid = [ceildivu("M", 128), 1, 1], block = [128, 1, 1], shared_bytes = 49152, variants = [<"sm90_tma_wgmma", chip = "sm_90a", kernel = "gemm_kernel_sm90", block = [384, 1, 1], shared_bytes = 164864, grid = sms, tma = [<param = 0, type = f16, box = [64, 128], element_strides = [1, 1], interleave = 0, swizzle = 128, l2_promotion = 256, oob_fill = zero>]>]>} {
}
module attributes {tile.kernel_info = #tile.kernel_info<"empty", target = "cpu", chip = "", features = "", params = [], grid = [1, 1, 1], block = [1, 1, 1], shared_bytes = 0>} {
}

// -----

// A coarse-tile variant: 4 x 2 launch blocks per CTA tile, the compiler's
// speedup estimate for the runtime's cost model.
// CHECK-LABEL: func.func private @coarse_variant
// CHECK-SAME: a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_wide", block = [384, 1, 1], shared_bytes = 1024, grid = sms, schedule = "wide", coarsen = [4, 2, 1], coarse_speedup = 316>
func.func private @coarse_variant() attributes {
  a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_wide", block = [384, 1, 1], shared_bytes = 1024, grid = sms, schedule = "wide", coarsen = [4, 2, 1], coarse_speedup = 316>}

// A split-tile variant: two 128-row CTA tiles per launch block.
// CHECK-LABEL: func.func private @split_variant
// CHECK-SAME: a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_split128", block = [384, 1, 1], shared_bytes = 1024, grid = sms, schedule = "split", coarsen = [1, 1, 1], coarse_speedup = 100, split = 2>
func.func private @split_variant() attributes {
  a = #tile.variant<"sm90_tma_wgmma", chip = "sm_90a", kernel = "k_sm90_split128", block = [384, 1, 1], shared_bytes = 1024, grid = sms, schedule = "split", coarsen = [1, 1, 1], coarse_speedup = 100, split = 2>}
