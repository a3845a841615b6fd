"""Meta-operations against an independent numpy brute-force oracle.

`Tensor.eval` returns, for every element of an arranged tensor (all levels'
shapes joined), the flat offset of the source element it reads, or -1 where it
is masked. The oracle below computes the same thing without symbols: it starts
from an array holding each source element's flat offset and applies every
meta-operation to that array with explicit loops, numpy reshapes and -1
padding, keeping a list of how many dims each level has.
"""

import itertools
import math
import random

import numpy as np
import pytest

import ninetoothed
from ninetoothed import Symbol, Tensor

MAX_ELEMENTS = 40_000


class TooBig(Exception):
    """An operation would make the oracle's array larger than MAX_ELEMENTS."""


def _check_size(shape):
    if math.prod(shape) > MAX_ELEMENTS:
        raise TooBig(shape)


# --- The oracle -----------------------------------------------------------------


class Ref:
    """A hierarchical tensor as an array of source offsets (-1: masked).

    `levels[k]` is the number of dims of level k (outermost first); the array's
    axes are the levels' dims joined.
    """

    def __init__(self, array, levels):
        self.array = np.asarray(array, dtype=np.intp)
        self.levels = list(levels)
        assert sum(self.levels) == self.array.ndim

    @classmethod
    def source(cls, shape, strides=None):
        if strides is None:
            strides = []
            step = 1
            for size in reversed(shape):
                strides.insert(0, step)
                step *= size
        array = np.zeros(shape, dtype=np.intp)
        for index in itertools.product(*(range(size) for size in shape)):
            array[index] = sum(i * s for i, s in zip(index, strides))
        return cls(array, [len(shape)])

    def level_shapes(self):
        shapes, start = [], 0
        for n in self.levels:
            shapes.append(tuple(self.array.shape[start : start + n]))
            start += n
        return shapes

    def _apply(self, level, operation):
        """Apply `operation(array, n) -> (array, new_levels)` to one level.

        The operation sees the level's n dims first, followed by all other dims
        (which it must keep, in order, after the dims of its new levels).
        """
        before = sum(self.levels[:level])
        n = self.levels[level]
        moved = np.moveaxis(self.array, list(range(before, before + n)), list(range(n)))
        result, new_levels = operation(moved, n)
        m = sum(new_levels)
        result = np.moveaxis(result, list(range(m, m + before)), list(range(before)))
        return Ref(result, self.levels[:level] + new_levels + self.levels[level + 1 :])

    # Meta-operations. `level` says which level of the hierarchy they act on.

    def tile(self, tile_shape, strides=None, dilation=None, floor_mode=False, level=0):
        def operation(array, n):
            sizes, rest = array.shape[:n], array.shape[n:]
            tiles = [size if t == -1 else t for size, t in zip(sizes, tile_shape)]
            steps = [t if s == -1 else s for t, s in zip(tiles, strides or [-1] * n)]
            spacings = list(dilation or [1] * n)
            counts = []
            for size, t, step, spacing in zip(sizes, tiles, steps, spacings):
                extent = spacing * (t - 1) + 1  # source elements one tile spans
                count = 0
                if floor_mode:  # only tiles that fit entirely
                    while count * step + extent <= size:
                        count += 1
                else:  # tiles until one reaches the last element
                    while (count - 1) * step + extent < size:
                        count += 1
                counts.append(count)
            _check_size(counts + tiles + list(rest))
            out = np.full(tuple(counts) + tuple(tiles) + rest, -1, dtype=np.intp)
            for outer in itertools.product(*(range(c) for c in counts)):
                for inner in itertools.product(*(range(t) for t in tiles)):
                    position = tuple(o * s + i * d for o, i, s, d in zip(outer, inner, steps, spacings))
                    if all(0 <= p < size for p, size in zip(position, sizes)):
                        out[outer + inner] = array[position]
            return out, [n, n]

        return self._apply(level, operation)

    def expand(self, shape, level=0):
        def operation(array, n):
            sizes, rest = array.shape[:n], array.shape[n:]
            grown = [new != -1 and new != size for size, new in zip(sizes, shape)]
            assert all(size == 1 for size, g in zip(sizes, grown) if g)
            new_sizes = tuple(size if new == -1 else new for size, new in zip(sizes, shape))
            _check_size(new_sizes + rest)
            out = np.empty(new_sizes + rest, dtype=np.intp)
            for index in itertools.product(*(range(size) for size in new_sizes)):
                out[index] = array[tuple(0 if g else i for i, g in zip(index, grown))]
            return out, [n]

        return self._apply(level, operation)

    def squeeze(self, dims, level=0):
        dims = dims if isinstance(dims, (tuple, list)) else (dims,)

        def operation(array, n):
            removed = {d % n for d in dims}
            assert all(array.shape[d] == 1 for d in removed)
            return array[tuple(0 if d in removed else slice(None) for d in range(n))], [n - len(removed)]

        return self._apply(level, operation)

    def unsqueeze(self, dim, level=0):
        def operation(array, n):
            position = dim if dim >= 0 else dim + n + 1
            return np.expand_dims(array, position), [n + 1]

        return self._apply(level, operation)

    def permute(self, dims, level=0):
        def operation(array, n):
            order = [d + n if d < 0 else d for d in dims]
            return np.transpose(array, order + list(range(n, array.ndim))), [n]

        return self._apply(level, operation)

    def flatten(self, start_dim=None, end_dim=None, level=0):
        def operation(array, n):
            start = 0 if start_dim is None else start_dim % n
            end = n if end_dim is None else (end_dim + n if end_dim < 0 else end_dim)  # exclusive
            sizes = array.shape[:n]
            new_sizes = sizes[:start] + (math.prod(sizes[start:end]),) + sizes[end:]
            return array.reshape(new_sizes + array.shape[n:]), [len(new_sizes)]

        return self._apply(level, operation)

    def ravel(self, level=0):
        return Ref(self.array, self.levels[:level] + [sum(self.levels[level:])])

    def pad(self, pads, level=0):
        def operation(array, n):
            sizes, rest = array.shape[:n], array.shape[n:]
            new_sizes = tuple(size + before + after for size, (before, after) in zip(sizes, pads))
            _check_size(new_sizes + rest)
            out = np.full(new_sizes + rest, -1, dtype=np.intp)
            out[tuple(slice(before, before + size) for size, (before, _) in zip(sizes, pads))] = array
            return out, [n]

        return self._apply(level, operation)

    def index(self, key, level=0):
        key = key if isinstance(key, tuple) else (key,)

        def operation(array, n):
            consumed = sum(1 for item in key if item is not None and item is not Ellipsis)
            items = []
            for item in key:
                if item is Ellipsis:
                    items.extend([slice(None)] * (n - consumed))
                    consumed = n
                else:
                    items.append(item)
            items.extend([slice(None)] * (n - consumed))
            kept = sum(1 for item in items if item is None or isinstance(item, slice))
            return array[tuple(items) + (Ellipsis,)], [kept]

        return self._apply(level, operation)


