"""Launches over device memory, as on a discrete GPU (runtime/device_memory.h).

A discrete device gets each tensor in a pooled device buffer: copied in when the kernel reads it or
may leave some of it unwritten, copied back when the kernel writes it, large regions through pinned
staging slots. PoCL keeps host memory (nothing is copied), so these tests force the discrete path
with tiny slots (many pieces per tensor, a partial last one) and check every result, what was
copied, and that whatever a kernel does not write keeps its value.
"""

import sys
import threading
import pathlib

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor, _core

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))

from tutorial_kernels import add_kernel, matmul_application, softmax_kernel  # noqa: E402

# Copies between host tensors and a discrete OpenCL device: CUDA tensors have none.
pytestmark = pytest.mark.host_tensors

SLOT_BYTES = 4096
DIRECT_LIMIT = 1024

BLOCK = Symbol("BLOCK", constexpr=True)
BLOCK_M = Symbol("BLOCK_M", constexpr=True)
BLOCK_N = Symbol("BLOCK_N", constexpr=True)
BLOCK_K = Symbol("BLOCK_K", constexpr=True)


def add_arrangement(x, y, z):
    return x.tile((BLOCK,)), y.tile((BLOCK,)), z.tile((BLOCK,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


def matmul_arrangement(input, other, output):  # the tutorial's, with constexpr block sizes
    output_arranged = output.tile((BLOCK_M, BLOCK_N))
    input_arranged = input.tile((BLOCK_M, BLOCK_K)).tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BLOCK_K, BLOCK_N)).tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged


add = ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))
matmul = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)))


@pytest.fixture(autouse=True)
def discrete_memory():
    _core.set_discrete_memory_for_testing(True, slot_bytes=SLOT_BYTES, direct_limit=DIRECT_LIMIT)
    yield
    _core.set_discrete_memory_for_testing(False)


def copied(run):
    """What `run()` copied to and from device memory (bytes_in, bytes_out, staged_in, staged_out)."""
    before = _core.transfer_counts()
    run()
    after = _core.transfer_counts()
    return {key: after[key] - before[key] for key in after}


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("n", (1, 200, 1000, 100_003))
def test_an_output_written_whole_is_only_copied_back(n, dtype):
    x, y = torch.randn(n, dtype=dtype), torch.randn(n, dtype=dtype)
    z = torch.full((n,), float("nan"), dtype=dtype)
    moved = copied(lambda: add(x, y, z, BLOCK=128))
    assert torch.equal(z, (x.float() + y.float()).to(dtype))
    item = x.element_size()
    assert moved["bytes_in"] == 2 * n * item  # x and y, not z
    assert moved["bytes_out"] == n * item
    staged = n * item > DIRECT_LIMIT
    assert moved["staged_in"] == (2 * n * item if staged else 0)
    assert moved["staged_out"] == (n * item if staged else 0)


def test_an_output_with_gaps_keeps_them():
    # A column slice: the region the kernel's buffer spans holds other columns too.
    matrix = torch.randn(37, 301)
    sentinel = matrix.clone()
    x, y = torch.randn(37 * 200), torch.randn(37 * 200)
    out = matrix[:, 50:250]
    rows = ninetoothed.make(_rows_arrangement, _rows_application, (Tensor(2), Tensor(2), Tensor(2)))
    moved = copied(lambda: rows(x.view(37, 200), y.view(37, 200), out, BLOCK_M=8, BLOCK_N=64))
    expected = sentinel.clone()
    expected[:, 50:250] = x.view(37, 200) + y.view(37, 200)
    assert torch.equal(matrix, expected)
    span = (36 * 301 + 249 - 50 + 1) * 4
    assert moved["bytes_in"] == 2 * 37 * 200 * 4  # the output is written whole: not copied in
    assert moved["bytes_out"] == span  # its span comes back, and only its elements are copied out of it


def _halves_arrangement(x, even, odd):
    tile = (BLOCK_M, BLOCK_N)
    return x.tile(tile), even.tile(tile), odd.tile(tile)


def _halves_application(x, even, odd):
    even = x * 2  # noqa: F841
    odd = x - 1  # noqa: F841


def test_outputs_that_interleave_keep_each_other():
    # Two outputs, the even and the odd columns of one matrix: each one's span holds the other's
    # elements, so copying a span back whole would undo the other's results.
    kernel = ninetoothed.make(_halves_arrangement, _halves_application, (Tensor(2), Tensor(2), Tensor(2)))
    z = torch.full((33, 402), float("nan"))
    x = torch.randn(33, 201)
    kernel(x, z[:, ::2], z[:, 1::2], BLOCK_M=16, BLOCK_N=64)
    assert torch.equal(z[:, ::2], x * 2)
    assert torch.equal(z[:, 1::2], x - 1)


def _crop_arrangement(x, z):
    return x.tile((BLOCK,)), z.pad(((-1, 0),)).tile((BLOCK,))


