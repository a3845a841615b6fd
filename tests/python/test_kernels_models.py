"""Kernels of models written in the arrange-and-apply style: padding, bmm, RoPE, SiLU, SwiGLU."""

import pytest
import torch
import torch.nn.functional as F

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK = ninetoothed.block_size()


# --- Constant padding: fill, then copy input[slices] into output[slices] -----------------------


def _fill_arrangement(output, value, BLOCK=BLOCK):
    return output.flatten().tile((BLOCK,)), value


def _fill_application(output, value):
    output = value  # noqa: F841


def _copy_arrangement(input, output, input_slices, output_slices, BLOCK=BLOCK):
    return input[input_slices].flatten().tile((BLOCK,)), output[output_slices].flatten().tile((BLOCK,))


def _copy_application(input, output):
    output = input  # noqa: F841


def constant_pad(input, pads, value):
    """F.pad(input, pads, value=value): pads as (last-dim before, after, previous dim ...)."""
    ndim = input.ndim
    per_dim = [(0, 0)] * ndim
    for d in range(len(pads) // 2):
        per_dim[ndim - 1 - d] = (pads[2 * d], pads[2 * d + 1])
    output_shape = [size + before + after for size, (before, after) in zip(input.shape, per_dim)]
    input_slices = tuple(slice(max(-before, 0), size - max(-after, 0)) for size, (before, after) in zip(input.shape, per_dim))
    output_slices = tuple(slice(max(before, 0), out - max(after, 0)) for out, (before, after) in zip(output_shape, per_dim))
    output = torch.full(output_shape, float("nan"), dtype=input.dtype)
    fill = ninetoothed.make(_fill_arrangement, _fill_application, (Tensor(ndim), Tensor(0)))
    copy = ninetoothed.make(_copy_arrangement, _copy_application, (Tensor(ndim), Tensor(ndim), input_slices, output_slices))
    fill(output, value)
    copy(input, output)
    return output


@pytest.mark.parametrize(
    "shape, pads",
    (
        ((5, 7), (1, 2, 3, 0)),
        ((5, 7), (-1, 2, 0, -2)),
        ((3, 4, 6), (2, -3, 1, 1, -1, 2)),
        ((2, 33, 65), (0, 0, 0, 0, 1, 1)),
    ),
)
def test_constant_pad(shape, pads):
    input = torch.randn(shape)
    output = constant_pad(input, pads, 0.5)
    assert torch.equal(output, F.pad(input, pads, value=0.5))


# --- Batched matrix multiplication --------------------------------------------------------------

BM, BN, BK = ninetoothed.block_size(), ninetoothed.block_size(), ninetoothed.block_size()


def _bmm_arrangement(a, b, c):
    c_arranged = c.tile((1, BM, BN))
    c_arranged.dtype = c_arranged.dtype.squeeze(0)
    a_arranged = a.tile((1, BM, BK)).tile((1, 1, -1)).expand((-1, -1, c_arranged.shape[2]))
    a_arranged.dtype = a_arranged.dtype.squeeze((0, 1))
    a_arranged.dtype.dtype = a_arranged.dtype.dtype.squeeze(0)
    b_arranged = b.tile((1, BK, BN)).tile((1, -1, 1)).expand((-1, c_arranged.shape[1], -1))
    b_arranged.dtype = b_arranged.dtype.squeeze((0, 2))
    b_arranged.dtype.dtype = b_arranged.dtype.dtype.squeeze(0)
    return a_arranged, b_arranged, c_arranged


def _matmul_application(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k])
    c = accumulator  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("batch, m, k, n", ((3, 17, 33, 65), (1, 1, 1, 1), (2, 64, 128, 64)))
