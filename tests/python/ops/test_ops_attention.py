"""Scaled dot-product attention of the corpus against an explicit float32 softmax.

The reference is softmax(Q K^T * scale + mask) V computed in float32 from the (rounded)
inputs, with torch's upper-left causal mask. Cases cover odd sequence lengths (1, 17, 63)
for queries and keys alike (so that key blocks are partial and query blocks too), head dims
16 and 64, causal and not, boolean and additive masks (broadcast over batch and heads, or
full), the default and an explicit scale, grouped-query attention (query heads sharing a
key/value head), in float32 and float16.

Tolerances: float32 results go through exp2 of pre-scaled scores and the online rescaling,
a few roundings per element more than the reference, so 2e-5 (observed: under 5e-6).
float16 kernels round the scaled queries and the probabilities to float16 before their
products (as flash attention does) and round the result: 5e-3 absolute and relative
(observed: about two float16 ulps, 2.2e-3, on outputs of magnitude about 1).
"""

import math
import zlib

import pytest
import torch

from corpus import attention
from ops_testing import assert_matches, poisoned

FLOAT32, FLOAT16 = torch.float32, torch.float16

TOLERANCES = {FLOAT32: {"rtol": 2e-5, "atol": 2e-5}, FLOAT16: {"rtol": 5e-3, "atol": 5e-3}}


@pytest.fixture(autouse=True)
def seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def reference(query, key, value, attn_mask, is_causal, scale):
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    # Grouped-query attention: each key/value head serves consecutive query heads.
    group_size = query.shape[-3] // key.shape[-3]
    key = key.repeat_interleave(group_size, dim=-3)
    value = value.repeat_interleave(group_size, dim=-3)
    scores = query.float() @ key.float().transpose(-2, -1) * scale

    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_mask = torch.zeros(attn_mask.shape).masked_fill(~attn_mask, float("-inf"))
        scores = scores + attn_mask.float()

    if is_causal:
        length, source_length = scores.shape[-2:]
        future = ~torch.ones(length, source_length, dtype=torch.bool).tril()
        scores = scores.masked_fill(future, float("-inf"))

    return torch.softmax(scores, dim=-1) @ value.float()


def make_mask(kind, shape, is_causal, dtype):
    """A random mask that leaves every query row at least one key (torch gives NaN otherwise)."""
    length, source_length = shape[-2:]
    keep = torch.rand(shape) > 0.3

    if not is_causal and source_length > 40:
        # Every other row loses its first 40 keys: whole key blocks with nothing to attend to.
        keep[..., ::2, :40] = False

    # The diagonal (clamped to the last key) survives, which a causal row can always see.
    keep[..., torch.arange(length), torch.arange(length).clamp(max=source_length - 1)] = True

    if kind == "bool":
        return keep

    return torch.randn(shape).masked_fill(~keep, float("-inf")).to(dtype)


# (batch, (query heads, key/value heads), L, S, E, is_causal, mask kind, mask broadcast over
# batch and heads, scale, dtype)
CASES = {
    "one-token": (2, (3, 3), 1, 1, 16, False, None, False, None, FLOAT32),
    "causal-17": (2, (3, 3), 17, 17, 16, True, None, False, None, FLOAT32),
    "causal-63-e64": (1, (2, 2), 63, 63, 64, True, None, False, 0.3, FLOAT32),
    "bool-mask-17x63": (1, (2, 2), 17, 63, 64, False, "bool", True, None, FLOAT32),
    "float-mask-63x17": (2, (1, 1), 63, 17, 16, False, "float", False, 0.5, FLOAT32),
    "causal-float-mask-63": (1, (2, 2), 63, 63, 64, True, "float", True, None, FLOAT32),
    "causal-63x17": (1, (2, 2), 63, 17, 16, True, None, False, None, FLOAT32),
    "one-query-63-keys": (2, (2, 2), 1, 63, 64, False, "float", False, None, FLOAT32),
    "gqa-causal-17x63": (2, (6, 2), 17, 63, 16, True, None, False, None, FLOAT32),
    "gqa-float-mask-63": (1, (4, 1), 63, 63, 64, False, "float", False, None, FLOAT32),
    "causal-17-f16": (1, (2, 2), 17, 17, 16, True, None, False, None, FLOAT16),
    "bool-mask-63-f16": (1, (2, 2), 63, 63, 64, False, "bool", False, 0.3, FLOAT16),
    "causal-float-mask-1x63-f16": (2, (2, 2), 1, 63, 64, True, "float", True, None, FLOAT16),
    "float-mask-63x17-f16": (2, (1, 1), 63, 17, 16, False, "float", True, None, FLOAT16),
    "gqa-bool-mask-17-f16": (1, (4, 2), 17, 17, 64, True, "bool", True, None, FLOAT16),
}


@pytest.mark.parametrize(
    "batch, heads, length, source_length, emb_dim, is_causal, mask_kind, broadcast_mask, scale, dtype",
    [pytest.param(*case, id=name) for name, case in CASES.items()],
)
def test_scaled_dot_product_attention(
    batch, heads, length, source_length, emb_dim, is_causal, mask_kind, broadcast_mask, scale, dtype
):
    num_heads, num_key_value_heads = heads
    query = torch.randn(batch, num_heads, length, emb_dim).to(dtype)
    key = torch.randn(batch, num_key_value_heads, source_length, emb_dim).to(dtype)
    value = torch.randn(batch, num_key_value_heads, source_length, emb_dim).to(dtype)

    attn_mask = None

    if mask_kind is not None:
        mask_shape = (length, source_length) if broadcast_mask else (batch, num_heads, length, source_length)
        attn_mask = make_mask(mask_kind, mask_shape, is_causal, dtype)

    expected = reference(query, key, value, attn_mask, is_causal, scale)
    out = poisoned(expected.shape, dtype)

    result = attention.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=attn_mask,
        is_causal=is_causal,
        scale=scale,
        enable_gqa=num_heads != num_key_value_heads,
        out=out,
    )

    assert result is out
    assert_matches(out, expected, **TOLERANCES[dtype])


def test_scaled_dot_product_attention_of_sequence_major_tensors():
    # (B, L, H, E) tensors viewed as (B, H, L, E), as a projection followed by a transpose gives them.
    query = torch.randn(2, 17, 3, 16).transpose(1, 2)
    key, value = (torch.randn(2, 23, 3, 16).transpose(1, 2) for _ in range(2))
    expected = reference(query, key, value, None, True, None)
    out = poisoned(expected.shape, FLOAT32)

    attention.scaled_dot_product_attention(query, key, value, is_causal=True, out=out)
    assert_matches(out, expected, **TOLERANCES[FLOAT32])


@pytest.mark.parametrize("emb_dim, dtype", ((16, FLOAT32), (64, FLOAT16)))
def test_scaled_dot_product_attention_with_the_head_dim_fixed_at_premake(emb_dim, dtype):
    # premake(emb_dim=...) sets the head dim by assigning the tensors' `shape`, as upstream's
    # Tensor allows.
    query, key, value = (torch.randn(2, 3, 33, emb_dim).to(dtype) for _ in range(3))
    expected = reference(query, key, value, None, True, None)
    out = poisoned(expected.shape, dtype)

    attention.scaled_dot_product_attention(query, key, value, is_causal=True, static_head_dim=True, out=out)
    assert_matches(out, expected, **TOLERANCES[dtype])
