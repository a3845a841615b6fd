"""Matrix multiplication: the block-tiled GEMM every other matmul-shaped operator builds on.

`arrangement` and `application` are reused by `bmm`, `addmm`, `addmv` and `conv2d`, the way
operator libraries share their mm kernel: the other arrangements call this one on their own
(possibly reshaped) tensors, and the other applications call `application` with a local
accumulator as the output.
"""

import enum
import functools

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK_SIZE_M = ninetoothed.block_size()
BLOCK_SIZE_N = ninetoothed.block_size()
BLOCK_SIZE_K = ninetoothed.block_size()

# Auto-tuning times every candidate configuration once per new shape; the corpus keeps that
# to a few candidates so that a test run does not spend its time compiling configurations.
MAX_NUM_CONFIGS = 1


class InputPrecision(enum.IntEnum):
    """What `ntl.dot` is asked for; passed to kernels as a constexpr 0-dim tensor."""

    IEEE = enum.auto()

    TF32 = enum.auto()


def input_precision_of(name):
    """`"ieee"`/`"tf32"` (or None: torch's float32 matmul precision) as an InputPrecision."""
    if name is None:
        name = "ieee" if torch.get_float32_matmul_precision() == "highest" else "tf32"

    return InputPrecision[name.upper()]


def arrangement(
    input,
    other,
    output,
    input_precision,
    block_size_m=None,
    block_size_n=None,
    block_size_k=None,
):
    if block_size_m is None:
        block_size_m = BLOCK_SIZE_M

    if block_size_n is None:
        block_size_n = BLOCK_SIZE_N

    if block_size_k is None:
        block_size_k = BLOCK_SIZE_K

    # One program per (block_size_m, block_size_n) tile of the output...
    output_arranged = output.tile((block_size_m, block_size_n))

    # ...which walks a whole row of input tiles...
    input_arranged = input.tile((block_size_m, block_size_k))
    input_arranged = input_arranged.tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)

    # ...against a whole column of other's tiles.
    other_arranged = other.tile((block_size_k, block_size_n))
    other_arranged = other_arranged.tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)

    input_precision_arranged = input_precision

    return input_arranged, other_arranged, output_arranged, input_precision_arranged


def application(input, other, output, input_precision):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)

    if input_precision == 2:  # InputPrecision.TF32
        precision: ntl.constexpr = "tf32"
    else:
        precision: ntl.constexpr = "ieee"

    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k], input_precision=precision)

    output = accumulator  # noqa: F841


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
        Tensor(0, constexpr=True, value=input_precision),
    )

    return arrangement_, application, tensors


@functools.cache
def cached_make(premake, *args, **keywords):
    """One kernel per premake configuration, as operator libraries cache them."""
    return ninetoothed.make(*premake(*args, **keywords), max_num_configs=MAX_NUM_CONFIGS)


def mm(input, mat2, *, input_precision=None, out=None):
    m, _ = input.shape
    _, n = mat2.shape

    if out is None:
        out = torch.empty((m, n), dtype=input.dtype, device=input.device)

    kernel = cached_make(premake)

    kernel(input, mat2, out, input_precision_of(input_precision))

    return out
