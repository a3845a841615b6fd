"""3x3, stride-1 2-D convolution by Winograd's minimal filtering, F(2x2, 3x3).

The output is cut into 2x2 tiles; the tile at (i, j) reads the 4x4 window of the padded input at
(2i, 2j). With d a window and g a filter (Lavin and Gray, "Fast Algorithms for Convolutional
Neural Networks", 2015), one tile of the correlation is

    Y = A^T [(G g G^T) * (B^T d B)] A,

where * multiplies element by element: 16 products per channel where the direct form needs 36.
Summed over the channels, each of the 16 positions of the 4x4 transformed tile is a GEMM of the
transformed filters (K x C) by the tiles' transformed windows (C x tiles).

Two kernels:
- `filter_transform` writes U = G g G^T for every (filter, channel) pair, as a float32 (4, 4, K, C)
  tensor: position (a, b) of every transformed filter is one K x C matrix.
- the convolution: a program takes a block of filters and a run of tiles along one row of tiles of
  one image. For every block of channels it transforms the windows (B^T d B, in float32) and
  accumulates the 16 products of U's blocks with them in 16 accumulators; at the end it applies
  A^T . A and stores the 2x2 outputs of each tile, bias added.

The blocks are (filters, tiles) and (channels, tiles), tiles last: along a row of tiles an NCHW
tensor's elements are two apart (the windows' and the outputs' corners), so a block's rows read and
write a few cache lines each; with channels or filters last, each element of a row would be a
line of its own. Runs of tiles are 16 or more: the tiles are the dots' columns, and a run of 8 would
leave a CPU's 16-lane vectors half used.
"""

import functools
import threading

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

from . import mm

PADDING_H = Symbol("padding_h", constexpr=True)
PADDING_W = Symbol("padding_w", constexpr=True)

BLOCK_SIZE_T = ninetoothed.block_size(lower_bound=16, upper_bound=64)
BLOCK_SIZE_C = ninetoothed.block_size(lower_bound=16, upper_bound=128)
BLOCK_SIZE_K = ninetoothed.block_size(lower_bound=16, upper_bound=128)


def _windows(tensor, size):
    """(N, C, H, W) -> (size, size, N, H // 2, W // 2, C): the size x size windows at a stride of 2,
    one per output tile, their positions first."""
    windows = tensor.tile((1, 1, size, size), strides=(-1, -1, 2, 2))
    return windows.ravel().permute((6, 7, 0, 2, 3, 1, 4, 5)).squeeze((6, 7))


def arrangement(
    input, transformed_weight, bias, output, padding_h=None, padding_w=None,
    block_size_t=None, block_size_c=None, block_size_k=None,
):
    padding_h = PADDING_H if padding_h is None else padding_h
    padding_w = PADDING_W if padding_w is None else padding_w
    block_size_t = BLOCK_SIZE_T if block_size_t is None else block_size_t
    block_size_c = BLOCK_SIZE_C if block_size_c is None else block_size_c
    block_size_k = BLOCK_SIZE_K if block_size_k is None else block_size_k

    # Programs: (image, row of tiles, block of filters, run of tiles). Each holds its 2 x 2
    # output positions as (filters, tiles) blocks.
    output_arranged = _windows(output, 2).permute((0, 1, 2, 3, 5, 4))
    output_arranged = output_arranged.tile((1, 1, 1, 1, block_size_k, block_size_t))
    output_arranged = output_arranged.tile((-1, -1, 1, 1, 1, 1)).squeeze((0, 1))
    output_arranged.dtype = output_arranged.dtype.squeeze((2, 3, 4, 5))
    output_arranged.dtype.dtype = output_arranged.dtype.dtype.squeeze((0, 1, 2, 3))
    grid = output_arranged.shape

    # The windows: per program a (4, 4, channel blocks) grid of (channels, tiles) blocks.
    input_arranged = input.pad(((0, 0), (0, 0), (padding_h, padding_h), (padding_w, padding_w)))
    input_arranged = _windows(input_arranged, 4).permute((0, 1, 2, 3, 5, 4))
    input_arranged = input_arranged.tile((1, 1, 1, 1, block_size_c, block_size_t))
    input_arranged = input_arranged.tile((-1, -1, 1, 1, -1, 1)).squeeze((0, 1, 4))
    input_arranged.dtype = input_arranged.dtype.squeeze((2, 3, 5))
    input_arranged.dtype.dtype = input_arranged.dtype.dtype.squeeze((0, 1, 2, 3))
    input_arranged = input_arranged.unsqueeze(2).expand((-1, -1, grid[2], -1))

    # U: per program a (4, 4, channel blocks) grid of (filters, channels) blocks.
    weight_arranged = transformed_weight.tile((1, 1, block_size_k, block_size_c))
    weight_arranged = weight_arranged.tile((-1, -1, 1, -1)).squeeze((0, 1, 3))
    weight_arranged.dtype = weight_arranged.dtype.squeeze(2)
    weight_arranged.dtype.dtype = weight_arranged.dtype.dtype.squeeze((0, 1))
    weight_arranged = weight_arranged.unsqueeze(0).unsqueeze(0).unsqueeze(3)
    weight_arranged = weight_arranged.expand((grid[0], grid[1], -1, grid[3]))

    bias_arranged = bias.tile((block_size_k,)).unsqueeze(0).unsqueeze(0).unsqueeze(3)
    bias_arranged = bias_arranged.expand((grid[0], grid[1], -1, grid[3]))

    return input_arranged, weight_arranged, bias_arranged, output_arranged


