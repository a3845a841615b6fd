"""Scaled dot-product attention in the flash-attention form (online softmax with exp2)."""

import math

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_M = Symbol("BLOCK_M", constexpr=True)
BLOCK_N = Symbol("BLOCK_N", constexpr=True)


def _query_rows(tensor):
    arranged = tensor.tile((1, 1, BLOCK_M, -1))
    arranged.dtype = arranged.dtype.squeeze((0, 1))
    return arranged


def _key_blocks(tensor, queries):
    arranged = tensor.tile((1, 1, BLOCK_N, -1)).tile((1, 1, -1, -1))
    arranged = arranged.expand((-1, -1, queries.shape[-2], -1))
    arranged.dtype = arranged.dtype.squeeze((0, 1, 3))
    arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))
    return arranged


def arrangement(q, k, v, scale, is_causal, o):
    queries = _query_rows(q)
    return queries, _key_blocks(k, queries), _key_blocks(v, queries), scale, is_causal, _query_rows(o)


def flash_attention(q, k, v, scale, is_causal):
    # the rows' outputs and, in exp2's units, their maximum scores
    q_scaled = (q * (scale * 1.44269504089)).to(q.dtype)  # exp2 instead of exp
    accumulator = ntl.zeros((q.shape[-2], q.shape[-1]), dtype=ntl.float32)
    row_sum = ntl.full((q.shape[-2],), 1, dtype=ntl.float32)
    row_max = ntl.full((q.shape[-2],), float("-inf"), dtype=ntl.float32)
    for i in range(k.shape[0]):
        scores = ntl.dot(q_scaled, ntl.trans(k[i]))
        scores = ntl.where(k[i].offsets(-2)[None, :] < k.source.shape[-2], scores, float("-inf"))
        if is_causal:
            causal = q.offsets(-2)[:, None] >= k[i].offsets(-2)[None, :]
            scores = ntl.where(causal, scores, float("-inf"))
        new_max = ntl.maximum(row_max, ntl.max(scores, 1))
        p = ntl.exp2(scores - new_max[:, None])
        alpha = ntl.exp2(row_max - new_max)
        accumulator = accumulator * alpha[:, None] + ntl.dot(p.to(v.dtype), v[i])
        row_sum = row_sum * alpha + ntl.sum(p, 1)
        row_max = new_max
    return accumulator / row_sum[:, None], row_max


def application(q, k, v, scale, is_causal, o):
    o, _ = flash_attention(q, k, v, scale, is_causal)  # noqa: F841


def _head_tensor():
    return Tensor(4, shape_options=(None, None, None, {"constexpr": True, "upper_bound": 128}))


KERNEL = ninetoothed.make(
    arrangement,
    application,
    (_head_tensor(), _head_tensor(), _head_tensor(), Tensor(0), Tensor(0, constexpr=True), _head_tensor()),
)


