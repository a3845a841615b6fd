"""addmv: `beta * input + alpha * (mat @ vec)`, the mm kernel on the vector as a one-column matrix."""

import functools

import torch

import ninetoothed.language as ntl
from ninetoothed import Tensor

from . import mm


def arrangement(
    input,
    mat,
    vec,
    beta,
    alpha,
    output,
    input_precision,
    block_size_m=None,
    block_size_k=None,
):
    if block_size_m is None:
        block_size_m = mm.BLOCK_SIZE_M

    if block_size_k is None:
        block_size_k = mm.BLOCK_SIZE_K

    # The vector and the results are matrices of one column, so the column block is 1.
    mm_arrangement = functools.partial(
        mm.arrangement,
        block_size_m=block_size_m,
        block_size_n=1,
        block_size_k=block_size_k,
    )

    vec_column = vec.unsqueeze(1)

    _, _, input_arranged, _ = mm_arrangement(mat, vec_column, input.unsqueeze(1), input_precision)

    mat_arranged, vec_arranged, output_arranged, input_precision_arranged = mm_arrangement(
        mat, vec_column, output.unsqueeze(1), input_precision
    )

    return (
        input_arranged,
        mat_arranged,
        vec_arranged,
        beta,
        alpha,
        output_arranged,
        input_precision_arranged,
    )


def application(input, mat, vec, beta, alpha, output, input_precision):
    mv_output = ntl.zeros(output.shape, dtype=ntl.float32)
    mm.application(mat, vec, mv_output, input_precision)

    output = alpha * mv_output + ntl.where(beta == 0, 0, beta * input)  # noqa: F841


def premake(input_precision=None, dtype=None, block_size_m=None, block_size_k=None):
    arrangement_ = functools.partial(
        arrangement,
        block_size_m=block_size_m,
        block_size_k=block_size_k,
    )

    tensors = (
        Tensor(1, dtype=dtype),
        Tensor(2, dtype=dtype),
        Tensor(1, dtype=dtype),
        Tensor(0, dtype=dtype),
        Tensor(0, dtype=dtype),
        Tensor(1, dtype=dtype),
        Tensor(0, constexpr=True, value=input_precision),
    )

    return arrangement_, application, tensors


def addmv(input, mat, vec, *, beta=1, alpha=1, input_precision=None, out=None):
    n, _ = mat.shape

    if out is None:
        out = torch.empty((n,), dtype=mat.dtype, device=mat.device)

    kernel = mm.cached_make(premake)

    kernel(
        input.expand((n,)),
        mat,
        vec,
        beta,
        alpha,
        out,
        mm.input_precision_of(input_precision),
    )

    return out
