"""Batched GEMM: C[b] = A[b] @ B[b] for any batch, M, N, K, as TileLang
writes it: the tile starts index the batch with a block index
(`A[bz, by * block_M, k * block_K]`), which drops that dim of the copy.
On sm_90a the compiler also builds the TMA + wgmma variants, with
tensor maps over the 3-D tensors.

    python examples/python/batched_gemm.py [BATCH M N K]
"""
import sys

import numpy as np

import tile
import tile.language as T

Bt, M, N, K = T.symbolic("Bt, M, N, K")


@tile.jit(out_idx=-1)
def bmm(A: T.Tensor((Bt, M, K)), B: T.Tensor((Bt, K, N)), C: T.Tensor((Bt, M, N)),
        block_M=128, block_N=128, block_K=32, num_stages=3, threads=128):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), Bt,
                  threads=threads) as (bx, by, bz):
        A_shared = T.alloc_shared((block_M, block_K), A.dtype)
        B_shared = T.alloc_shared((block_K, block_N), B.dtype)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[bz, by * block_M, k * block_K], A_shared)
            T.copy(B[bz, k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[bz, by * block_M, bx * block_N])


def main(batch=3, m=200, n=90, k=70):
    a = np.random.uniform(-1, 1, (batch, m, k)).astype(np.float16)
    b = np.random.uniform(-1, 1, (batch, k, n)).astype(np.float16)
    c = bmm(a, b)
    ref = np.einsum("bmk,bkn->bmn", a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    print(f"batched gemm {batch}x{m}x{n}x{k}: ok")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