def attention_reference(q, k, v, scale, is_causal):
    """softmax(q kᵀ scale) v in float64, the future masked when causal."""
    scores = q.double() @ k.double().transpose(-1, -2) * scale
    if is_causal:
        seq_len = q.shape[-2]
        future = torch.ones(seq_len, seq_len, dtype=torch.bool).tril().logical_not()
        scores = scores.masked_fill(future, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v.double()


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("is_causal", (False, True))
@pytest.mark.parametrize("seq_len", (1, 77, 1024))
def test_attention(dtype, is_causal, seq_len):
    batch, heads, head_dim = 1, 2, 64
    q, k, v = (torch.randn(batch, heads, seq_len, head_dim).to(dtype) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    scale = 1 / math.sqrt(head_dim)
    KERNEL(q, k, v, scale, is_causal, o, BLOCK_M=64, BLOCK_N=32)
    expected = attention_reference(q, k, v, scale, is_causal)
    tolerance = 1e-5 if dtype == torch.float32 else 3e-3
    torch.testing.assert_close(o.double(), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("blocks, warps", (((64, 32), 8), ((16, 16), 4), ((32, 64), 2)))
def test_attention_in_layouts_whose_rows_lie_otherwise(blocks, warps):
    """On a GPU the row statistics (the running maximum and sum, alpha) are held in the rows of the
    blocks' layout (emitter_row_slices.cpp). These configurations are the ones where a warp does not
    hold whole rows (64 rows on 8 warps), where the blocks fit no tensor-core layout (16 rows on 4
    warps: cyclic ones), and few warps; with a partial last block of keys and queries."""
    kernel = ninetoothed.make(
        arrangement,
        application,
        (_head_tensor(), _head_tensor(), _head_tensor(), Tensor(0), Tensor(0, constexpr=True), _head_tensor()),
        num_warps=warps,
    )
    q, k, v = (torch.randn(1, 2, 77, 64).to(torch.float16) for _ in range(3))
    for is_causal in (False, True):
        o = torch.full_like(q, float("nan"))
        kernel(q, k, v, 0.125, is_causal, o, BLOCK_M=blocks[0], BLOCK_N=blocks[1])
        expected = attention_reference(q, k, v, 0.125, is_causal)
        torch.testing.assert_close(o.double(), expected, rtol=3e-3, atol=3e-3)


def statistics_arrangement(q, k, v, scale, is_causal, o, m):
    rows = m.tile((1, 1, BLOCK_M))
    rows.dtype = rows.dtype.squeeze((0, 1))
    return (*arrangement(q, k, v, scale, is_causal, o), rows)


def stored_statistics_application(q, k, v, scale, is_causal, o, m):
    o, m = flash_attention(q, k, v, scale, is_causal)  # noqa: F841


def added_statistics_application(q, k, v, scale, is_causal, o, m):
    o, row_max = flash_attention(q, k, v, scale, is_causal)  # noqa: F841
    m = m + row_max  # noqa: F841


def folded_statistics_application(q, k, v, scale, is_causal, o, m):
    # the rows' maximum folded to one value: a fold over a row vector
    rows, row_max = flash_attention(q, k, v, scale, is_causal)
    o = rows + ntl.max(row_max, 0)  # noqa: F841


def statistics_kernel(application):
    head = _head_tensor
    return ninetoothed.make(statistics_arrangement, application,
                            (head(), head(), head(), Tensor(0), Tensor(0, constexpr=True), head(), Tensor(3)))


@pytest.mark.parametrize("added", (False, True))
def test_row_statistics_stored_with_the_output(added):
    """Attention that also stores its rows' maximum scores: a row vector written to a tensor by the
    work-items that hold it (on a GPU, each work-item of the row), or added to what it holds."""
    kernel = statistics_kernel(added_statistics_application if added else stored_statistics_application)
    q, k, v = (torch.randn(1, 2, 77, 64).to(torch.float16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    m = torch.randn(1, 2, 77)
    before = m.clone()
    kernel(q, k, v, 0.125, False, o, m, BLOCK_M=32, BLOCK_N=16)
    # The maximum in exp2's units: of the products with q scaled by log2(e) and rounded as the kernel does.
    scaled = (q * (0.125 * 1.44269504089)).to(torch.float16).double()
    expected = (before.double() if added else 0) + (scaled @ k.double().transpose(-1, -2)).max(-1).values
    # (q's roundings to float16 may differ by an ulp from torch's: scores by about 1e-3.)
    torch.testing.assert_close(m.double(), expected, rtol=1e-3, atol=1e-2)
    torch.testing.assert_close(o.double(), attention_reference(q, k, v, 0.125, False), rtol=3e-3, atol=3e-3)


def test_head_dims_that_differ_fail_to_build():
    q = torch.randn(1, 1, 8, 64)
    k = torch.randn(1, 1, 8, 32)
    o = torch.full_like(q, float("nan"))
    with pytest.raises(RuntimeError, match="must be equal"):
        KERNEL(q, k, k, 0.125, False, o, BLOCK_M=64, BLOCK_N=32)
    assert torch.isnan(o).all()