# --- Helpers --------------------------------------------------------------------


def levels_of(tensor):
    levels = [tensor]
    while isinstance(levels[-1].dtype, Tensor):
        levels.append(levels[-1].dtype)
    return levels


def apply(tensor, level, name, *args, **kwargs):
    """`tensor.<name>(...)` on level `level` (through `dtype` assignment)."""
    method = "__getitem__" if name == "index" else name
    if level == 0:
        return getattr(tensor, method)(*args, **kwargs)
    parent = tensor
    for _ in range(level - 1):
        parent = parent.dtype
    parent.dtype = getattr(parent.dtype, method)(*args, **kwargs)
    return tensor


def check(tensor, ref, subs=None):
    """`tensor.eval(subs)` equals the oracle element by element, and the
    substituted tensor's levels have the oracle's shapes."""
    result = tensor.eval(subs)
    assert isinstance(result, np.ndarray)
    assert result.dtype == np.intp
    assert result.shape == ref.array.shape
    np.testing.assert_array_equal(result, ref.array)
    np.testing.assert_array_equal(ninetoothed.eval(tensor, subs), ref.array)

    substituted = tensor.subs(subs) if subs else tensor
    shapes = [level.shape for level in levels_of(substituted)]
    assert shapes == ref.level_shapes()
    assert all(type(size) is int for shape in shapes for size in shape)
    assert sum(map(len, shapes)) == result.ndim
    return result


def random_shape(rng, ndim, low=1, high=9):
    return tuple(rng.randint(low, high) for _ in range(ndim))


# --- tile -----------------------------------------------------------------------


def test_tile_evenly_divided():
    x = Tensor(shape=(4, 6))
    tiled = x.tile((2, 3))
    assert tiled.shape == (2, 2)
    assert tiled.dtype.shape == (2, 3)
    result = check(tiled, Ref.source((4, 6)).tile((2, 3)))
    assert result[1, 1, 1, 2] == (1 * 2 + 1) * 6 + (1 * 3 + 2)
    assert result.min() == 0 and result.max() == 23
    assert sorted(result.ravel().tolist()) == list(range(24))


@pytest.mark.parametrize("seed", range(12))
def test_tile_with_partial_tiles(seed):
    rng = random.Random(seed)
    shape = random_shape(rng, rng.randint(1, 3), 1, 13)
    tile_shape = tuple(rng.choice([-1, rng.randint(1, size + 3)]) for size in shape)
    x = Tensor(shape=shape)
    result = check(x.tile(tile_shape), Ref.source(shape).tile(tile_shape))
    # Every source element appears exactly once; the rest is masked.
    values = result[result >= 0]
    assert sorted(values.tolist()) == list(range(math.prod(shape)))


def documented_outer_size(size, tile, stride, spacing, floor_mode):
    """SPEC.md's outer size of `tile` (after resolving the -1s)."""
    span = size - spacing * (tile - 1) - 1
    return span // stride + 1 if floor_mode else (span + stride - 1) // stride + 1


