"""Acceptance tests: Triton's atomics in `ninetoothed.language` (atomic_add, atomic_max,
atomic_min, atomic_and, atomic_or, atomic_xor, atomic_xchg, atomic_cas), which return the old
values. Every element of an odd-sized input is applied to one of 7 target elements, from many
programs at once; masked elements leave the target alone and return 0."""

import functools
import zlib

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)
BLOCK = 64
TARGETS = 7
SIZE = 1001


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def arrangement(x, target, old):
    blocks = x.tile((BLOCK_SIZE,))
    return blocks, target.tile((-1,)).expand((blocks.shape[0],)), old.tile((BLOCK_SIZE,))


@functools.lru_cache(maxsize=None)
def kernel(op):
    def application(x, target, old):
        offsets = x.offsets()
        mask = (offsets < x.source.shape[0]) & (offsets % 5 != 0)
        old = op(target.source.data_ptr() + offsets % TARGETS, x, mask)  # noqa: F841

    return ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1)))


def run(op, x, initial):
    target = initial.clone()
    old = torch.full_like(x, 99)
    kernel(op)(x, target, old, BLOCK_SIZE=BLOCK)
    return target, old


def per_target(x):
    """The unmasked elements applied to each target, in index order."""
    index = torch.arange(x.numel())
    kept = index % 5 != 0
    return [x[kept & (index % TARGETS == t)] for t in range(TARGETS)]


def masked(x):
    return torch.arange(x.numel()) % 5 == 0


def values(dtype):
    if dtype.is_floating_point:
        return (torch.randn(SIZE) * 10).to(dtype)
    return torch.randint(-(2**20), 2**20, (SIZE,)).to(dtype)


def check_masked_old_values(x, old):
    assert (old[masked(x)] == 0).all()


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64))
def test_atomic_add_counts(dtype):
    x = torch.ones(SIZE, dtype=dtype)
    initial = torch.arange(TARGETS, dtype=dtype) * 1000
    target, old = run(ntl.atomic_add, x, initial)
    index = torch.arange(SIZE)
    for t, contributions in enumerate(per_target(x)):
        assert target[t] == initial[t] + len(contributions)
        seen = old[(index % TARGETS == t) & ~masked(x)]
        assert sorted(seen.tolist()) == list(range(initial[t], initial[t] + len(contributions)))
    check_masked_old_values(x, old)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float64))
def test_atomic_add_floats(dtype):
    x = values(dtype)
    initial = torch.randn(TARGETS, dtype=dtype)
    target, old = run(lambda p, v, m: ntl.atomic_add(p, v, mask=m, sem="relaxed", scope="gpu"), x, initial)
    for t, contributions in enumerate(per_target(x)):
        torch.testing.assert_close(target[t].double(), initial[t].double() + contributions.double().sum(),
                                   rtol=1e-5, atol=1e-4)
    check_masked_old_values(x, old)


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64, torch.float32, torch.float64))
@pytest.mark.parametrize("name", ("max", "min"))
def test_atomic_max_min(name, dtype):
    x = values(dtype)
    initial = values(dtype)[:TARGETS]
    op = ntl.atomic_max if name == "max" else ntl.atomic_min
    target, old = run(op, x, initial)
    index = torch.arange(SIZE)
    for t, contributions in enumerate(per_target(x)):
        everything = torch.cat([initial[t : t + 1], contributions])
        expected = everything.max() if name == "max" else everything.min()
        assert target[t] == expected
        seen = old[(index % TARGETS == t) & ~masked(x)]
        assert ((seen <= expected) if name == "max" else (seen >= expected)).all()
        assert torch.isin(seen, everything).all()
    check_masked_old_values(x, old)


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64))
@pytest.mark.parametrize("name", ("and", "or", "xor"))
def test_atomic_bitwise(name, dtype):
    x = values(dtype) | (1 << 22) if name == "and" else values(dtype)
    initial = values(dtype)[:TARGETS] | (1 << 22)
    op = {"and": ntl.atomic_and, "or": ntl.atomic_or, "xor": ntl.atomic_xor}[name]
    ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name]
    target, old = run(op, x, initial)
    for t, contributions in enumerate(per_target(x)):
        everything = torch.cat([initial[t : t + 1], contributions]).numpy()
        assert target[t].item() == ufunc.reduce(everything)
    check_masked_old_values(x, old)


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64, torch.float32, torch.float64))
def test_atomic_xchg(dtype):
    x = values(dtype)
    initial = values(dtype)[:TARGETS]
    target, old = run(ntl.atomic_xchg, x, initial)
    index = torch.arange(SIZE)
    for t, contributions in enumerate(per_target(x)):
        # Each exchange returns what the one before it left: the olds and the final value are
        # the initial value and the contributions, each once.
        seen = old[(index % TARGETS == t) & ~masked(x)]
        observed = sorted(seen.tolist() + [target[t].item()])
        assert observed == sorted([initial[t].item()] + contributions.tolist())
    check_masked_old_values(x, old)


def cas_first_writer(pointers, x, mask):
    # Only elements that are not masked try; the element compared against is the initial -1.
    return ntl.atomic_cas(pointers, ntl.where(mask, -1, -2), x)


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64, torch.float32))
def test_atomic_cas_first_writer_wins(dtype):
    x = (torch.arange(SIZE) + 1).to(dtype)
    initial = torch.full((TARGETS,), -1, dtype=dtype)
    target, old = run(cas_first_writer, x, initial)
    index = torch.arange(SIZE)
    for t in range(TARGETS):
        tried = (index % TARGETS == t) & ~masked(x)
        winners = tried & (old == -1)
        assert winners.sum() == 1
        assert target[t] == x[winners].item()
        assert (old[tried & ~winners] == target[t]).all()
        untried = (index % TARGETS == t) & masked(x)
        # Compared with -2: no change; the old value is -1 or the winner's, by timing.
        assert ((old[untried] == target[t]) | (old[untried] == -1)).all()


def test_unsupported_atomics_are_type_errors():
    with pytest.raises(TypeError, match="integers"):
        run(ntl.atomic_and, values(torch.float32), torch.zeros(TARGETS))
    with pytest.raises(TypeError, match="float16"):
        run(ntl.atomic_max, values(torch.float16), torch.zeros(TARGETS, dtype=torch.float16))


def test_old_values_feed_other_computations():
    """The old values are a block like any other: here, ticket numbers."""

    def tickets(pointers, x, mask):
        return ntl.atomic_add(pointers, 1, mask) * 2 + 1

    x = torch.ones(SIZE, dtype=torch.int32)
    target, old = run(tickets, x, torch.zeros(TARGETS, dtype=torch.int32))
    index = torch.arange(SIZE)
    for t, contributions in enumerate(per_target(x)):
        seen = old[(index % TARGETS == t) & ~masked(x)]
        assert sorted(seen.tolist()) == [2 * k + 1 for k in range(len(contributions))]
    assert (old[masked(x)] == 1).all()
