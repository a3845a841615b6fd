"""2-D convolution as an implicit GEMM through the mm arrangement.

Every output position's receptive field (the padded, strided, dilated window of the filter's
shape) becomes one row of a virtual (N * P * Q, C * R * S) matrix, the filter one
(C * R * S, K) matrix, and the output, channels last, the (N * P * Q, K) product. The bias is
arranged as the output is, by running the same mm arrangement on deep copies of the operands.
"""

import copy
import functools
import math

import torch

import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

from . import mm

STRIDE_H = Symbol("stride_h", constexpr=True)
STRIDE_W = Symbol("stride_w", constexpr=True)
PADDING_H = Symbol("padding_h", constexpr=True)
PADDING_W = Symbol("padding_w", constexpr=True)
DILATION_H = Symbol("dilation_h", constexpr=True)
DILATION_W = Symbol("dilation_w", constexpr=True)


def arrangement(
    input,
    weight,
    bias,
    output,
    input_precision,
    stride_h=None,
    stride_w=None,
    padding_h=None,
    padding_w=None,
    dilation_h=None,
    dilation_w=None,
    block_size_m=None,
    block_size_n=None,
    block_size_k=None,
):
    if stride_h is None:
        stride_h = STRIDE_H

    if stride_w is None:
        stride_w = STRIDE_W

    if padding_h is None:
        padding_h = PADDING_H

    if padding_w is None:
        padding_w = PADDING_W

    if dilation_h is None:
        dilation_h = DILATION_H

    if dilation_w is None:
        dilation_w = DILATION_W

    if block_size_m is None:
        block_size_m = mm.BLOCK_SIZE_M

    if block_size_n is None:
        block_size_n = mm.BLOCK_SIZE_N

    if block_size_k is None:
        block_size_k = mm.BLOCK_SIZE_K

    mm_arrangement = functools.partial(
        mm.arrangement,
        block_size_m=block_size_m,
        block_size_n=block_size_n,
        block_size_k=block_size_k,
    )

    # (N, C, H, W) -> windows (N, 1, P, Q) of (1, C, R, S) -> rows (N * P * Q, C * R * S).
    input_arranged = input.pad(((0, 0), (0, 0), (padding_h, padding_h), (padding_w, padding_w)))
    input_arranged = input_arranged.tile(
        (1, *weight.shape[1:]),
        strides=(-1, -1, stride_h, stride_w),
        dilation=(1, 1, dilation_h, dilation_w),
        floor_mode=True,
    )
    input_arranged = input_arranged.squeeze(1)
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    input_arranged = input_arranged.ravel()
    input_arranged = input_arranged.flatten(end_dim=3).flatten(start_dim=1)

    # (K, C, R, S) -> (C * R * S, K).
    weight_arranged = weight.flatten(start_dim=1)
    weight_arranged = weight_arranged.permute((1, 0))

    # (K,) -> (N, K, P, Q) -> (N * P * Q, K), like the output.
    bias_arranged = bias[None, :, None, None].expand((output.shape[0], -1, output.shape[2], output.shape[3]))
    bias_arranged = bias_arranged.permute((0, 2, 3, 1)).flatten(end_dim=3)

    output_arranged = output.permute((0, 2, 3, 1)).flatten(end_dim=3)

    _, _, bias_arranged, _ = mm_arrangement(
        copy.deepcopy(input_arranged),
        copy.deepcopy(weight_arranged),
        bias_arranged,
        copy.deepcopy(input_precision),
    )

    input_arranged, weight_arranged, output_arranged, input_precision_arranged = mm_arrangement(
        input_arranged, weight_arranged, output_arranged, input_precision
    )

    return (
        input_arranged,
        weight_arranged,
        bias_arranged,
        output_arranged,
        input_precision_arranged,
    )


def application(input, weight, bias, output, input_precision):
    mm_output = ntl.zeros(output.shape, dtype=ntl.float32)
    mm.application(input, weight, mm_output, input_precision)
    output = mm_output + bias  # noqa: F841


def premake(
    input_precision=None,
    stride_h=None,
    stride_w=None,
    padding_h=None,
    padding_w=None,
    dilation_h=None,
    dilation_w=None,
    dtype=None,
    block_size_m=None,
    block_size_n=None,
    block_size_k=None,
):
    arrangement_ = functools.partial(
        arrangement,
        stride_h=stride_h,
        stride_w=stride_w,
        padding_h=padding_h,
        padding_w=padding_w,
        dilation_h=dilation_h,
        dilation_w=dilation_w,
        block_size_m=block_size_m,
        block_size_n=block_size_n,
        block_size_k=block_size_k,
    )

    input, weight, output = (Tensor(4, dtype=dtype) for _ in range(3))
    bias = Tensor(1, dtype=dtype)
    input_precision = Tensor(0, constexpr=True, value=input_precision)

    tensors = (input, weight, bias, output, input_precision)

    return arrangement_, application, tensors


def _output_size(input_size, kernel_size, stride, padding, dilation):
    return math.floor((input_size + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1)


def _pair(value):
    return (value, value) if isinstance(value, int) else tuple(value)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, input_precision=None, out=None):
    stride = _pair(stride)

    if isinstance(padding, str):
        assert padding == "valid", "only `padding='valid'` is supported among the strings."
        padding = 0

    padding = _pair(padding)
    dilation = _pair(dilation)

    assert groups == 1, "`groups` other than 1 is not supported."

    n, _, h, w = input.shape
    k, _, r, s = weight.shape

    p = _output_size(h, r, stride[0], padding[0], dilation[0])
    q = _output_size(w, s, stride[1], padding[1], dilation[1])

    if out is None:
        out = torch.empty((n, k, p, q), dtype=input.dtype, device=input.device)

    assert out.shape == (n, k, p, q), f"`out` has shape {tuple(out.shape)}, expected {(n, k, p, q)}."

    if bias is None:
        bias = torch.zeros((k,), dtype=out.dtype, device=out.device)

    kernel = mm.cached_make(premake)

    kernel(
        input,
        weight,
        bias,
        out,
        mm.input_precision_of(input_precision),
        stride_h=stride[0],
        stride_w=stride[1],
        padding_h=padding[0],
        padding_w=padding[1],
        dilation_h=dilation[0],
        dilation_w=dilation[1],
    )

    return out