@pytest.mark.parametrize("seed", range(24))
def test_tile_with_strides_dilation_and_floor_mode(seed):
    rng = random.Random(1000 + seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 12)
    give_strides, give_dilation = rng.random() < 0.8, rng.random() < 0.8
    floor_mode = rng.random() < 0.5
    tiles, strides, dilation = [], [], []
    for size in shape:
        while True:  # parameters whose outer size is at least 1
            t = rng.choice([-1, rng.randint(1, 4)])
            s = rng.choice([-1, rng.randint(1, 4)]) if give_strides else -1
            d = rng.randint(1, 3) if give_dilation else 1
            tile = size if t == -1 else t
            if documented_outer_size(size, tile, tile if s == -1 else s, d, floor_mode) >= 1:
                break
        tiles.append(t)
        strides.append(s)
        dilation.append(d)
    kwargs = {}
    if give_strides:
        kwargs["strides"] = tuple(strides)
    if give_dilation:
        kwargs["dilation"] = tuple(dilation)
    if floor_mode or rng.random() < 0.5:
        kwargs["floor_mode"] = floor_mode
    x = Tensor(shape=shape)
    tiled = x.tile(tuple(tiles), **kwargs)
    check(tiled, Ref.source(shape).tile(tuple(tiles), **kwargs))
    for size, t, s, d, outer in zip(shape, tiles, strides, dilation, tiled.shape):
        tile = size if t == -1 else t
        assert outer == documented_outer_size(size, tile, tile if s == -1 else s, d, floor_mode)
    assert tiled.dtype.shape == tuple(size if t == -1 else t for size, t in zip(shape, tiles))


def test_tile_sliding_window():
    x = Tensor(shape=(7,))
    windows = x.tile((3,), strides=(1,))
    result = check(windows, Ref.source((7,)).tile((3,), strides=(1,)))
    assert result.tolist() == [[i, i + 1, i + 2] for i in range(5)]
    dilated = x.tile((2,), strides=(2,), dilation=(3,))
    expected = [[o * 2 + i * 3 if o * 2 + i * 3 < 7 else -1 for i in range(2)] for o in range(3)]
    assert check(dilated, Ref.source((7,)).tile((2,), strides=(2,), dilation=(3,))).tolist() == expected


def test_tile_overhanging_the_source_is_masked():
    x = Tensor(shape=(3, 5))
    tiled = x.tile((4, 4))
    result = check(tiled, Ref.source((3, 5)).tile((4, 4)))
    assert result.shape == (1, 2, 4, 4)
    assert (result[0, 0, 3, :] == -1).all()
    assert (result[0, 1, :, 1:] == -1).all()
    assert result[0, 1, 2, 0] == 2 * 5 + 4


@pytest.mark.parametrize("seed", range(10))
def test_tile_of_tile(seed):
    rng = random.Random(2000 + seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 16)
    first = tuple(rng.randint(1, 5) for _ in shape)
    x = Tensor(shape=shape)
    ref = Ref.source(shape).tile(first)
    tiled = x.tile(first)
    second = tuple(rng.choice([-1, rng.randint(1, 3)]) for _ in range(ndim))
    check(tiled.tile(second), ref.tile(second))
    # Tiling the inner level instead.
    inner = tuple(rng.randint(1, 3) for _ in range(ndim))
    again = x.tile(first)
    again.dtype = again.dtype.tile(inner)
    check(again, ref.tile(inner, level=1))


def test_meta_operations_do_not_change_their_receiver():
    x = Tensor(shape=(5, 6))
    before = x.eval()
    tiled = x.tile((2, 4))
    tiled_before = tiled.eval()
    tiled.tile((1, -1)).expand((-1, 3))
    tiled.permute((1, 0))
    tiled[0]
    tiled.ravel()
    assert x.shape == (5, 6)
    np.testing.assert_array_equal(x.eval(), before)
    np.testing.assert_array_equal(tiled.eval(), tiled_before)
    assert tiled.dtype.shape == (2, 4)


def test_levels_know_their_source_and_other():
    x = Tensor(shape=(4, 6), other=float("-inf"))
    tiled = x.tile((2, 3))
    assert x.source is x
    assert tiled.source is x
    assert tiled.dtype.source is x
    assert tiled.other == float("-inf")
    assert tiled.dtype.other == float("-inf")
    y = Tensor(2)
    substituted = y.tile((2, 2)).subs({y: {"shape": (4, 6)}})
    assert substituted.source.shape == (4, 6)
    assert substituted.source.name == y.name
    assert all(isinstance(size, Symbol) for size in y.shape)


# --- The tutorial's matrix multiplication ------------------------------------------


def matmul_arrangement(input, other, output, block_m, block_n, block_k):
    output_arranged = output.tile((block_m, block_n))

    input_arranged = input.tile((block_m, block_k))
    input_arranged = input_arranged.tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)

    other_arranged = other.tile((block_k, block_n))
    other_arranged = other_arranged.tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)

    return input_arranged, other_arranged, output_arranged


def matmul_reference(input, other, output, bm, bn, bk):
    output_ref = output.tile((bm, bn))
    out_m, out_n = output_ref.level_shapes()[0]

    input_ref = input.tile((bm, bk)).tile((1, -1)).expand((-1, out_n)).squeeze(0, level=1)
    other_ref = other.tile((bk, bn)).tile((-1, 1)).expand((out_m, -1)).squeeze(1, level=1)
    return input_ref, other_ref, output_ref


