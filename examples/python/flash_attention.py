"""FlashAttention forward: O = softmax(Q K^T / sqrt(D)) V per (batch, head),
optionally causal, any sequence length S. TileLang's [B, S, H, D] layout:
each tile is read and written with a rank-reducing copy (Q[b, s0:s1, h, :]).

    python examples/python/flash_attention.py [S B H D]

Tile shape: the defaults (64-row query tiles, one warpgroup) run on sm_90a
at 0.85-0.93x of torch SDPA for D = 64 and 0.75-0.83x for D = 128 (H200,
the same program in [B, H, S, D] layout, docs/performance.md); for
D = 128 pass block_M=128, block_N=128, threads=256, num_stages=2
(0.91-0.99x).
"""
import sys

import numpy as np

import tile
import tile.language as T

B, S, H = T.symbolic("B, S, H")
D = T.const("D")


@tile.jit(out_idx=-1)
def flash_attention(Q: T.Tensor((B, S, H, D)), K: T.Tensor((B, S, H, D)), V: T.Tensor((B, S, H, D)),
                    O: T.Tensor((B, S, H, D)), is_causal=False, block_M=64, block_N=64,
                    num_stages=1, threads=128):
    scale = (1.0 / D) ** 0.5 * 1.44269504  # log2(e)
    dtype, accum = Q.dtype, T.float32
    with T.Kernel(T.ceildiv(S, block_M), H, B, threads=threads) as (bx, by, bz):
        Q_shared = T.alloc_shared((block_M, D), dtype)
        K_shared = T.alloc_shared((block_N, D), dtype)
        V_shared = T.alloc_shared((block_N, D), dtype)
        acc_s = T.alloc_fragment((block_M, block_N), accum)
        acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
        acc_o = T.alloc_fragment((block_M, D), accum)
        scores_max = T.alloc_fragment((block_M,), accum)
        scores_max_prev = T.alloc_fragment((block_M,), accum)
        scores_scale = T.alloc_fragment((block_M,), accum)
        scores_sum = T.alloc_fragment((block_M,), accum)
        logsum = T.alloc_fragment((block_M,), accum)

        T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
        T.fill(acc_o, 0)
        T.fill(logsum, 0)
        T.fill(scores_max, -T.infinity(accum))
        loop_range = T.ceildiv(S, block_N)
        if is_causal:
            loop_range = T.min(loop_range, T.ceildiv((bx + 1) * block_M, block_N))

        for k in T.Pipelined(loop_range, num_stages=num_stages):
            T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
            for i, j in T.Parallel(block_M, block_N):
                visible = k * block_N + j < S and (not is_causal or k * block_N + j <= bx * block_M + i)
                acc_s[i, j] = T.if_then_else(visible, 0, -T.infinity(accum))
            T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)

            T.copy(scores_max, scores_max_prev)
            T.reduce_max(acc_s, scores_max, dim=1, clear=False)
            for i in T.Parallel(block_M):
                scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
            T.reduce_sum(acc_s, scores_sum, dim=1)
            for i in T.Parallel(block_M):
                logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
            T.copy(acc_s, acc_s_cast)
            for i, j in T.Parallel(block_M, D):
                acc_o[i, j] *= scores_scale[i]

            T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
            T.gemm(acc_s_cast, V_shared, acc_o)

        for i, j in T.Parallel(block_M, D):
            acc_o[i, j] /= logsum[i]
        T.copy(acc_o, O[bz, bx * block_M:(bx + 1) * block_M, by, :])


def reference(q, k, v, is_causal=False):
    """q, k, v: [B, S, H, D] arrays; float64 attention."""
    s_len, d = q.shape[1], q.shape[-1]
    scores = np.einsum("bihd,bjhd->bhij", q.astype(np.float64), k.astype(np.float64)) / np.sqrt(d)
    if is_causal:
        scores = np.where(np.tril(np.ones((s_len, s_len), bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhij,bjhd->bihd", p / p.sum(axis=-1, keepdims=True), v.astype(np.float64))


def main(s_len=1000, b=2, h=4, d=64):
    q, k, v = (np.random.uniform(-1, 1, (b, s_len, h, d)).astype(np.float16) for _ in range(3))
    for causal in (False, True):
        o = flash_attention(q, k, v, is_causal=causal)
        np.testing.assert_allclose(o.astype(np.float32), reference(q, k, v, causal), rtol=2e-2, atol=2e-2)
    print(f"flash attention B={b} S={s_len} H={h} D={d}: ok (causal and not)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
