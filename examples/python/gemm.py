"""GEMM: C = A @ B for any M, N, K (tails need no masking: tile copies read
zeros past the edges and drop writes there). f16/bf16 in, f32 accumulation,
the output in the input dtype. On sm_90a the compiler also builds a
TMA + wgmma variant of this exact kernel.

    python examples/python/gemm.py [M N K]
"""
import sys

import numpy as np

import tile
import tile.language as T

M, N, K = T.symbolic("M, N, K")


@tile.jit(out_idx=-1)
def matmul(A: T.Tensor((M, K)), B: T.Tensor((K, N)), C: T.Tensor((M, N)),
           block_M=128, block_N=128, block_K=32, num_stages=3, threads=128):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), A.dtype)
        B_shared = T.alloc_shared((block_K, block_N), B.dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.use_swizzle(panel_size=8)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])


def main(m=1000, n=900, k=700):
    a = np.random.uniform(-1, 1, (m, k)).astype(np.float16)
    b = np.random.uniform(-1, 1, (k, n)).astype(np.float16)
    c = matmul(a, b)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    print(f"gemm {m}x{n}x{k}: ok; {matmul.compile(a, b).get_profiler(M=m, N=n, K=k).do_bench():.3f} ms")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