@pytest.mark.parametrize("seed", range(8))
def test_matmul_arrangement(seed):
    rng = random.Random(3000 + seed)
    m, n, k = (rng.randint(1, 40) for _ in range(3))
    bm, bn, bk = (rng.choice([1, 2, 4, 8, 16]) for _ in range(3))
    block_m, block_n, block_k = (ninetoothed.block_size() for _ in range(3))
    input, other, output = Tensor(2), Tensor(2), Tensor(2)
    arranged = matmul_arrangement(input, other, output, block_m, block_n, block_k)

    subs = {
        input: {"shape": (m, k)},
        other: {"shape": (k, n)},
        output: {"shape": (m, n)},
        block_m: bm,
        block_n: bn,
        block_k: bk,
    }
    refs = matmul_reference(Ref.source((m, k)), Ref.source((k, n)), Ref.source((m, n)), bm, bn, bk)
    results = [check(tensor, ref, subs) for tensor, ref in zip(arranged, refs)]

    # The outermost shapes agree: one program per output block.
    outermost = [level_shapes[0] for level_shapes in (ref.level_shapes() for ref in refs)]
    assert outermost[0] == outermost[1] == outermost[2]
    assert [len(levels_of(t)) for t in arranged] == [3, 3, 2]

    # Program (i, j), step kk reads input block (i, kk) and other block (kk, j).
    input_result, other_result, _ = results
    programs_m, programs_n = outermost[2]
    steps = input_result.shape[2]
    for i in range(programs_m):
        for j in range(programs_n):
            for kk in range(steps):
                block = input_result[i, j, kk]
                rows = np.arange(i * bm, i * bm + bm)[:, None]
                cols = np.arange(kk * bk, kk * bk + bk)[None, :]
                expected = np.where((rows < m) & (cols < k), rows * k + cols, -1)
                np.testing.assert_array_equal(block, expected)
                block = other_result[i, j, kk]
                rows = np.arange(kk * bk, kk * bk + bk)[:, None]
                cols = np.arange(j * bn, j * bn + bn)[None, :]
                expected = np.where((rows < k) & (cols < n), rows * n + cols, -1)
                np.testing.assert_array_equal(block, expected)


def test_matmul_arrangement_with_concrete_sizes():
    input, other, output = Tensor(shape=(5, 7)), Tensor(shape=(7, 6)), Tensor(shape=(5, 6))
    arranged = matmul_arrangement(input, other, output, 2, 4, 3)
    assert arranged[0].shape == (3, 2)
    assert arranged[0].dtype.shape == (3,)
    assert arranged[0].dtype.dtype.shape == (2, 3)
    assert arranged[1].shape == (3, 2)
    assert arranged[1].dtype.shape == (3,)
    assert arranged[1].dtype.dtype.shape == (3, 4)
    refs = matmul_reference(Ref.source((5, 7)), Ref.source((7, 6)), Ref.source((5, 6)), 2, 4, 3)
    for tensor, ref in zip(arranged, refs):
        check(tensor, ref)


# --- conv2d as implicit GEMM ---------------------------------------------------------


def conv2d_arrangement(input, filter, output, block_m, block_n, block_k):
    input_arranged = input.tile((1, *filter.shape[1:]), strides=(-1, -1, 1, 1))
    input_arranged = input_arranged.squeeze(1)
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    input_arranged = input_arranged.ravel()
    input_arranged = input_arranged.flatten(end_dim=3).flatten(start_dim=1)

    filter_arranged = filter.flatten(start_dim=1)
    filter_arranged = filter_arranged.permute((1, 0))

    output_arranged = output.permute((0, 2, 3, 1)).flatten(end_dim=3)

    return matmul_arrangement(input_arranged, filter_arranged, output_arranged, block_m, block_n, block_k), (
        input_arranged,
        filter_arranged,
        output_arranged,
    )


@pytest.mark.parametrize("seed", range(6))
def test_conv2d_arrangement(seed):
    rng = random.Random(4000 + seed)
    n, c, k = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 4)
    r, s = rng.randint(1, 3), rng.randint(1, 3)
    h, w = rng.randint(r, r + 4), rng.randint(s, s + 4)
    p, q = h - r + 1, w - s + 1
    bm, bn, bk = rng.choice([2, 4, 8]), rng.choice([2, 4]), rng.choice([2, 4, 8])
    block_m, block_n, block_k = Symbol("BM", meta=True), Symbol("BN", meta=True), Symbol("BK", meta=True)

    input, filter, output = Tensor(4), Tensor(4), Tensor(4)
    (input_mm, filter_mm, output_mm), (input_2d, filter_2d, output_2d) = conv2d_arrangement(
        input, filter, output, block_m, block_n, block_k
    )
    subs = {
        input: {"shape": (n, c, h, w)},
        filter: {"shape": (k, c, r, s)},
        output: {"shape": (n, k, p, q)},
        block_m: bm,
        block_n: bn,
        block_k: bk,
    }

    # The oracle, step by step.
    input_ref = Ref.source((n, c, h, w)).tile((1, c, r, s), strides=(-1, -1, 1, 1))
    input_ref = input_ref.squeeze(1).squeeze(0, level=1).ravel()
    input_ref = input_ref.flatten(end_dim=3).flatten(start_dim=1)
    filter_ref = Ref.source((k, c, r, s)).flatten(start_dim=1).permute((1, 0))
    output_ref = Ref.source((n, k, p, q)).permute((0, 2, 3, 1)).flatten(end_dim=3)

    im2col = check(input_2d, input_ref, subs)
    check(filter_2d, filter_ref, subs)
    check(output_2d, output_ref, subs)

    # The raveled input is the im2col matrix: row (n, p, q), column (c, r, s).
    assert im2col.shape == (n * p * q, c * r * s)
    for nn, pp, qq, cc, rr, ss in itertools.product(range(n), range(p), range(q), range(c), range(r), range(s)):
        row = (nn * p + pp) * q + qq
        col = (cc * r + rr) * s + ss
        assert im2col[row, col] == ((nn * c + cc) * h + pp + rr) * w + qq + ss

    refs = matmul_reference(input_ref, filter_ref, output_ref, bm, bn, bk)
    for tensor, ref in zip((input_mm, filter_mm, output_mm), refs):
        check(tensor, ref, subs)


