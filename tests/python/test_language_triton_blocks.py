"""Acceptance tests: Triton's block operations in `ninetoothed.language`: shapes (reshape,
view, ravel, permute, trans, expand_dims, broadcast, broadcast_to, flip, cat, join, split,
interleave), scans and reductions with combine functions (cumsum, cumprod,
associative_scan, reduce), sort, topk, gather, histogram.

Each kernel reads one (TM, TN) block of a (19, 45) input per program (partial blocks: masked
elements read 0) and writes the operation's result block to its own slot of an output of shape
(programs, programs, *result_shape), poisoned first. The reference zero-pads the input to
whole blocks and applies torch's operation to every block.
"""

import functools
import zlib

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

TM, TN = 8, 16
M, N = 19, 45
GRID = (3, 3)


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def blocks_of(x):
    """x zero-padded to whole blocks, as (3, 3, TM, TN): what each program loads."""
    padded = torch.zeros(GRID[0] * TM, GRID[1] * TN, dtype=x.dtype)
    padded[: x.shape[0], : x.shape[1]] = x
    return padded.view(GRID[0], TM, GRID[1], TN).permute(0, 2, 1, 3)


@functools.lru_cache(maxsize=None)
def kernel(fn, result_shape):
    dims = len(result_shape)

    def arrangement(x, y):
        blocks = y.tile((1, 1) + result_shape).squeeze(tuple(range(2, 2 + dims)))
        blocks.dtype = blocks.dtype.squeeze((0, 1))
        return x.tile((TM, TN)), blocks

    def application(x, y):
        y = fn(x)  # noqa: F841

    return ninetoothed.make(arrangement, application, (Tensor(2), Tensor(2 + dims)))


def run(fn, x, result_shape, dtype=None):
    dtype = dtype or x.dtype
    fill = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).min + 5
    output = torch.full(GRID + tuple(result_shape), fill, dtype=dtype)
    kernel(fn, tuple(result_shape))(x, output)
    return output


def data(dtype):
    return torch.randn(M, N).to(dtype)


# --- shapes: pure data movement, exact -----------------------------------------------------------