def application(input, transformed_weight, bias, output):
    # float32 products on every device (no TF32): the transforms' sums of up to 16 products
    # would carry TF32's rounding of each.
    precision: ntl.constexpr = "ieee"
    m00 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m01 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m02 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m03 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m10 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m11 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m12 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m13 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m20 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m21 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m22 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m23 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m30 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m31 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m32 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)
    m33 = ntl.zeros(output[0, 0].shape, dtype=ntl.float32)

    for c in range(input.shape[2]):
        # B^T d: rows of the window combined (B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0],
        # [0, 1, 0, -1]]).
        d00 = ntl.cast(input[0, 0, c], ntl.float32)
        d01 = ntl.cast(input[0, 1, c], ntl.float32)
        d02 = ntl.cast(input[0, 2, c], ntl.float32)
        d03 = ntl.cast(input[0, 3, c], ntl.float32)
        d10 = ntl.cast(input[1, 0, c], ntl.float32)
        d11 = ntl.cast(input[1, 1, c], ntl.float32)
        d12 = ntl.cast(input[1, 2, c], ntl.float32)
        d13 = ntl.cast(input[1, 3, c], ntl.float32)
        d20 = ntl.cast(input[2, 0, c], ntl.float32)
        d21 = ntl.cast(input[2, 1, c], ntl.float32)
        d22 = ntl.cast(input[2, 2, c], ntl.float32)
        d23 = ntl.cast(input[2, 3, c], ntl.float32)
        d30 = ntl.cast(input[3, 0, c], ntl.float32)
        d31 = ntl.cast(input[3, 1, c], ntl.float32)
        d32 = ntl.cast(input[3, 2, c], ntl.float32)
        d33 = ntl.cast(input[3, 3, c], ntl.float32)
        t00, t01, t02, t03 = d00 - d20, d01 - d21, d02 - d22, d03 - d23
        t10, t11, t12, t13 = d10 + d20, d11 + d21, d12 + d22, d13 + d23
        t20, t21, t22, t23 = d20 - d10, d21 - d11, d22 - d12, d23 - d13
        t30, t31, t32, t33 = d10 - d30, d11 - d31, d12 - d32, d13 - d33

        # (B^T d) B: columns combined, one position of the transformed tile per dot.
        m00 += ntl.dot(transformed_weight[0, 0, c], t00 - t02, input_precision=precision)
        m01 += ntl.dot(transformed_weight[0, 1, c], t01 + t02, input_precision=precision)
        m02 += ntl.dot(transformed_weight[0, 2, c], t02 - t01, input_precision=precision)
        m03 += ntl.dot(transformed_weight[0, 3, c], t01 - t03, input_precision=precision)
        m10 += ntl.dot(transformed_weight[1, 0, c], t10 - t12, input_precision=precision)
        m11 += ntl.dot(transformed_weight[1, 1, c], t11 + t12, input_precision=precision)
        m12 += ntl.dot(transformed_weight[1, 2, c], t12 - t11, input_precision=precision)
        m13 += ntl.dot(transformed_weight[1, 3, c], t11 - t13, input_precision=precision)
        m20 += ntl.dot(transformed_weight[2, 0, c], t20 - t22, input_precision=precision)
        m21 += ntl.dot(transformed_weight[2, 1, c], t21 + t22, input_precision=precision)
        m22 += ntl.dot(transformed_weight[2, 2, c], t22 - t21, input_precision=precision)
        m23 += ntl.dot(transformed_weight[2, 3, c], t21 - t23, input_precision=precision)
        m30 += ntl.dot(transformed_weight[3, 0, c], t30 - t32, input_precision=precision)
        m31 += ntl.dot(transformed_weight[3, 1, c], t31 + t32, input_precision=precision)
        m32 += ntl.dot(transformed_weight[3, 2, c], t32 - t31, input_precision=precision)
        m33 += ntl.dot(transformed_weight[3, 3, c], t31 - t33, input_precision=precision)

    # A^T m A (A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]), then the bias.
    s00, s01, s02, s03 = m00 + m10 + m20, m01 + m11 + m21, m02 + m12 + m22, m03 + m13 + m23
    s10, s11, s12, s13 = m10 - m20 - m30, m11 - m21 - m31, m12 - m22 - m32, m13 - m23 - m33
    b = ntl.cast(bias, ntl.float32)[:, None]
    output[0, 0] = s00 + s01 + s02 + b
    output[0, 1] = s01 - s02 - s03 + b
    output[1, 0] = s10 + s11 + s12 + b
    output[1, 1] = s11 - s12 - s13 + b


