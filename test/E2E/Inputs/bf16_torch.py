"""What docs/precision.md says `txc --precision=bf16` computes, in PyTorch
float64, for the E2E twins of bf16 specs:

- `linear` (tx.linear): input and weight rounded to bf16, f32 accumulation,
  bias and result f32; backward rounds dy to bf16 for dX and dW, the bias
  gradient sums the unrounded dy.
- `attention` (the fused tx.attention): Q, K, V and P rounded for the
  block products, backward dO and dS too. Forward, P is the online
  softmax's unnormalised exp(S - max) (one key block at these lengths),
  the row's sum divides after; backward, P = exp(S - lse). Softmax, masks,
  D (rowsum(P . dP) where the kernel takes it so, rowsum(dO . O)
  otherwise) and dS = P (dP - D) unrounded; a query row whose keys are all
  masked is computed whole without rounding, as the kernel does.

Everything else in a twin stays float64. Rounding is f32's nearest even
bf16, as the casts do. Checked against txrt_attention_{fwd,bwd}_bf16 called
directly (1e-7 of each output's largest magnitude)."""
import torch


def bf16(x):
    """x rounded as the executable rounds its f32 value: to f32, then to
    bf16 (nearest even), back to float64."""
    return x.float().bfloat16().double()


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        xr, wr = bf16(x), bf16(weight)
        ctx.save_for_backward(xr, wr)
        ctx.has_bias = bias is not None
        y = xr @ wr.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, dy):
        xr, wr = ctx.saved_tensors
        dyr = bf16(dy)
        dx = dyr @ wr
        dw = dyr.reshape(-1, dyr.shape[-1]).T @ xr.reshape(-1, xr.shape[-1])
        db = dy.reshape(-1, dy.shape[-1]).sum(0) if ctx.has_bias else None
        return dx, dw, db


def linear(x, weight, bias=None):
    """F.linear with --precision=bf16's rounding (weight [out, in])."""
    return _Linear.apply(x, weight, bias)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, keep, scale, fill):
        # rows: 1 where the query row has a visible key (bf16 products).
        rows = keep.expand(q.shape[:-1] + (k.shape[-2],)).any(-1, keepdim=True)
        rows = rows.to(q.dtype)
        s = scale * (rows * (bf16(q) @ bf16(k).transpose(-1, -2))
                     + (1 - rows) * (q @ k.transpose(-1, -2)))
        s = s.masked_fill(~keep, fill)
        # The kernel's online softmax: P V on the unnormalised exp(S - max)
        # (one key block at these lengths), divided by the row's sum after.
        e = (s - s.amax(-1, keepdim=True)).exp()
        l = e.sum(-1, keepdim=True)
        p = e / l
        o = rows * (bf16(e) @ bf16(v)) / l + (1 - rows) * (p @ v)
        ctx.save_for_backward(q, k, v, p, o, rows)
        ctx.scale = scale
        ctx.keep = keep
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, p, o, rows = ctx.saved_tensors
        scale = ctx.scale
        fp = 1 - rows
        dp = rows * (bf16(do) @ bf16(v).transpose(-1, -2)) + fp * (do @ v.transpose(-1, -2))
        dv = bf16(rows * p).transpose(-1, -2) @ bf16(do) + (fp * p).transpose(-1, -2) @ do
        # D = rowsum(dO . O); where no row of the (batch, head) is computed
        # whole (short rows: one key block), the kernel takes it as
        # rowsum(P . dP) from the bf16 dP it has, which is the same sum.
        whole = fp.amax(-2, keepdim=True)
        d = whole * (do * o).sum(-1, keepdim=True) + (1 - whole) * (p * dp).sum(-1, keepdim=True)
        # Masked scores are the fill: no gradient to Q or K.
        ds = (p * (dp - d)).masked_fill(~ctx.keep, 0.0)
        dk = scale * (bf16(rows * ds).transpose(-1, -2) @ bf16(q)
                      + (fp * ds).transpose(-1, -2) @ q)
        dq = scale * (rows * (bf16(ds) @ bf16(k)) + fp * (ds @ k))
        return _reduce_to(dq, q), _reduce_to(dk, k), _reduce_to(dv, v), None, None, None


def _reduce_to(g, x):
    """Sums g over the dimensions x was broadcast along (GQA's shared heads
    are passed expanded)."""
    while g.dim() > x.dim():
        g = g.sum(0)
    for i, n in enumerate(x.shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(i, keepdim=True)
    return g


def attention(q, k, v, keep, scale, fill=-1e9):
    """softmax(scale Q K^T masked_fill(~keep, fill)) V as the bf16 fused
    attention computes it; q, k, v [B, H, T, d_k], keep broadcastable to
    [B, H, Tq, Tk]."""
    return _Attention.apply(q, k, v, keep, scale, fill)