SHAPES = {
    "reshape": (lambda x: ntl.reshape(x, (16, 8)), (16, 8), lambda b: b.reshape(3, 3, 16, 8)),
    "reshape_varargs": (lambda x: ntl.reshape(x, 4, 32), (4, 32), lambda b: b.reshape(3, 3, 4, 32)),
    "reshape_method": (lambda x: x.reshape(2, 4, 16), (2, 4, 16), lambda b: b.reshape(3, 3, 2, 4, 16)),
    "view": (lambda x: ntl.view(x, (128,)), (128,), lambda b: b.reshape(3, 3, 128)),
    "ravel": (ntl.ravel, (128,), lambda b: b.reshape(3, 3, 128)),
    "permute": (lambda x: ntl.permute(x, 1, 0), (16, 8), lambda b: b.transpose(2, 3)),
    "permute_tuple": (lambda x: ntl.permute(ntl.reshape(x, (2, 4, 16)), (2, 0, 1)), (16, 2, 4),
                      lambda b: b.reshape(3, 3, 2, 4, 16).permute(0, 1, 4, 2, 3)),
    "trans": (ntl.trans, (16, 8), lambda b: b.transpose(2, 3)),
    "trans_dims": (lambda x: ntl.trans(ntl.reshape(x, (2, 4, 16)), 1, 2, 0), (4, 16, 2),
                   lambda b: b.reshape(3, 3, 2, 4, 16).permute(0, 1, 3, 4, 2)),
    "T": (lambda x: x.T, (16, 8), lambda b: b.transpose(2, 3)),
    "expand_dims": (lambda x: ntl.expand_dims(x, 0), (1, 8, 16), lambda b: b.unsqueeze(2)),
    "expand_dims_tuple": (lambda x: ntl.expand_dims(x, (0, -1)), (1, 8, 16, 1), lambda b: b[:, :, None, :, :, None]),
    "broadcast_to": (lambda x: ntl.broadcast_to(ntl.max(x, 1, keep_dims=True), (8, 16)), (8, 16),
                     lambda b: b.max(3, keepdim=True).values.expand(3, 3, 8, 16)),
    "broadcast_to_varargs": (lambda x: ntl.broadcast_to(ntl.max(x, 0)[None, :], 4, 16), (4, 16),
                             lambda b: b.max(2).values[:, :, None, :].expand(3, 3, 4, 16)),
    "broadcast": (lambda x: ntl.broadcast(x, ntl.max(x, 1, keep_dims=True))[1] - x * 0, (8, 16),
                  lambda b: b.max(3, keepdim=True).values.expand(3, 3, 8, 16)),
    "flip": (ntl.flip, (8, 16), lambda b: b.flip(3)),
    "flip_dim0": (lambda x: ntl.flip(x, 0), (8, 16), lambda b: b.flip(2)),
    "cat": (lambda x: ntl.cat(x, ntl.flip(x, 0)), (16, 16), lambda b: torch.cat([b, b.flip(2)], 2)),
    "join": (lambda x: ntl.join(x, ntl.flip(x)), (8, 16, 2), lambda b: torch.stack([b, b.flip(3)], -1)),
    "split_of_join": (lambda x: ntl.split(ntl.join(x, ntl.flip(x)))[1], (8, 16), lambda b: b.flip(3)),
    "split": (lambda x: ntl.split(ntl.reshape(x, (8, 8, 2)))[1], (8, 8), lambda b: b.reshape(3, 3, 8, 8, 2)[..., 1]),
    "split_method": (lambda x: x.reshape(8, 8, 2).split()[0], (8, 8), lambda b: b.reshape(3, 3, 8, 8, 2)[..., 0]),
    "interleave": (lambda x: ntl.interleave(x, ntl.flip(x)), (8, 32),
                   lambda b: torch.stack([b, b.flip(3)], -1).reshape(3, 3, 8, 32)),
}


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_operation(name, dtype):
    fn, result_shape, reference = SHAPES[name]
    x = data(dtype)
    output = run(fn, x, result_shape)
    assert torch.equal(output, reference(blocks_of(x)))


def test_shape_errors():
    x = data(torch.float32)
    with pytest.raises(ValueError, match="numbers of elements differ"):
        run(lambda b: ntl.reshape(b, (16, 16)), x, (16, 16))
    with pytest.raises(ValueError, match="permutation"):
        run(lambda b: ntl.permute(b, 0, 0), x, (8, 8))
    with pytest.raises(ValueError, match="last dim has size 2"):
        run(lambda b: ntl.split(b)[0], x, (8,))
    with pytest.raises(IndexError, match="out of range"):
        run(lambda b: ntl.flip(b, 2), x, (8, 16))


# --- scans --------------------------------------------------------------------------------------


def affine(a_prev, b_prev, a, b):
    """The composition of h -> a_prev * h + b_prev and then h -> a * h + b (associative)."""
    return a_prev * a, b_prev * a + b


def linear_recurrence(x):
    a, b = ntl.associative_scan((ntl.sigmoid(x), x), 1, affine)
    return b


def reference_recurrence(blocks):
    a, b = torch.sigmoid(blocks), blocks
    h = torch.zeros_like(b[..., 0])
    out = torch.empty_like(b)
    for j in range(b.shape[-1]):
        h = a[..., j] * h + b[..., j]
        out[..., j] = h
    return out


def last_positive(previous, current):
    return current if current > 0 else previous


SCANS = {
    "cumsum": (lambda x: ntl.cumsum(x, 1), lambda b: b.cumsum(3)),
    "cumsum_axis0": (lambda x: ntl.cumsum(x, 0), lambda b: b.cumsum(2)),
    "cumsum_reverse": (lambda x: ntl.cumsum(x, 1, reverse=True), lambda b: b.flip(3).cumsum(3).flip(3)),
    "cumsum_method": (lambda x: x.cumsum(1), lambda b: b.cumsum(3)),
    "cumprod": (lambda x: ntl.cumprod(x * 0.1 + 1, 1), lambda b: (b * 0.1 + 1).cumprod(3)),
    "cumprod_reverse": (lambda x: ntl.cumprod(x * 0.1 + 1, 0, reverse=True),
                        lambda b: (b * 0.1 + 1).flip(2).cumprod(2).flip(2)),
    "associative_scan_tuple": (linear_recurrence, reference_recurrence),
    "associative_scan_conditional": (lambda x: ntl.associative_scan(x, 1, last_positive),
                                     None),
}


