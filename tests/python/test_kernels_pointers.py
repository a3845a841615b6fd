"""Source indexing, raw pointers and atomics inside applications."""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BM = Symbol("BM", constexpr=True)
BN = Symbol("BN", constexpr=True)


def _clone_arrangement(x, y):
    return x.tile((BM, BN)), y.tile((BM, BN))


def _clone_by_blocks(x, y):
    y = x  # noqa: F841


def _clone_by_load(x, y):
    rows, cols = x.offsets(0)[:, None], x.offsets(1)[None, :]
    pointers = x.source.data_ptr() + rows * x.source.stride(0) + cols * x.source.stride(1)
    y = ntl.load(pointers, mask=(rows < x.source.shape[0]) & (cols < x.source.shape[1]))  # noqa: F841


def _clone_by_source_read(x, y):
    y = x.source[x.offsets(0)[:, None], x.offsets(1)[None, :]]  # noqa: F841


def _clone_by_source_write(x, y):
    y.source[y.offsets(0)[:, None], y.offsets(1)[None, :]] = x


def _clone_by_store(x, y):
    rows, cols = y.offsets(0)[:, None], y.offsets(1)[None, :]
    pointers = y.source.data_ptr() + rows * y.source.stride(0) + cols * y.source.stride(1)
    ntl.store(pointers, x, mask=(rows < y.source.shape[0]) & (cols < y.source.shape[1]))


@pytest.mark.parametrize(
    "application",
    (_clone_by_blocks, _clone_by_load, _clone_by_source_read, _clone_by_source_write, _clone_by_store),
)
def test_clone_of_a_strided_matrix(application):
    kernel = ninetoothed.make(_clone_arrangement, application, (Tensor(2), Tensor(2)))
    x = torch.randn(700, 300)[:641, 5:285]  # 641 x 280, row stride 300
    output_base = torch.full((700, 300), float("nan"))
    y = output_base[3:644, 10:290]
    kernel(x, y, BM=32, BN=64)
    assert torch.equal(y, x)
    untouched = torch.ones(700, 300, dtype=torch.bool)
    untouched[3:644, 10:290] = False
    assert torch.isnan(output_base[untouched]).all()


def _sum_arrangement(input, output, BLOCK=ninetoothed.block_size()):
    input_arranged = input.tile((BLOCK,))
    return input_arranged, output.tile((1,)).expand((input_arranged.shape[0],))


def _sum_application(input, output):
    ntl.atomic_add(output.source.data_ptr(), ntl.sum(input))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64, torch.int32, torch.int64))
@pytest.mark.parametrize("n", (1, 5000, 1_000_003))
def test_whole_tensor_sum_by_atomic_add(dtype, n):
    kernel = ninetoothed.make(_sum_arrangement, _sum_application, (Tensor(1), Tensor(1)))
    if dtype.is_floating_point:
        x = torch.randn(n, dtype=dtype)
    else:
        x = torch.randint(-1000, 1000, (n,), dtype=dtype)
    output = torch.zeros(1, dtype=dtype)
    kernel(x, output)
    expected = x.double().sum()
    if dtype.is_floating_point:
        tolerance = 1e-9 * n if dtype == torch.float64 else 1e-4 * n**0.5 * 10
        assert abs(output.double().item() - expected.item()) <= tolerance
    else:
        assert output.item() == int(expected.item())


def _gather_application(x, y):
    # Reads past the end of each row come from `other` of the load.
    cols = x.offsets(1)[None, :] + 1
    rows = x.offsets(0)[:, None]
    y = ntl.load(x.source.data_ptr() + rows * x.source.stride(0) + cols, mask=cols < x.source.shape[1], other=-5.0)  # noqa: E501, F841


def test_load_with_mask_and_other():
    kernel = ninetoothed.make(_clone_arrangement, _gather_application, (Tensor(2), Tensor(2)))
    x = torch.randn(9, 13)
    y = torch.full((9, 13), float("nan"))
    kernel(x, y, BM=4, BN=8)
    expected = torch.cat((x[:, 1:], torch.full((9, 1), -5.0)), dim=1)
    assert torch.equal(y, expected)


def test_pointer_misuse_is_an_error():
    def float_offsets(x, y):
        y = ntl.load(x.source.data_ptr() + 0.5)  # noqa: F841

    kernel = ninetoothed.make(_clone_arrangement, float_offsets, (Tensor(2), Tensor(2)))
    with pytest.raises(TypeError, match="pointers"):  # raised by the launch that traces with real dtypes
        kernel(torch.ones(2, 2), torch.ones(2, 2), BM=2, BN=2)

    def half_atomics(input, output):
        ntl.atomic_add(output.source.data_ptr(), ntl.sum(input))

    kernel = ninetoothed.make(_sum_arrangement, half_atomics, (Tensor(1), Tensor(1)))
    with pytest.raises(TypeError, match="atomic_add"):
        kernel(torch.ones(4, dtype=torch.float16), torch.zeros(1, dtype=torch.float16))