# --- The other meta-operations --------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_expand_of_a_tiled_tensor(seed):
    rng = random.Random(5000 + seed)
    rows, cols = rng.randint(1, 12), rng.randint(1, 12)
    x = Tensor(shape=(rows, cols))
    tiled = x.tile((rng.randint(1, 5), -1))
    ref = Ref.source((rows, cols)).tile((tiled.dtype.shape[0], -1))
    assert tiled.shape[1] == 1
    times = rng.randint(1, 5)
    expanded = tiled.expand((-1, times))
    result = check(expanded, ref.expand((-1, times)))
    for j in range(times):
        np.testing.assert_array_equal(result[:, j], result[:, 0])
    # An expand that keeps every size, by -1 or by the same size.
    check(tiled.expand((tiled.shape[0], -1)), ref)


def test_expand_a_symbolic_singleton():
    x = Tensor(2)
    expanded = x.expand((-1, Symbol("n")))
    subs = {x: {"shape": (4, 1)}, Symbol("n"): 3}
    check(expanded, Ref.source((4, 1)).expand((-1, 3)), subs)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_unsqueeze(dim):
    x = Tensor(shape=(3, 4))
    result = check(x.unsqueeze(dim), Ref.source((3, 4)).unsqueeze(dim))
    assert result.shape == np.expand_dims(np.zeros((3, 4)), dim).shape


def test_unsqueeze_inner_level_then_expand():
    x = Tensor(shape=(6, 4))
    tiled = x.tile((2, 2))
    tiled.dtype = tiled.dtype.unsqueeze(0).expand((3, -1, -1))
    ref = Ref.source((6, 4)).tile((2, 2)).unsqueeze(0, level=1).expand((3, -1, -1), level=1)
    check(tiled, ref)


@pytest.mark.parametrize("dims", [0, 2, -1, (0, 2), (2, 0), (0, -1, 2)])
def test_squeeze(dims):
    shape = (1, 5, 1, 1) if dims != -1 else (2, 5, 3, 1)
    x = Tensor(shape=shape)
    check(x.squeeze(dims), Ref.source(shape).squeeze(dims))


@pytest.mark.parametrize("seed", range(6))
def test_permute(seed):
    rng = random.Random(6000 + seed)
    ndim = rng.randint(1, 4)
    shape = random_shape(rng, ndim, 1, 6)
    dims = list(range(ndim))
    rng.shuffle(dims)
    x = Tensor(shape=shape)
    result = check(x.permute(tuple(dims)), Ref.source(shape).permute(dims))
    np.testing.assert_array_equal(result, np.transpose(np.arange(math.prod(shape)).reshape(shape), dims))


def test_permute_negative_dims_count_from_the_end():
    x = Tensor(shape=(2, 3, 4))
    permuted = x.permute((0, -1, -2))
    assert permuted.shape == (2, 4, 3)
    check(permuted, Ref.source((2, 3, 4)).permute((0, 2, 1)))


def test_permute_an_inner_level():
    x = Tensor(shape=(6, 4, 5))
    tiled = x.tile((2, 2, 5))
    tiled.dtype = tiled.dtype.permute((2, 0, 1))
    check(tiled, Ref.source((6, 4, 5)).tile((2, 2, 5)).permute((2, 0, 1), level=1))


def test_flatten_end_dim_is_exclusive():
    x = Tensor(shape=(2, 3, 4, 5))
    assert x.flatten().shape == (120,)
    assert x.flatten(1, 3).shape == (2, 12, 5)
    assert x.flatten(start_dim=1).shape == (2, 60)
    assert x.flatten(end_dim=2).shape == (6, 4, 5)
    assert x.flatten(end_dim=-1).shape == (24, 5)
    assert x.flatten(-3, -1).shape == (2, 12, 5)
    assert x.flatten(2, 3).shape == (2, 3, 4, 5)
    assert x.flatten(0, 4).shape == (120,)