def reference_last_positive(blocks):
    out = blocks.clone()
    for j in range(1, out.shape[-1]):
        out[..., j] = torch.where(blocks[..., j] > 0, blocks[..., j], out[..., j - 1])
    return out


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("name", sorted(SCANS))
def test_scan(name, dtype):
    fn, reference = SCANS[name]
    reference = reference or reference_last_positive
    x = data(dtype)
    output = run(fn, x, (TM, TN))
    expected = reference(blocks_of(x).double())
    tolerance = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(output.double(), expected.to(dtype).double(), **tolerance)


def test_cumsum_of_int8_is_int32():
    x = torch.randint(-128, 128, (M, N), dtype=torch.int8)
    output = run(lambda b: ntl.cumsum(b, 1), x, (TM, TN), torch.int32)
    assert torch.equal(output, blocks_of(x).int().cumsum(3).int())


# --- reductions with a combine function ----------------------------------------------------------


def maximum_combine(a, b):
    return ntl.maximum(a, b)


def argmax_combine(value_a, index_a, value_b, index_b):
    larger = (value_b > value_a) | ((value_b == value_a) & (index_b < index_a))
    return ntl.where(larger, value_b, value_a), ntl.where(larger, index_b, index_a)


def argmax_by_reduce(x):
    index = ntl.broadcast_to(ntl.arange(0, TN)[None, :], (TM, TN))
    value, where = ntl.reduce((x, index), 1, argmax_combine, keep_dims=True)
    return where.to(ntl.float32) * 1000 + value


def sum_of_squares(a, b):
    total = a + b * b
    return total


REDUCTIONS = {
    "reduce_max": (lambda x: ntl.reduce(x, 1, maximum_combine), (8,), lambda b: b.max(3).values),
    "reduce_max_axis0": (lambda x: ntl.reduce(x, 0, maximum_combine), (16,), lambda b: b.max(2).values),
    "reduce_all_keep_dims": (lambda x: ntl.reduce(x, None, maximum_combine, keep_dims=True), (1, 1),
                             lambda b: b.amax((2, 3), keepdim=True)),
    "reduce_lambda": (lambda x: ntl.reduce(x, 1, lambda a, b: a + b), (8,), lambda b: b.sum(3)),
    "reduce_method": (lambda x: x.reduce(0, maximum_combine), (16,), lambda b: b.max(2).values),
    "reduce_tuple_argmax": (argmax_by_reduce, (8, 1),
                            lambda b: b.argmax(3, keepdim=True).double() * 1000 + b.max(3, keepdim=True).values),
    "reduce_let_in_combine": (lambda x: ntl.reduce(x, 1, sum_of_squares), (8,),
                              lambda b: b[..., 0] + (b[..., 1:] ** 2).sum(3)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduce(name):
    fn, result_shape, reference = REDUCTIONS[name]
    x = data(torch.float32)
    output = run(fn, x, result_shape)
    torch.testing.assert_close(output.double(), reference(blocks_of(x).double()), rtol=1e-5, atol=1e-4)


def storing_combine(a, b):
    for i in range(2):
        a = a + b
    return a


def test_combine_function_may_only_compute_values():
    with pytest.raises(ValueError, match="may only compute values"):
        run(lambda x: ntl.reduce(x, 1, storing_combine), data(torch.float32), (8,))


# --- sort, topk, gather, histogram ----------------------------------------------------------------

SORTS = {
    "sort": (ntl.sort, (8, 16), lambda b: b.sort(3).values),
    "sort_descending": (lambda x: ntl.sort(x, descending=True), (8, 16), lambda b: b.sort(3, descending=True).values),
    "sort_dim0": (lambda x: ntl.sort(x, 0), (8, 16), lambda b: b.sort(2).values),
    "sort_method": (lambda x: x.sort(1, True), (8, 16), lambda b: b.sort(3, descending=True).values),
    "topk": (lambda x: ntl.topk(x, 5), (8, 5), lambda b: b.topk(5, 3).values),
    "topk_dim0": (lambda x: ntl.topk(x, 3, dim=0), (3, 16), lambda b: b.topk(3, 2).values),
    "bitonic_merge": (lambda x: ntl.bitonic_merge(ntl.sort(x, descending=True)), (8, 16), lambda b: b.sort(3).values),
}


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.int32))
@pytest.mark.parametrize("name", sorted(SORTS))
def test_sort(name, dtype):
    fn, result_shape, reference = SORTS[name]
    x = data(torch.float32)
    x = (x * 1000).to(dtype) if dtype == torch.int32 else x.to(dtype)
    output = run(fn, x, result_shape)
    blocks = blocks_of(x)
    expected = reference(blocks.float()).to(dtype) if dtype == torch.float16 else reference(blocks)  # no half topk
    assert torch.equal(output, expected)