def test_bmm(dtype, batch, m, k, n):
    kernel = ninetoothed.make(_bmm_arrangement, _matmul_application, (Tensor(3), Tensor(3), Tensor(3)))
    a, b = torch.randn(batch, m, k).to(dtype), torch.randn(batch, k, n).to(dtype)
    c = torch.full((batch, m, n), float("nan"), dtype=dtype)
    kernel(a, b, c)
    expected = torch.bmm(a.float(), b.float())
    tolerance = 1e-4 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(c.float(), expected, rtol=tolerance, atol=tolerance * k**0.5)


# --- Rotary position embedding (rotate-half form) ----------------------------------------------

HEAD_DIM = Symbol("HEAD_DIM", constexpr=True)


def _rope_arrangement(x, cos, sin, output):
    def rows(t):
        arranged = t.tile((1, 1, 1, HEAD_DIM))
        arranged.dtype = arranged.dtype.squeeze((0, 1, 2))
        return arranged

    tables = []
    for table in (cos, sin):
        arranged = table.tile((1, HEAD_DIM)).unsqueeze(0).unsqueeze(2)
        arranged = arranged.expand((x.shape[0], -1, x.shape[2], -1))
        arranged.dtype = arranged.dtype.squeeze(0)
        tables.append(arranged)
    return rows(x), *tables, rows(output)


def _rope_application(x, cos, sin, output):
    columns = x.offsets(-1)
    half = HEAD_DIM // 2
    partner = ntl.where(columns < half, columns + half, columns - half)
    sign = ntl.where(columns < half, -1.0, 1.0)
    rotated = x.source[x.offsets(0), x.offsets(1), x.offsets(2), partner] * sign
    output = x * cos + rotated * sin  # noqa: F841


@pytest.mark.parametrize("batch, seq, heads, head_dim", ((2, 7, 3, 16), (1, 1, 1, 2), (1, 33, 4, 64)))
def test_rope(batch, seq, heads, head_dim):
    kernel = ninetoothed.make(_rope_arrangement, _rope_application, (Tensor(4), Tensor(2), Tensor(2), Tensor(4)))
    x = torch.randn(batch, seq, heads, head_dim)
    angles = torch.randn(seq, head_dim // 2).repeat(1, 2)
    cos, sin = angles.cos(), angles.sin()
    output = torch.full_like(x, float("nan"))
    kernel(x, cos, sin, output, HEAD_DIM=head_dim)
    half = head_dim // 2
    rotate_half = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    expected = x.double() * cos[None, :, None, :].double() + rotate_half.double() * sin[None, :, None, :].double()
    torch.testing.assert_close(output.double(), expected, rtol=1e-5, atol=1e-5)


# --- SiLU and SwiGLU --------------------------------------------------------------------------


def _elementwise_arrangement(*tensors, BLOCK=BLOCK):
    return tuple(t.flatten().tile((BLOCK,)) for t in tensors)


def _silu_application(x, output):
    output = x * ntl.sigmoid(x)  # noqa: F841


def _swiglu_application(gate, up, output):
    output = gate * ntl.sigmoid(gate) * up  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("shape", ((1,), (3, 1000), (2, 5, 129)))
def test_silu_and_swiglu(dtype, shape):
    ndim = len(shape)
    silu = ninetoothed.make(_elementwise_arrangement, _silu_application, (Tensor(ndim), Tensor(ndim)))
    swiglu = ninetoothed.make(_elementwise_arrangement, _swiglu_application, (Tensor(ndim), Tensor(ndim), Tensor(ndim)))
    gate, up = torch.randn(shape).to(dtype), torch.randn(shape).to(dtype)
    output = torch.full(shape, float("nan"), dtype=dtype)
    silu(gate, output)
    tolerance = 1e-6 if dtype == torch.float32 else 1e-3
    torch.testing.assert_close(output.double(), F.silu(gate.double()), rtol=tolerance, atol=tolerance)
    output = torch.full(shape, float("nan"), dtype=dtype)
    swiglu(gate, up, output)
    expected = F.silu(gate.double()) * up.double()
    torch.testing.assert_close(output.double(), expected, rtol=tolerance * 2, atol=tolerance * 2)