@pytest.mark.parametrize(
    "start_dim, end_dim",
    [(None, None), (1, 3), (None, 2), (1, None), (0, 4), (-3, -1), (2, 3), (None, -1)],
)
def test_flatten(start_dim, end_dim):
    shape = (2, 3, 4, 5)
    x = Tensor(shape=shape)
    check(x.flatten(start_dim, end_dim), Ref.source(shape).flatten(start_dim, end_dim))


def test_flatten_a_tiled_level():
    x = Tensor(shape=(7, 9, 4))
    tiled = x.tile((3, 2, 2))
    tiled = tiled.flatten(end_dim=2)
    tiled.dtype = tiled.dtype.flatten(1)
    ref = Ref.source((7, 9, 4)).tile((3, 2, 2)).flatten(end_dim=2).flatten(1, level=1)
    check(tiled, ref)


@pytest.mark.parametrize("seed", range(6))
def test_ravel(seed):
    rng = random.Random(7000 + seed)
    shape = random_shape(rng, 2, 2, 10)
    x = Tensor(shape=shape)
    tiled = x.tile((rng.randint(1, 4), rng.randint(1, 4))).tile((2, 1))
    ref = Ref.source(shape).tile(tiled.dtype.dtype.shape).tile((2, 1))
    raveled = tiled.ravel()
    assert raveled.shape == tiled.shape + tiled.dtype.shape + tiled.dtype.dtype.shape
    assert not isinstance(raveled.dtype, Tensor)
    result = check(raveled, ref.ravel())
    np.testing.assert_array_equal(result, tiled.eval())
    # Raveling only the inner levels.
    tiled.dtype = tiled.dtype.ravel()
    check(tiled, ref.ravel(level=1))


@pytest.mark.parametrize("seed", range(8))
def test_pad(seed):
    rng = random.Random(8000 + seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 7)
    pads = tuple((rng.randint(0, 3), rng.randint(0, 3)) for _ in range(ndim))
    x = Tensor(shape=shape)
    padded = x.pad(pads)
    assert padded.shape == tuple(size + a + b for size, (a, b) in zip(shape, pads))
    result = check(padded, Ref.source(shape).pad(pads))
    assert (result == -1).sum() == math.prod(padded.shape) - math.prod(shape)
    # Padding, then tiling with a sliding window: the conv2d halo.
    window = tuple(rng.randint(1, 3) for _ in range(ndim))
    check(padded.tile(window, strides=(1,) * ndim), Ref.source(shape).pad(pads).tile(window, strides=(1,) * ndim))


def test_pad_with_symbolic_pads():
    x = Tensor(2)
    before, after = Symbol("before"), Symbol("after")
    padded = x.pad(((before, after), (1, before)))
    subs = {x: {"shape": (3, 4)}, before: 2, after: 1}
    check(padded, Ref.source((3, 4)).pad(((2, 1), (1, 2))), subs)


# --- Indexing -------------------------------------------------------------------------


def random_slice(rng, size, clamped):
    """A slice of a dim of `size`. Unless `clamped`, bounds stay where Python
    would not clamp them (a symbolic size cannot be clamped)."""
    while True:
        step = rng.choice([None, 1, 2, 3, -1, -2, -3])
        if clamped:
            bounds = list(range(-size - 3, size + 4)) + [None] * 4
            start, stop = rng.choice(bounds), rng.choice(bounds)
        elif step is not None and step < 0:
            start = rng.choice(list(range(-size, size)) + [None])
            stop = rng.choice(list(range(-size, size)) + [None])
        else:
            start = rng.choice(list(range(-size, size)) + [None])
            stop = rng.choice(list(range(-size, size + 1)) + [None])
        item = slice(start, stop, step)
        if len(range(*item.indices(size))) > 0 or clamped:
            return item


def random_key(rng, sizes, clamped=True, allow_empty=True):
    items = []
    for size in sizes:
        roll = rng.random()
        if roll < 0.1 and size > 0:
            items.append(rng.randint(-size, size - 1))
        elif roll < 0.2:
            items.append(slice(None))
        else:
            item = random_slice(rng, size, clamped)
            if not allow_empty:
                while len(range(*item.indices(size))) == 0:
                    item = random_slice(rng, size, clamped)
            items.append(item)
        if rng.random() < 0.15:
            items.append(None)
    # Drop trailing full dims sometimes, or replace a run of full slices by `...`.
    if rng.random() < 0.3:
        while items and items[-1] == slice(None):
            items.pop()
    if rng.random() < 0.4:
        position = rng.randint(0, len(items))
        length = rng.randint(0, len(items) - position)
        run = items[position : position + length]
        if all(item == slice(None) for item in run):
            items[position : position + length] = [Ellipsis]
    if rng.random() < 0.2:
        items.insert(0, None)
    return tuple(items)


@pytest.mark.parametrize("seed", range(20))
def test_indexing_concrete_sizes(seed):
    rng = random.Random(9000 + seed)
    shape = random_shape(rng, rng.randint(1, 3), 1, 8)
    x = Tensor(shape=shape)
    base = np.arange(math.prod(shape)).reshape(shape)
    for _ in range(10):
        key = random_key(rng, shape)
        result = check(x[key], Ref.source(shape).index(key))
        np.testing.assert_array_equal(result, base[key])


