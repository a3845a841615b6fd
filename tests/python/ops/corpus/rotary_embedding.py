"""Rotary position embedding (half-split, as in GPT-NeoX and LLaMA) of a (batch, seq, heads, head_dim) tensor.

With x1, x2 the two halves of a head: out1 = x1 * cos - x2 * sin, out2 = x2 * cos + x1 * sin,
`sin` and `cos` being (seq, head_dim // 2) tables. A program handles one head of one position:
the middle level of `input` holds its two halves, and the tables' rows are expanded over the
batch and the heads.
"""

import torch
from ninetoothed import Tensor

from corpus.caching import cached_make


def arrangement(input, sin, cos, output):
    half = input.shape[-1] // 2

    def _arrange_heads(tensor):
        arranged = tensor.tile((1, 1, 1, half)).tile((1, 1, 1, -1))
        arranged = arranged.squeeze(3)
        arranged.dtype = arranged.dtype.squeeze((0, 1, 2))
        arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1, 2))

        return arranged

    def _arrange_table(table):
        arranged = table.tile((1, half)).squeeze(1)
        arranged.dtype = arranged.dtype.squeeze(0)
        arranged = arranged.unsqueeze(0).unsqueeze(2)

        return arranged.expand((input.shape[0], -1, input.shape[2]))

    return _arrange_heads(input), _arrange_table(sin), _arrange_table(cos), _arrange_heads(output)


def application(input, sin, cos, output):
    x1 = input[0]
    x2 = input[1]

    output[0] = x1 * cos - x2 * sin
    output[1] = x2 * cos + x1 * sin


def premake(dtype=None):
    head_dim_is_constexpr = (None, None, None, {"constexpr": True})

    tensors = (
        Tensor(4, dtype=dtype, shape_options=head_dim_is_constexpr),
        Tensor(2, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(4, dtype=dtype, shape_options=head_dim_is_constexpr),
    )

    return arrangement, application, tensors


def rotary_embedding(input, sin, cos, *, out=None):
    assert input.shape[-1] % 2 == 0 and sin.shape == cos.shape == (input.shape[1], input.shape[-1] // 2)

    output = torch.empty_like(input) if out is None else out

    cached_make(premake)(input, sin, cos, output)

    return output


def rope_tables(seq_len, head_dim, base=10000.0, dtype=torch.float32):
    """sin and cos of position * base ** (-2i / head_dim), shape (seq_len, head_dim // 2)."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.arange(seq_len, dtype=torch.float32)[:, None] * inv_freq[None, :]

    return angles.sin().to(dtype), angles.cos().to(dtype)
