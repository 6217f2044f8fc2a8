"""tile.language: write tile kernels in Python (TileLang-style).

    import tile
    import tile.language as T

    M, N, K = T.symbolic("M"), T.symbolic("N"), T.symbolic("K")

    @tile.jit(out_idx=-1)
    def matmul(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
               C: T.Tensor((M, N), "float16"), block_M=128, block_N=128, block_K=32):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block_M, bx * block_N])

    c = matmul(a, b)

The builder prints tile-dialect MLIR itself (no MLIR Python bindings); the
result is compiled by tilec through tile.compile. See docs/python.md,
"Writing kernels in Python".
"""

from .buffer import Buffer, ConstDim, Region, SymDim, Tensor, const, dynamic, symbolic
from .control import Kernel, Parallel, Pipelined, Serial, serial, unroll
from .dtypes import (DType, bfloat16, dtype, float8_e4m3fn, float8_e5m2,
                     float16, float32, float64, int8, int16, int32, int64)
from .dtypes import boolean as bool  # noqa: A001 - T.bool, as in TileLang
from .errors import TileLangError
from .expr import cast, ceildiv, if_then_else
from .expr import max_ as max  # noqa: A001
from .expr import min_ as min  # noqa: A001
from .math_fns import (ceil, cos, erf, exp, exp2, fma, floor, infinity, log,
                       log1p, log2, log10, max_value, min_value, rsqrt,
                       sigmoid, sin, sqrt, tan, tanh, trunc)
from .math_fns import round_even as round  # noqa: A001 - half to even
from .ops import (alloc_fragment, alloc_local, alloc_shared, atomic_add,
                  atomic_max, atomic_min, clear, copy, fill, gemm, reduce,
                  reduce_absmax, reduce_abssum, reduce_max, reduce_min,
                  reduce_sum, use_swizzle)
from .prim_func import PrimFunc, macro, prim_func

float = float32  # noqa: A001 - TileLang's "float" is float32
half = float16
double = float64
e4m3_float8 = float8_e4m3fn
e5m2_float8 = float8_e5m2


def Cast(dtype, value):  # noqa: N802 - TileLang's spelling
    """T.Cast(dtype, x) == T.cast(x, dtype)."""
    return cast(value, dtype)


def abs(x):  # noqa: A001
    """|x| (math.absf / math.absi)."""
    from .expr import absolute
    return absolute(x)


def pow(x, y):  # noqa: A001
    """x ** y (math.powf; small constant integer exponents multiply)."""
    from .expr import power
    return power(x, y)


__all__ = [n for n in dir() if not n.startswith("_")]
