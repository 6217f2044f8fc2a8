"""RMS norm: B = A * rsqrt(mean(A^2, axis=1) + eps), any M x N.
A first pass over column tiles accumulates the row sums of squares (tile
padding adds zeros), a second pass scales and writes each tile.

    python examples/python/rms_norm.py [M N]
"""
import sys

import numpy as np

import tile
import tile.language as T

M, N = T.symbolic("M, N")


@tile.jit(out_idx=-1)
def rms_norm(A: T.Tensor((M, N)), B: T.Tensor((M, N)), block_M=4, block_N=512, eps=1e-6):
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        # One fragment per pass: each pass's loads of the next column tile
        # are issued before the current one's math (num_stages=2 doubles
        # each fragment in registers), which needs the fragment to be that
        # loop's own.
        a = T.alloc_fragment((block_M, block_N), T.float32)
        b = T.alloc_fragment((block_M, block_N), T.float32)
        rms = T.alloc_fragment((block_M,), T.float32)
        T.clear(rms)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(A[bx * block_M, k * block_N], a)
            for i, j in T.Parallel(block_M, block_N):
                a[i, j] = a[i, j] * a[i, j]
            T.reduce_sum(a, rms, dim=1, clear=False)
        for i in T.Parallel(block_M):
            rms[i] = T.rsqrt(rms[i] / N + eps)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(A[bx * block_M, k * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                b[i, j] *= rms[i]
            T.copy(b, B[bx * block_M, k * block_N])


def main(m=1000, n=3000):
    a = np.random.uniform(-1, 1, (m, n)).astype(np.float32)
    b = rms_norm(a)
    ref = a / np.sqrt((a.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(b, ref, rtol=1e-4, atol=1e-5)
    print(f"rms_norm {m}x{n}: ok")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
