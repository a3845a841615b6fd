"""Prefetching the next program's blocks (codegen/c/emitter.h, emitter_prefetch.cpp): in a
program on one work-item, a pass that reads again a block an earlier pass read asks, per 16
elements, for the same elements of the next program's block. The prefetch is a hint: these
tests check that kernels so built compute every element right on whole and partial blocks,
one- and two-dimensional grids and strided views, and that the hint is where it is due."""

import re

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK = ninetoothed.Symbol("BLOCK", constexpr=True)


def _softmax_arrangement(input, output):
    return input.tile((1, BLOCK)), output.tile((1, BLOCK))


def _softmax_application(input, output):
    # As upstream's tutorial writes it: the exp pass reads the input block a second time.
    row_minus_max = input - ntl.max(input)
    numerator = ntl.exp(row_minus_max)
    denominator = ntl.sum(numerator)
    output = numerator / denominator  # noqa: F841


softmax_kernel = ninetoothed.make(
    _softmax_arrangement, _softmax_application, (Tensor(2, other=float("-inf")), Tensor(2))
)


def _work_item_source(source):
    return source[source.index("// A program on one work-item.") :]


def _prefetched_params(source):
    return set(re.findall(r"NT_PREFETCH\(&nt_p(\d+)\[[^;]*nt_next_pid_\d", _work_item_source(source)))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("rows, cols, block", ((67, 256, 256), (5, 300, 512), (33, 1024, 1024)))
def test_softmax_rows(dtype, rows, cols, block):
    # Logits spread wide enough that some numerators are denormal or zero.
    input = (torch.randn(rows, cols) * 30).to(dtype)
    output = torch.full_like(input, float("nan"))
    softmax_kernel(input, output, BLOCK=block)
    expected = torch.softmax(input.double(), dim=-1)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=1e-6)
    # The exp pass reads the input again, its float32 blocks with unit stride: prefetched.
    assert _prefetched_params(softmax_kernel.source) == ({"0"} if dtype == torch.float32 else set())


def _blockwise_arrangement(input, output):
    return input.tile((1, BLOCK)), output.tile((1, BLOCK))


def _blockwise_application(input, output):
    output = input - ntl.max(input)  # noqa: F841


@pytest.mark.parametrize("transposed", (False, True))
@pytest.mark.parametrize("rows, cols, block", ((9, 3 * 64 + 10, 64), (4, 256, 32), (1, 100, 16)))
def test_blockwise_grid_of_two_dimensions(transposed, rows, cols, block):
    # Several programs a row (the next program's digits carry from column to row), the last
    # block of each row partial; a transposed input steps by its row length, not by 1.
    # A partial block's padding reads -inf, so its max is that of its elements.
    tensors = (Tensor(2, other=float("-inf")), Tensor(2))
    kernel = ninetoothed.make(_blockwise_arrangement, _blockwise_application, tensors)
    input = torch.randn(cols, rows).t() if transposed else torch.randn(rows, cols)
    output = torch.full((rows, cols), float("nan"))
    kernel(input, output, BLOCK=block)
    padded = torch.nn.functional.pad(input, (0, -cols % block), value=float("-inf"))
    block_max = padded.reshape(rows, -1, block).amax(-1).repeat_interleave(block, dim=1)[:, :cols]
    torch.testing.assert_close(output, input - block_max, rtol=0, atol=0)  # one float32 rounding
    body = _work_item_source(kernel.source)
    assert _prefetched_params(kernel.source) == {"0"}
    # Under the input's unit-stride test, as its vector hint: a strided view prefetches nothing.
    test = re.search(r"#if defined\(__clang__\)(( && NT_UNIT_\w+)+)\n\s*if \(nt_next_exists\)", body)
    assert test and re.search(r"NT_UNIT_\w+_stride_1\b", test.group(1)), body


def test_a_single_pass_prefetches_nothing():
    kernel = ninetoothed.make(
        lambda x, y, z: (x.tile((BLOCK,)), y.tile((BLOCK,)), z.tile((BLOCK,))),
        _add_application,
        (Tensor(1), Tensor(1), Tensor(1)),
    )
    x, y = torch.randn(1000), torch.randn(1000)
    z = torch.full_like(x, float("nan"))
    kernel(x, y, z, BLOCK=128)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    assert "NT_PREFETCH(&" not in kernel.source


def _add_application(x, y, z):
    z = x + y  # noqa: F841