@pytest.mark.parametrize("seed", range(10))
def test_indexing_symbolic_sizes(seed):
    rng = random.Random(9500 + seed)
    shape = random_shape(rng, rng.randint(1, 3), 1, 8)
    x = Tensor(len(shape))
    subs = {x: {"shape": shape}}
    base = np.arange(math.prod(shape)).reshape(shape)
    for _ in range(10):
        key = random_key(rng, shape, clamped=False, allow_empty=False)
        result = check(x[key], Ref.source(shape).index(key), subs)
        np.testing.assert_array_equal(result, base[key])


@pytest.mark.parametrize(
    "key",
    [
        (slice(-3, None),),
        (slice(None, None, -1),),
        (slice(-1, -6, -2), 2),
        (Ellipsis, 0),
        (0, Ellipsis),
        (None, Ellipsis, None),
        (slice(1, -1), None, slice(None, None, -2)),
        (-1, -1),
        (slice(10, 20),),
        (slice(None, -10),),
        (slice(-100, 100, 3),),
        (Ellipsis,),
        (),
    ],
)
def test_indexing_edge_cases(key):
    shape = (6, 5)
    x = Tensor(shape=shape)
    result = check(x[key], Ref.source(shape).index(key))
    np.testing.assert_array_equal(result, np.arange(30).reshape(shape)[key])


def test_indexing_an_inner_level():
    x = Tensor(shape=(8, 6))
    tiled = x.tile((4, 3))
    tiled.dtype = tiled.dtype[1:, ::-1]
    check(tiled, Ref.source((8, 6)).tile((4, 3)).index((slice(1, None), slice(None, None, -1)), level=1))
    picked = x.tile((4, 3))
    picked.dtype = picked.dtype[-1]
    check(picked, Ref.source((8, 6)).tile((4, 3)).index(-1, level=1))


def test_indexing_with_a_symbolic_index():
    x = Tensor(shape=(5, 4))
    i = Symbol("i")
    row = x[i]
    for value in range(5):
        check(row, Ref.source((5, 4)).index(value), {i: value})
    # An index past the end is masked, not read.
    assert (row.eval({i: 5}) == -1).all()
    assert (row.eval({i: -1}) == -1).all()


def test_indexing_an_overhanging_tile_keeps_the_mask():
    x = Tensor(shape=(5,))
    tiled = x.tile((4,))
    check(tiled[1], Ref.source((5,)).tile((4,)).index(1))
    assert tiled[1].eval().tolist() == [4 + i if 4 + i < 5 else -1 for i in range(4)]


# --- Symbolic sizes and strides ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_symbolic_source_and_tile_sizes(seed):
    rng = random.Random(10_000 + seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 14)
    blocks = [Symbol(f"B{d}", constexpr=True) for d in range(ndim)]
    values = [rng.randint(1, 6) for _ in range(ndim)]
    x = Tensor(ndim)
    tiled = x.tile(tuple(blocks))
    assert all(isinstance(size, Symbol) for size in tiled.shape)
    subs = {x: {"shape": shape}, **dict(zip(blocks, values))}
    check(tiled, Ref.source(shape).tile(values), subs)

    # Substituting only some symbols leaves a tensor to substitute further.
    partial = ninetoothed.subs(tiled, {x: {"shape": shape}})
    assert partial.dtype.shape == tuple(blocks)
    check(partial, Ref.source(shape).tile(values), dict(zip(blocks, values)))
    # The original is unchanged.
    assert tiled.dtype.shape == tuple(blocks)


def test_symbols_can_be_given_by_name():
    x = Tensor(1)
    block = Symbol("BLOCK")
    tiled = x.tile((block,))
    subs = {x.shape[0]: 10, "BLOCK": 4}
    check(tiled, Ref.source((10,)).tile((4,)), subs)


def test_concrete_and_symbolic_sources_agree():
    shape = (7, 5)
    concrete = Tensor(shape=shape).tile((3, 2)).tile((1, -1))
    symbolic_source = Tensor(2)
    symbolic = symbolic_source.tile((3, 2)).tile((1, -1))
    np.testing.assert_array_equal(concrete.eval(), symbolic.eval({symbolic_source: {"shape": shape}}))


@pytest.mark.parametrize("seed", range(8))
def test_eval_with_strides(seed):
    rng = random.Random(11_000 + seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 8)
    # Strides of a permuted, padded layout: not C-contiguous.
    order = list(range(ndim))
    rng.shuffle(order)
    strides = [0] * ndim
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d] + rng.randint(0, 2)
    x = Tensor(ndim)
    tile_shape = tuple(rng.randint(1, 4) for _ in range(ndim))
    arranged = x.tile(tile_shape)
    subs = {x: {"shape": shape, "strides": strides}}
    ref = Ref.source(shape, strides).tile(tile_shape)
    check(arranged, ref, subs)
    concrete = Tensor(shape=shape)
    check(concrete.tile(tile_shape), ref, {concrete: {"shape": shape, "strides": strides}})


# --- Random chains of meta-operations --------------------------------------------------------


