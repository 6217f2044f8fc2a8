"""GEMM with a fused epilogue: C = relu(A @ B + bias), any M, N, K.
The bias tile is staged in shared memory once per block; the epilogue runs
on the f32 accumulator before the (converting) copy out.

    python examples/python/gemm_epilogue.py [M N K]
"""
import sys

import numpy as np

import tile
import tile.language as T

M, N, K = T.symbolic("M, N, K")


@tile.jit(out_idx=-1)
def matmul_bias_relu(A: T.Tensor((M, K)), B: T.Tensor((K, N)), Bias: T.Tensor((N,)),
                     C: T.Tensor((M, N)), block_M=128, block_N=128, block_K=32, num_stages=3):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), A.dtype)
        B_shared = T.alloc_shared((block_K, block_N), B.dtype)
        bias = T.alloc_shared((block_N,), Bias.dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(Bias[bx * block_N], bias)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j] + bias[j], 0)
        T.copy(C_local, C[by * block_M, bx * block_N])


def main(m=1000, n=900, k=700):
    a = np.random.uniform(-1, 1, (m, k)).astype(np.float16)
    b = np.random.uniform(-1, 1, (k, n)).astype(np.float16)
    bias = np.random.uniform(-1, 1, (n,)).astype(np.float16)
    c = matmul_bias_relu(a, b, bias)
    ref = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias.astype(np.float32), 0)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    print(f"gemm + bias + relu {m}x{n}x{k}: ok")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
