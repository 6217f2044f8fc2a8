"""Row softmax, Y = softmax(X, axis=1), for any M x N (N dynamic too).
Two passes over column tiles (online softmax): the first keeps a running
log2-sum-exp per row, the second writes exp2(x * log2(e) - lse). Columns past
N are masked to -inf, so the zero padding of tail tiles never counts.

    python examples/python/softmax.py [M N]
"""
import sys

import numpy as np

import tile
import tile.language as T

M, N = T.symbolic("M, N")


@tile.jit(out_idx=-1)
def softmax(X: T.Tensor((M, N)), Y: T.Tensor((M, N)), block_M=4, block_N=256):
    scale = 1.44269504  # log2(e)
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bm:
        x = T.alloc_fragment((block_M, block_N), T.float32)
        lse = T.alloc_fragment((block_M,), T.float32)
        row_max = T.alloc_fragment((block_M,), T.float32)
        row_sum = T.alloc_fragment((block_M,), T.float32)
        T.fill(lse, -T.infinity(T.float32))
        for t in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bm * block_M, t * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.if_then_else(t * block_N + j < N, x[i, j] * scale, -T.infinity(T.float32))
            T.reduce_max(x, row_max, dim=1)
            for i in T.Parallel(block_M):
                row_max[i] = T.max(row_max[i], lse[i])
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.exp2(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1)
            for i in T.Parallel(block_M):
                lse[i] = row_max[i] + T.log2(T.exp2(lse[i] - row_max[i]) + row_sum[i])
        for t in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bm * block_M, t * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.exp2(x[i, j] * scale - lse[i])
            T.copy(x, Y[bm * block_M, t * block_N])


def main(m=1000, n=3000):
    x = np.random.uniform(-4, 4, (m, n)).astype(np.float32)
    y = softmax(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)
    print(f"softmax {m}x{n}: ok")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
