"""Scaled dot-product attention in the flash-attention form.

One program per (batch, key/value head, block of query rows) walks the key/value blocks with
an online softmax (running maximum and running sum, in base 2), so the (L, S) score matrix is
never stored. With grouped-query attention (`enable_gqa`), the query heads that share a
key/value head are one more level, looped over by the same program. Causal masking
(upper-left aligned, as torch's `is_causal`), an additive or boolean `attn_mask`, and `scale`
are supported.
"""

import functools
import math

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK_SIZE_M = ninetoothed.block_size()
BLOCK_SIZE_N = ninetoothed.block_size()

MAX_NUM_CONFIGS = 1

LOG2_E = 1.4426950408889634


def arrangement(
    query,
    key,
    value,
    attn_mask,
    is_causal,
    scale,
    output,
    with_attn_mask,
    block_size_m=None,
    block_size_n=None,
):
    if block_size_m is None:
        block_size_m = BLOCK_SIZE_M

    if block_size_n is None:
        block_size_n = BLOCK_SIZE_N

    # The query heads per key/value head (1 without grouped-query attention).
    group_size = query.shape[-3] // key.shape[-3]

    def arrange_query_or_output(input):
        # (B, H, L, E) -> (B, H / group_size, L / block_size_m, 1) of (group_size,) of
        # (block_size_m, E).
        arranged = input.tile((1, 1, block_size_m, -1))
        arranged = arranged.tile((1, group_size, 1, 1))
        arranged.dtype = arranged.dtype.squeeze((0, 2, 3))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))

        return arranged

    def arrange_key_or_value(input):
        # Every query block sees all key blocks: (S / block_size_n,) of (block_size_n, E).
        arranged = input.tile((1, 1, block_size_n, -1))
        arranged = arranged.tile((1, 1, -1, -1))
        arranged = arranged.expand((-1, -1, query_arranged.shape[-2], -1))
        arranged.dtype = arranged.dtype.squeeze((0, 1, 3))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))

        return arranged

    def arrange_attn_mask(input):
        # The rows of mask blocks that go with the query blocks: (group_size, S / block_size_n)
        # of (block_size_m, block_size_n).
        arranged = input.tile((1, 1, block_size_m, block_size_n))
        arranged = arranged.tile((1, group_size, 1, -1))
        arranged.dtype = arranged.dtype.squeeze((0, 2))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))

        return arranged

    query_arranged = arrange_query_or_output(query)
    key_arranged = arrange_key_or_value(key)
    value_arranged = arrange_key_or_value(value)
    attn_mask_arranged = arrange_attn_mask(attn_mask)
    output_arranged = arrange_query_or_output(output)

    return (
        query_arranged,
        key_arranged,
        value_arranged,
        attn_mask_arranged,
        is_causal,
        scale,
        output_arranged,
        with_attn_mask,
    )


def application(query, key, value, attn_mask, is_causal, scale, output, with_attn_mask):
    for i in range(query.shape[0]):
        # Scores in base 2: exp(x) == exp2(x * log2(e)).
        query_i = (query[i] * (scale * LOG2_E)).to(query[i].dtype)

        acc = ntl.zeros((query_i.shape[-2], query_i.shape[-1]), dtype=ntl.float32)
        l_i = ntl.zeros((query_i.shape[-2],), dtype=ntl.float32)
        m_i = ntl.full((query_i.shape[-2],), float("-inf"), dtype=ntl.float32)

        for j in range(key.shape[0]):
            qk = ntl.dot(query_i, ntl.trans(key[j]))
            qk = ntl.where(key[j].offsets(-2) < key.source.shape[-2], qk, float("-inf"))

            if with_attn_mask:
                qk += attn_mask[i, j] * LOG2_E

            if is_causal:
                causal_mask = query[i].offsets(-2)[:, None] >= key[j].offsets(-2)[None, :]
                qk = ntl.where(causal_mask, qk, float("-inf"))

            m_ij = ntl.maximum(m_i, ntl.max(qk, 1))
            # Rows whose keys so far are all masked keep a maximum of -inf; subtract 0 there.
            m_ij_safe = ntl.where(m_ij == float("-inf"), 0.0, m_ij)
            p = ntl.exp2(qk - m_ij_safe[:, None])
            alpha = ntl.where(m_i == float("-inf"), 0.0, ntl.exp2(m_i - m_ij_safe))

            acc = acc * alpha[:, None] + ntl.dot(p.to(value[j].dtype), value[j])
            l_i = l_i * alpha + ntl.sum(p, 1)
            m_i = m_ij

        output[i] = acc / l_i[:, None]


def premake(with_attn_mask=None, is_causal=None, emb_dim=None, dtype=None, block_size_m=None, block_size_n=None):
    arrangement_ = functools.partial(arrangement, block_size_m=block_size_m, block_size_n=block_size_n)

    query, key, value, attn_mask, output = (
        Tensor(
            4,
            dtype=dtype,
            shape_options=(None, None, None, {"constexpr": True, "upper_bound": 128}),
        )
        for _ in range(5)
    )

    if emb_dim is not None:
        # The head dim is this number rather than a size taken at launch.
        for tensor in (query, key, value, output):
            tensor.shape = tensor.shape[:-1] + (emb_dim,)

    scale = Tensor(0, dtype=ninetoothed.float64)
    is_causal = Tensor(0, constexpr=True, value=is_causal)
    with_attn_mask = Tensor(0, constexpr=True, value=with_attn_mask)

    tensors = (query, key, value, attn_mask, is_causal, scale, output, with_attn_mask)

    return arrangement_, application, tensors


@functools.cache
def _cached_make(premake, *args, **keywords):
    return ninetoothed.make(*premake(*args, **keywords), max_num_configs=MAX_NUM_CONFIGS)


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    *,
    static_head_dim=False,
    out=None,
):
    """torch's scaled_dot_product_attention; `static_head_dim` makes the kernel for this head
    dim (its size fixed at premake, as callers that build per model do) instead of taking it
    from the tensors at launch."""
    assert dropout_p == 0, "`dropout_p` other than 0 is not supported."

    num_heads, num_key_value_heads = query.shape[-3], key.shape[-3]

    if enable_gqa:
        assert num_heads % num_key_value_heads == 0, "query heads must be a multiple of key/value heads."
    else:
        assert num_heads == num_key_value_heads, "query and key/value heads differ; pass `enable_gqa=True`."

    mask_shape = query.shape[:-1] + (key.shape[-2],)

    if attn_mask is not None:
        with_attn_mask = True

        if attn_mask.dtype == torch.bool:
            attn_mask = torch.where(attn_mask, 0.0, float("-inf")).to(query.dtype)

        attn_mask = attn_mask.expand(mask_shape)
    else:
        with_attn_mask = False

        # Never read: a single element stands for the whole mask.
        attn_mask = torch.zeros((), dtype=query.dtype, device=query.device).expand(mask_shape)

    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])

    output_shape = query.shape[:-1] + (value.shape[-1],)

    if out is None:
        out = torch.empty(output_shape, dtype=value.dtype, device=query.device)

    assert out.shape == output_shape, f"`out` has shape {tuple(out.shape)}, expected {tuple(output_shape)}."

    kernel = _cached_make(premake, emb_dim=query.shape[-1] if static_head_dim else None)

    kernel(query, key, value, attn_mask, is_causal, scale, out, with_attn_mask)

    return out