def test_a_cropping_pad_keeps_what_it_crops():
    kernel = ninetoothed.make(_crop_arrangement, _copy_application, (Tensor(1), Tensor(1)))
    x, z = torch.randn(999), torch.randn(1000)
    first = z[0].item()
    moved = copied(lambda: kernel(x, z, BLOCK=128))
    assert z[0].item() == first
    assert torch.equal(z[1:], x)
    assert moved["bytes_in"] == (999 + 1000) * 4  # z too: the arrangement does not reach z[0]


def _rows_arrangement(x, y, z):
    return x.tile((BLOCK_M, BLOCK_N)), y.tile((BLOCK_M, BLOCK_N)), z.tile((BLOCK_M, BLOCK_N))


def _rows_application(x, y, z):
    z = x + y  # noqa: F841


def _copy_application(x, z):
    z = x  # noqa: F841


def _every_other_arrangement(x, z):
    return x.tile((BLOCK,)), z[::2].tile((BLOCK,))



def test_an_arrangement_that_skips_elements_keeps_them():
    kernel = ninetoothed.make(_every_other_arrangement, _copy_application, (Tensor(1), Tensor(1)))
    n = 5001
    z = torch.randn(2 * n - 1)
    before = z.clone()
    x = torch.randn(n)
    moved = copied(lambda: kernel(x, z, BLOCK=256))
    expected = before.clone()
    expected[::2] = x
    assert torch.equal(z, expected)
    assert moved["bytes_in"] == (n + 2 * n - 1) * 4  # z too: the kernel writes half of it


PARITY_BLOCK = Symbol("PARITY_BLOCK", constexpr=True)


def _parity_arrangement(x, z):
    return x.tile((PARITY_BLOCK,)), z.tile((PARITY_BLOCK,))


def _even_programs_application(x, z):
    if ntl.program_id(0) % 2 == 0:
        z = x * 2  # noqa: F841


def test_a_store_under_an_if_keeps_what_it_skips():
    kernel = ninetoothed.make(_parity_arrangement, _even_programs_application, (Tensor(1), Tensor(1)))
    n = 3001
    x, z = torch.randn(n), torch.randn(n)
    before = z.clone()
    moved = copied(lambda: kernel(x, z, PARITY_BLOCK=64))
    program = torch.arange(n) // 64
    assert torch.equal(z, torch.where(program % 2 == 0, x * 2, before))
    assert moved["bytes_in"] == 2 * n * 4


def _accumulate_application(x, z):
    z = z + x  # noqa: F841


def test_an_output_that_is_read_is_copied_in():
    kernel = ninetoothed.make(_parity_arrangement, _accumulate_application, (Tensor(1), Tensor(1)))
    x, z = torch.randn(2049), torch.randn(2049)
    expected = z + x
    kernel(x, z, PARITY_BLOCK=128)
    assert torch.equal(z, expected)


def test_an_output_that_is_also_an_input():
    x, y = torch.randn(4099), torch.randn(4099)
    expected = x + y
    add(x, y, x, BLOCK=256)
    assert torch.equal(x, expected)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_softmax_and_matmul(dtype):
    x = torch.randn(67, 1001, dtype=dtype)
    y = torch.full_like(x, float("nan"))
    softmax_kernel(x, y, BLOCK_SIZE=1024)
    loose = dtype == torch.float16
    reference = torch.softmax(x.double(), dim=-1)
    torch.testing.assert_close(y.double(), reference, rtol=1e-2 if loose else 1e-5, atol=1e-3 if loose else 1e-6)
    a, b = torch.randn(67, 45, dtype=dtype), torch.randn(45, 93, dtype=dtype)
    c = torch.full((67, 93), float("nan"), dtype=dtype)
    moved = copied(lambda: matmul(a, b, c, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16))
    reference = a.double() @ b.double()
    tolerance = dict(rtol=1e-2, atol=1e-2) if dtype == torch.float16 else dict(rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(c.double(), reference, **tolerance)
    item = a.element_size()
    assert moved["bytes_in"] == (a.numel() + b.numel()) * item
    assert moved["bytes_out"] == c.numel() * item


def test_threads_launch_at_once():
    failures = []

    def work(seed):
        generator = torch.Generator().manual_seed(seed)
        for i in range(30):
            n = 1 + (seed * 131 + i * 977) % 20000
            x, y = torch.randn(n, generator=generator), torch.randn(n, generator=generator)
            z = torch.full((n,), float("nan"))
            add_kernel(x, y, z)  # auto-tuned: candidates timed on scratch outputs
            if not torch.equal(z, x + y):
                failures.append((seed, i, n))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def _blocks_of_64(x, z):
    return x.tile((64,)), z.tile((64,))


def test_an_output_of_more_programs_than_the_grid_keeps_the_blocks_none_writes():
    """z has twice x's blocks, the grid's (upstream unravels each tensor over its own outermost
    shape): the grid's programs store its first half, and the rest must come back as it was, so it
    is copied in although every program stores its whole block."""
    kernel = ninetoothed.make(_blocks_of_64, _copy_application, (Tensor(1), Tensor(1)))
    x = torch.randn(2048)
    z = torch.full((4096,), float("nan"))
    kernel(x, z)
    assert torch.equal(z[:2048], x)
    assert z[2048:].isnan().all()