def gathered(x):
    rows = ntl.arange(0, TM)[:, None]
    columns = ntl.arange(0, TN)[None, :]
    index = (columns * 7 + rows * 3) % TN
    return ntl.gather(x, index, 1) + ntl.gather(x, (rows * 5) % TM + columns * 0, 0)


def reference_gathered(blocks):
    rows = torch.arange(TM)[:, None]
    columns = torch.arange(TN)[None, :]
    index = ((columns * 7 + rows * 3) % TN).expand(3, 3, TM, TN)
    row_index = ((rows * 5) % TM + columns * 0).expand(3, 3, TM, TN)
    return torch.gather(blocks, 3, index) + torch.gather(blocks, 2, row_index)


def gathered_fewer_rows(x):
    index = (ntl.arange(0, 4)[:, None] * 2 + ntl.arange(0, TN)[None, :] * 0)
    return ntl.gather(x, index, 0)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_gather(dtype):
    x = data(dtype)
    output = run(gathered, x, (TM, TN))
    torch.testing.assert_close(output.double(), reference_gathered(blocks_of(x).double()).to(dtype).double(),
                               rtol=1e-3 if dtype == torch.float16 else 0, atol=1e-3 if dtype == torch.float16 else 0)
    fewer = run(gathered_fewer_rows, x, (4, TN))
    assert torch.equal(fewer, blocks_of(x)[:, :, ::2, :])


def histogram_arrangement(x, y):
    return x.tile((64,)), y.tile((1, 10)).squeeze(1)


def histogram_application(x, y):
    y = ntl.histogram(x, 10) + ntl.histogram(x, 10, mask=x % 2 == 0) * 100  # noqa: F841


def test_histogram():
    kernel = ninetoothed.make(histogram_arrangement, histogram_application, (Tensor(1), Tensor(2)))
    x = torch.randint(-3, 13, (150,), dtype=torch.int32)
    y = torch.full((3, 10), -1, dtype=torch.int32)
    kernel(x, y)
    padded = torch.zeros(192, dtype=torch.int64)
    padded[:150] = x
    expected = []
    for block in padded.view(3, 64):
        inside = block[(block >= 0) & (block < 10)]
        even = inside[inside % 2 == 0]
        expected.append(torch.bincount(inside, minlength=10) + torch.bincount(even, minlength=10) * 100)
    assert torch.equal(y, torch.stack(expected).int())


def test_dot_with_acc_and_out_dtype():
    x = data(torch.float32)
    output = run(lambda b: ntl.dot(b, ntl.trans(b), acc=ntl.full((TM, TM), 1.5, ntl.float32)), x, (TM, TM))
    blocks = blocks_of(x).double()
    torch.testing.assert_close(output.double(), blocks @ blocks.transpose(2, 3) + 1.5, rtol=1e-5, atol=1e-5)
    half = run(lambda b: ntl.dot(b, ntl.trans(b), out_dtype=ntl.float16), x, (TM, TM), torch.float16)
    torch.testing.assert_close(half.double(), (blocks @ blocks.transpose(2, 3)).half().double(), rtol=2e-3, atol=2e-3)