def random_step(rng, tensor, ref, symbolic, fresh_symbols, name=None):
    """A random meta-operation valid for the current hierarchy, or None:
    (level, name, args, kwargs, substitutions it needs, the oracle's args)."""
    level = rng.randrange(len(ref.levels))
    sizes = ref.level_shapes()[level]
    symbolic_sizes = [not isinstance(size, int) for size in levels_of(tensor)[level].shape]
    n = len(sizes)
    choices = ["tile", "expand", "squeeze", "unsqueeze", "permute", "flatten", "ravel", "pad", "index"]
    name = name or rng.choice(choices)
    subs = {}
    if name == "tile" and n > 0 and len(ref.levels) < 4:
        tile_shape, strides, dilation = [], [], []
        floor_mode = rng.random() < 0.3
        for size in sizes:
            while True:
                t = rng.choice([-1, rng.randint(1, 4)])
                s = rng.choice([-1, -1, rng.randint(1, 3)])
                d = rng.choice([1, 1, 2])
                tile = size if t == -1 else t
                if documented_outer_size(size, tile, tile if s == -1 else s, d, floor_mode) >= 1:
                    break
            if symbolic and t != -1 and rng.random() < 0.4:
                symbol = Symbol(f"T{next(fresh_symbols)}", constexpr=True)
                subs[symbol] = t
                tile_shape.append(symbol)
            else:
                tile_shape.append(t)
            strides.append(s)
            dilation.append(d)
        kwargs = {"strides": tuple(strides), "dilation": tuple(dilation)}
        if floor_mode:
            kwargs["floor_mode"] = True
        values = [subs.get(t, t) if isinstance(t, Symbol) else t for t in tile_shape]
        return level, name, (tuple(tile_shape),), kwargs, subs, (tuple(values),)
    if name == "expand" and 1 in sizes:
        shape = []
        for size in sizes:
            if size == 1 and rng.random() < 0.7:
                shape.append(rng.randint(1, 4))
            else:
                shape.append(rng.choice([-1, size]) if not symbolic else -1)
        return level, name, (tuple(shape),), {}, subs, None
    if name == "squeeze" and 1 in sizes:
        candidates = [d for d, size in enumerate(sizes) if size == 1]
        chosen = rng.sample(candidates, rng.randint(1, len(candidates)))
        chosen = [d - n if rng.random() < 0.3 else d for d in chosen]
        dims = chosen[0] if len(chosen) == 1 and rng.random() < 0.5 else tuple(chosen)
        return level, name, (dims,), {}, subs, None
    if name == "unsqueeze" and n < 4:
        return level, name, (rng.randint(-n - 1, n),), {}, subs, None
    if name == "permute" and n > 1:
        dims = list(range(n))
        rng.shuffle(dims)
        return level, name, (tuple(dims),), {}, subs, None
    if name == "flatten" and n > 0:
        start = rng.randrange(n)
        end = rng.randint(start + 1, n)
        start_arg = rng.choice([start, start - n]) if start else rng.choice([None, 0, -n])
        end_arg = rng.choice([end, end - n if end < n else end]) if end < n else rng.choice([None, n])
        return level, name, (start_arg, end_arg), {}, subs, None
    if name == "ravel" and len(ref.levels) > 1 and level < len(ref.levels) - 1:
        return level, name, (), {}, subs, None
    if name == "pad" and n > 0:
        pads = tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in range(n))
        return level, name, (pads,), {}, subs, None
    if name == "index" and n > 0:
        clamped = not any(symbolic_sizes)
        key = random_key(rng, sizes, clamped=clamped, allow_empty=False)
        return level, name, (key,), {}, subs, None
    return None


def run_random_chain(seed, symbolic):
    rng = random.Random(seed)
    ndim = rng.randint(1, 3)
    shape = random_shape(rng, ndim, 1, 10)
    x = Tensor(ndim) if symbolic else Tensor(shape=shape)
    strides = None
    if rng.random() < 0.3:
        strides = [rng.randint(1, 50) for _ in range(ndim)]
    ref = Ref.source(shape, strides)
    subs = {}
    if symbolic or strides:
        subs[x] = {"shape": shape}
        if strides:
            subs[x]["strides"] = strides
    tensor = x
    fresh = itertools.count()
    steps = []
    for position in range(rng.randint(1, 7)):
        # Most chains start with a tile, so that later steps meet several levels.
        first = "tile" if position == 0 and rng.random() < 0.7 else None
        for _attempt in range(20):
            step = random_step(rng, tensor, ref, symbolic, fresh, first)
            if step is None:
                continue
            level, name, args, kwargs, step_subs, ref_args = step
            try:
                new_ref = getattr(ref, name)(*(ref_args or args), level=level, **kwargs)
            except TooBig:
                continue
            tensor = apply(tensor, level, name, *args, **kwargs)
            ref = new_ref
            subs.update(step_subs)
            steps.append((level, name, args, kwargs))
            break
        check(tensor, ref, subs or None)
    return steps


@pytest.mark.parametrize("seed", range(60))
def test_random_chains_concrete_sizes(seed):
    run_random_chain(20_000 + seed, symbolic=False)


@pytest.mark.parametrize("seed", range(60))
def test_random_chains_symbolic_sizes(seed):
    run_random_chain(30_000 + seed, symbolic=True)
