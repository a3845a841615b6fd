"""Counter-based random numbers: ntl.rand and ntl.randn (dropout as the user writes it)."""

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def _arrangement(x, p, seed, y, BLOCK=ninetoothed.block_size()):
    return x.tile((BLOCK,)), p, seed, y.tile((BLOCK,))


def _dropout(x, p, seed, y):
    keep = ntl.rand(seed, x.offsets()) > p
    y = ntl.where(keep, x / (1 - p), 0.0)  # noqa: F841


@pytest.mark.parametrize("p", (0.1, 0.5, 0.9))
def test_dropout(p):
    kernel = ninetoothed.make(_arrangement, _dropout, (Tensor(1), Tensor(0), Tensor(0), Tensor(1)))
    x = torch.randn(100_003)
    x[x == 0] = 1.0  # a kept zero would look dropped
    first = torch.full_like(x, float("nan"))
    second = torch.full_like(x, float("nan"))
    seed = int(torch.randint(0, 2**31, ()))
    kernel(x, p, seed, first)
    kernel(x, p, seed, second)
    kept = first != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 0.05
    scale = 1 - torch.tensor(p, dtype=torch.float32)  # computed as the kernel does, in float32
    assert torch.equal(first[kept], x[kept] / scale)
    assert torch.equal(first, second)  # same seed, same mask
    other_seed = torch.full_like(x, float("nan"))
    kernel(x, p, seed + 1, other_seed)
    assert not torch.equal(first != 0, other_seed != 0)


def _normal(x, p, seed, y):
    y = ntl.randn(seed, x.offsets()) + ntl.rand(seed, x.offsets()) * 0  # noqa: F841


def test_randn_is_standard_normal_and_deterministic():
    kernel = ninetoothed.make(_arrangement, _normal, (Tensor(1), Tensor(0), Tensor(0), Tensor(1)))
    x = torch.empty(200_000)
    y = torch.full_like(x, float("nan"))
    kernel(x, 0.0, 7, y)
    assert torch.isfinite(y).all()
    assert abs(y.mean().item()) < 0.02
    assert abs(y.std().item() - 1) < 0.02
    again = torch.full_like(x, float("nan"))
    kernel(x, 0.0, 7, again)
    assert torch.equal(y, again)


def test_uniform_numbers_of_known_offsets():
    """rand of (seed, offset) depends only on them: a shuffled launch order cannot change it."""

    def uniform(x, p, seed, y):
        y = ntl.rand(seed, x.offsets())  # noqa: F841

    kernel = ninetoothed.make(_arrangement, uniform, (Tensor(1), Tensor(0), Tensor(0), Tensor(1)))
    whole = torch.full((4096,), float("nan"))
    kernel(torch.empty(4096), 0.0, 123, whole)
    assert ((whole >= 0) & (whole < 1)).all()
    base = torch.full((8192,), float("nan"))
    view = base[::2]  # strided: offsets() are flat offsets over the source's strides
    kernel(torch.empty(4096), 0.0, 123, view)
    assert torch.isnan(base[1::2]).all()
    assert torch.equal(view, whole)