def premake(
    padding_h=None, padding_w=None, dtype=None, block_size_t=None, block_size_c=None, block_size_k=None
):
    arrangement_ = functools.partial(
        arrangement,
        padding_h=padding_h,
        padding_w=padding_w,
        block_size_t=block_size_t,
        block_size_c=block_size_c,
        block_size_k=block_size_k,
    )
    tensors = (
        Tensor(4, dtype=dtype, other=0),
        Tensor(4, dtype=ninetoothed.float32, other=0),
        Tensor(1, dtype=dtype),
        Tensor(4, dtype=dtype),
    )
    return arrangement_, application, tensors


TRANSFORM_BLOCK_K = ninetoothed.block_size(upper_bound=64)
TRANSFORM_BLOCK_C = ninetoothed.block_size(upper_bound=64)


def _filter_positions(tensor):
    """(a, b, K, C) -> per program an (a, b) grid of (filters, channels) blocks."""
    arranged = tensor.tile((1, 1, TRANSFORM_BLOCK_K, TRANSFORM_BLOCK_C))
    arranged = arranged.tile((-1, -1, 1, 1)).squeeze((0, 1))
    arranged.dtype = arranged.dtype.squeeze((2, 3))
    arranged.dtype.dtype = arranged.dtype.dtype.squeeze((0, 1))
    return arranged


def filter_transform_arrangement(weight, transformed_weight):
    return _filter_positions(weight.permute((2, 3, 0, 1))), _filter_positions(transformed_weight)


