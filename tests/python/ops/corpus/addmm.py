"""addmm: `beta * input + alpha * (mat1 @ mat2)`, the mm application on a local accumulator."""

import functools

import torch

import ninetoothed.language as ntl
from ninetoothed import Tensor

from . import mm


def arrangement(
    input,
    mat1,
    mat2,
    beta,
    alpha,
    output,
    input_precision,
    block_size_m=None,
    block_size_n=None,
    block_size_k=None,
):
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

    # `input` is tiled exactly as the output is.
    _, _, input_arranged, _ = mm_arrangement(mat1, mat2, input, input_precision)

    mat1_arranged, mat2_arranged, output_arranged, input_precision_arranged = mm_arrangement(
        mat1, mat2, output, input_precision
    )

    return (
        input_arranged,
        mat1_arranged,
        mat2_arranged,
        beta,
        alpha,
        output_arranged,
        input_precision_arranged,
    )


def application(input, mat1, mat2, beta, alpha, output, input_precision):
    mm_output = ntl.zeros(output.shape, dtype=ntl.float32)
    mm.application(mat1, mat2, mm_output, input_precision)

    # As torch: with beta == 0, `input` is ignored (its NaN and inf do not propagate).
    output = alpha * mm_output + ntl.where(beta == 0, 0, beta * input)  # noqa: F841


def premake(input_precision=None, dtype=None, block_size_m=None, block_size_n=None, block_size_k=None):
    arrangement_ = functools.partial(
        arrangement,
        block_size_m=block_size_m,
        block_size_n=block_size_n,
        block_size_k=block_size_k,
    )

    tensors = (
        Tensor(2, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(0, dtype=dtype),
        Tensor(0, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(0, constexpr=True, value=input_precision),
    )

    return arrangement_, application, tensors


def addmm(input, mat1, mat2, *, beta=1, alpha=1, input_precision=None, out=None):
    m, _ = mat1.shape
    _, n = mat2.shape

    if out is None:
        out = torch.empty((m, n), dtype=mat1.dtype, device=mat1.device)

    kernel = mm.cached_make(premake)

    kernel(
        input.expand((m, n)),
        mat1,
        mat2,
        beta,
        alpha,
        out,
        mm.input_precision_of(input_precision),
    )

    return out
