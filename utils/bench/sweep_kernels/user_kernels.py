"""Memory-bound kernels written the way a TileLang user writes them from
docs/python.md (two passes over column tiles, per-iteration reductions,
bf16 tensors with f32 math), for utils/bench/sweep.py: the compiler has to
make these fast as written, not only the hand-tuned examples.

    layer_norm    Y = (X - mean) * rstd * W + B; a first pass accumulates the
                  row sums and sums of squares tile by tile, a second pass
                  normalizes (X read twice), bf16 in and out;
    add_rms_norm  H = X + R (written), Y = H * rsqrt(mean(H^2) + eps) * W, the
                  fused residual add of LLM blocks, bf16;
    row_argmax    I[i] = the first j with X[i, j] = max_j X[i, j], f32 in,
                  int32 out (a max, then a min over the candidate indices);
    cross_entropy Loss[i] = logsumexp(X[i, :]) - X[i, L[i]] over bf16
                  logits, one pass with an online max (a vocabulary of
                  tens of thousands of columns).
"""
import tile.language as T

M, N = T.symbolic("M, N")


@T.prim_func
def layer_norm(X: T.Tensor((M, N), T.bfloat16), W: T.Tensor((N,), T.bfloat16),
               Bias: T.Tensor((N,), T.bfloat16), Y: T.Tensor((M, N), T.bfloat16),
               eps: T.float32):
    block_M, block_N = 4, 512
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), T.float32)
        xsq = T.alloc_fragment((block_M, block_N), T.float32)
        y = T.alloc_fragment((block_M, block_N), T.float32)
        w = T.alloc_fragment((block_N,), T.float32)
        b = T.alloc_fragment((block_N,), T.float32)
        s = T.alloc_fragment((block_M,), T.float32)
        ss = T.alloc_fragment((block_M,), T.float32)
        mean = T.alloc_fragment((block_M,), T.float32)
        rstd = T.alloc_fragment((block_M,), T.float32)
        T.clear(s)
        T.clear(ss)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bx * block_M, k * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                xsq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x, s, dim=1, clear=False)
            T.reduce_sum(xsq, ss, dim=1, clear=False)
        for i in T.Parallel(block_M):
            mean[i] = s[i] / N
            rstd[i] = T.rsqrt(ss[i] / N - mean[i] * mean[i] + eps)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bx * block_M, k * block_N], y)
            T.copy(W[k * block_N], w)
            T.copy(Bias[k * block_N], b)
            for i, j in T.Parallel(block_M, block_N):
                y[i, j] = (y[i, j] - mean[i]) * rstd[i] * w[j] + b[j]
            T.copy(y, Y[bx * block_M, k * block_N])


@T.prim_func
def add_rms_norm(X: T.Tensor((M, N), T.bfloat16), R: T.Tensor((M, N), T.bfloat16),
                 W: T.Tensor((N,), T.bfloat16), H: T.Tensor((M, N), T.bfloat16),
                 Y: T.Tensor((M, N), T.bfloat16), eps: T.float32):
    block_M, block_N = 4, 512
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), T.float32)
        r = T.alloc_fragment((block_M, block_N), T.float32)
        sq = T.alloc_fragment((block_M, block_N), T.float32)
        h = T.alloc_fragment((block_M, block_N), T.float32)
        w = T.alloc_fragment((block_N,), T.float32)
        ss = T.alloc_fragment((block_M,), T.float32)
        T.clear(ss)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bx * block_M, k * block_N], x)
            T.copy(R[bx * block_M, k * block_N], r)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = x[i, j] + r[i, j]
                sq[i, j] = x[i, j] * x[i, j]
            T.copy(x, H[bx * block_M, k * block_N])
            T.reduce_sum(sq, ss, dim=1, clear=False)
        for i in T.Parallel(block_M):
            ss[i] = T.rsqrt(ss[i] / N + eps)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(H[bx * block_M, k * block_N], h)
            T.copy(W[k * block_N], w)
            for i, j in T.Parallel(block_M, block_N):
                h[i, j] = h[i, j] * ss[i] * w[j]
            T.copy(h, Y[bx * block_M, k * block_N])


@T.prim_func
def row_argmax(X: T.Tensor((M, N), T.float32), I: T.Tensor((M,), T.int32)):
    block_M, block_N = 4, 512
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), T.float32)
        cand = T.alloc_fragment((block_M, block_N), T.float32)
        mx = T.alloc_fragment((block_M,), T.float32)
        tmax = T.alloc_fragment((block_M,), T.float32)
        tidx = T.alloc_fragment((block_M,), T.float32)
        best = T.alloc_fragment((block_M,), T.float32)
        bi = T.alloc_fragment((block_M,), T.int32)
        T.fill(mx, -T.infinity(T.float32))
        T.fill(best, 0)
        for k in T.serial(T.ceildiv(N, block_N)):
            T.copy(X[bx * block_M, k * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.if_then_else(k * block_N + j < N, x[i, j],
                                         -T.infinity(T.float32))
            T.reduce_max(x, tmax, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                cand[i, j] = T.if_then_else(x[i, j] == tmax[i],
                                            T.cast(k * block_N + j, T.float32), 3.0e38)
            T.reduce_min(cand, tidx, dim=1)
            for i in T.Parallel(block_M):
                if tmax[i] > mx[i]:
                    mx[i] = tmax[i]
                    best[i] = tidx[i]
        for i in T.Parallel(block_M):
            bi[i] = T.cast(best[i], T.int32)
        T.copy(bi, I[bx * block_M])


@T.prim_func
def cross_entropy(X: T.Tensor((M, N), T.bfloat16), L: T.Tensor((M,), T.int32),
                  Loss: T.Tensor((M,), T.float32)):
    block_M, block_N = 4, 512
    with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
        x = T.alloc_fragment((block_M, block_N), T.float32)
        m = T.alloc_fragment((block_M,), T.float32)
        s = T.alloc_fragment((block_M,), T.float32)
        tmax = T.alloc_fragment((block_M,), T.float32)
        tsum = T.alloc_fragment((block_M,), T.float32)
        loss = T.alloc_fragment((block_M,), T.float32)
        T.fill(m, -T.infinity(T.float32))
        T.clear(s)
        for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
            T.copy(X[bx * block_M, k * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.if_then_else(k * block_N + j < N, x[i, j],
                                         -T.infinity(T.float32))
            T.reduce_max(x, tmax, dim=1)
            for i in T.Parallel(block_M):
                tmax[i] = T.max(tmax[i], m[i])
                s[i] = s[i] * T.exp(m[i] - tmax[i])
                m[i] = tmax[i]
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(x, tsum, dim=1)
            for i in T.Parallel(block_M):
                s[i] = s[i] + tsum[i]
        for i in T.Parallel(block_M):
            row = bx * block_M + i
            picked = T.cast(X[row, L[row]], T.float32) if row < M else 0.0
            loss[i] = T.log(s[i]) + m[i] - picked
        T.copy(loss, Loss[bx * block_M])


def sources():
    """name -> MLIR text (the sweep passes every argument, outputs too)."""
    return {"user_layer_norm": layer_norm.script(),
            "user_add_rms_norm": add_rms_norm.script(),
            "user_row_argmax": row_argmax.script(),
            "user_cross_entropy": cross_entropy.script()}