def filter_transform_application(weight, transformed_weight):
    g00 = ntl.cast(weight[0, 0], ntl.float32)
    g01 = ntl.cast(weight[0, 1], ntl.float32)
    g02 = ntl.cast(weight[0, 2], ntl.float32)
    g10 = ntl.cast(weight[1, 0], ntl.float32)
    g11 = ntl.cast(weight[1, 1], ntl.float32)
    g12 = ntl.cast(weight[1, 2], ntl.float32)
    g20 = ntl.cast(weight[2, 0], ntl.float32)
    g21 = ntl.cast(weight[2, 1], ntl.float32)
    g22 = ntl.cast(weight[2, 2], ntl.float32)

    # G g (G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]): rows combined.
    t00, t01, t02 = g00, g01, g02
    t10, t11, t12 = (g00 + g10 + g20) * 0.5, (g01 + g11 + g21) * 0.5, (g02 + g12 + g22) * 0.5
    t20, t21, t22 = (g00 - g10 + g20) * 0.5, (g01 - g11 + g21) * 0.5, (g02 - g12 + g22) * 0.5
    t30, t31, t32 = g20, g21, g22

    # (G g) G^T: columns combined.
    transformed_weight[0, 0] = t00
    transformed_weight[0, 1] = (t00 + t01 + t02) * 0.5
    transformed_weight[0, 2] = (t00 - t01 + t02) * 0.5
    transformed_weight[0, 3] = t02
    transformed_weight[1, 0] = t10
    transformed_weight[1, 1] = (t10 + t11 + t12) * 0.5
    transformed_weight[1, 2] = (t10 - t11 + t12) * 0.5
    transformed_weight[1, 3] = t12
    transformed_weight[2, 0] = t20
    transformed_weight[2, 1] = (t20 + t21 + t22) * 0.5
    transformed_weight[2, 2] = (t20 - t21 + t22) * 0.5
    transformed_weight[2, 3] = t22
    transformed_weight[3, 0] = t30
    transformed_weight[3, 1] = (t30 + t31 + t32) * 0.5
    transformed_weight[3, 2] = (t30 - t31 + t32) * 0.5
    transformed_weight[3, 3] = t32


def premake_filter_transform(dtype=None):
    tensors = (Tensor(4, dtype=dtype), Tensor(4, dtype=ninetoothed.float32))
    return filter_transform_arrangement, filter_transform_application, tensors


def transform_weight(weight, *, out=None):
    """U = G g G^T of every (filter, channel) pair: a float32 (4, 4, K, C) tensor (`out`, if given)."""
    k, c, r, s = weight.shape
    assert (r, s) == (3, 3), f"Winograd F(2x2, 3x3) takes 3x3 filters, not {r}x{s}."
    if out is None:
        out = torch.empty((4, 4, k, c), dtype=torch.float32, device=weight.device)
    assert out.shape == (4, 4, k, c) and out.dtype == torch.float32, "`out` must be float32 (4, 4, K, C)."
    mm.cached_make(premake_filter_transform)(weight, out)
    return out


_workspaces = threading.local()


def _transformed_weight_buffer(weight):
    """A (4, 4, K, C) float32 buffer this thread reuses for the weights of its calls: a new
    allocation each call costs more than the transform (fresh pages, a new buffer for the device)."""
    k, c = weight.shape[:2]
    key = (k, c, weight.device)
    buffers = _workspaces.__dict__.setdefault("buffers", {})
    if key not in buffers:
        buffers[key] = torch.empty((4, 4, k, c), dtype=torch.float32, device=weight.device)
    return buffers[key]


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def conv2d(input, weight, bias=None, padding=0, *, transformed_weight=None, out=None):
    """`torch.nn.functional.conv2d` for 3x3 filters at stride 1, dilation 1, one group.

    `transformed_weight` (from `transform_weight(weight)`) saves the filter transform where the
    same weights serve many calls."""
    padding_h, padding_w = _pair(padding)
    n, c, h, w = input.shape
    k, c_weight, r, s = weight.shape
    assert (r, s) == (3, 3), f"Winograd F(2x2, 3x3) takes 3x3 filters, not {r}x{s}."
    assert c == c_weight, f"the input has {c} channels, the filters {c_weight}."
    p, q = h + 2 * padding_h - 2, w + 2 * padding_w - 2
    assert p > 0 and q > 0, f"a {h}x{w} input padded by {padding_h}, {padding_w} is smaller than the filter."

    if out is None:
        out = torch.empty((n, k, p, q), dtype=input.dtype, device=input.device)

    assert out.shape == (n, k, p, q), f"`out` has shape {tuple(out.shape)}, expected {(n, k, p, q)}."

    if bias is None:
        bias = torch.zeros((k,), dtype=out.dtype, device=out.device)

    if transformed_weight is None:
        transformed_weight = transform_weight(weight, out=_transformed_weight_buffer(weight))

    mm.cached_make(premake)(input, transformed_weight, bias, out, padding_h=padding_h, padding_w=padding_w)

    return out
