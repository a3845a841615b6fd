"""ninetoothed.debugging.simulate_arrangement: what each program's blocks read.

Expected values come from a numpy oracle that pads index arrays with -1 and
cuts them into blocks, independent of the symbolic core.
"""

import functools
import math

import numpy as np
import pytest
import torch

import ninetoothed
from ninetoothed import Symbol, Tensor
from ninetoothed.debugging import simulate_arrangement


def addmm_arrangement(input, mat1, mat2, beta, alpha, output,
                      BLOCK_SIZE_M=ninetoothed.block_size(), BLOCK_SIZE_N=ninetoothed.block_size(),
                      BLOCK_SIZE_K=ninetoothed.block_size()):
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

    mat1_arranged = mat1.tile((BLOCK_SIZE_M, BLOCK_SIZE_K)).tile((1, -1))
    mat1_arranged = mat1_arranged.expand((-1, output_arranged.shape[1]))
    mat1_arranged.dtype = mat1_arranged.dtype.squeeze(0)

    mat2_arranged = mat2.tile((BLOCK_SIZE_K, BLOCK_SIZE_N)).tile((-1, 1))
    mat2_arranged = mat2_arranged.expand((output_arranged.shape[0], -1))
    mat2_arranged.dtype = mat2_arranged.dtype.squeeze(1)

    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

    return input_arranged, mat1_arranged, mat2_arranged, beta, alpha, output_arranged


def add_arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


# --- The oracle -------------------------------------------------------------------------


def blocks(shape, block_shape):
    """Element indices of a row-major `shape` cut into blocks: (outer..., block...), -1 padded."""
    index = np.arange(math.prod(shape)).reshape(shape)
    outer = tuple(-(-s // b) for s, b in zip(shape, block_shape))
    padded = np.full(tuple(o * b for o, b in zip(outer, block_shape)), -1)
    padded[tuple(slice(0, s) for s in shape)] = index
    split = padded.reshape(tuple(x for o, b in zip(outer, block_shape) for x in (o, b)))
    ndim = len(shape)
    return split.transpose(tuple(range(0, 2 * ndim, 2)) + tuple(range(1, 2 * ndim, 2)))


def addmm_expected(m, n, k, bm, bn, bk):
    out = blocks((m, n), (bm, bn))  # (pm, pn, bm, bn)
    a = blocks((m, k), (bm, bk))  # (pm, pk, bm, bk)
    b = blocks((k, n), (bk, bn))  # (pk, pn, bk, bn)
    pm, pn = out.shape[:2]
    programs = [(i, j) for i in range(pm) for j in range(pn)]
    return (
        out.reshape(pm * pn, bm, bn),
        np.stack([a[i] for i, _ in programs]),
        np.stack([b[:, j] for _, j in programs]),
        out.reshape(pm * pn, bm, bn),
    )


# --- Results ----------------------------------------------------------------------------


@pytest.mark.parametrize("m, n, k, bm, bn, bk", [(3, 4, 5, 2, 2, 2), (5, 3, 7, 4, 2, 3), (4, 4, 4, 4, 4, 4)])
def test_addmm_against_the_oracle(m, n, k, bm, bn, bk):
    arrangement = functools.partial(addmm_arrangement, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk)
    tensors = (Tensor(shape=(m, n)), Tensor(shape=(m, k)), Tensor(shape=(k, n)), Tensor(0), Tensor(0),
               Tensor(shape=(m, n)))
    sources, targets = simulate_arrangement(arrangement, tensors)

    assert isinstance(sources, tuple) and isinstance(targets, tuple)
    assert len(sources) == len(targets) == 6
    for source, shape in zip(sources, ((m, n), (m, k), (k, n), (), (), (m, n))):
        assert source.dtype == torch.int64 and source.device.type == "cpu"
        assert torch.equal(source, torch.arange(math.prod(shape)).view(shape))
    # 0-dim tensors give tensor(0) on both sides.
    for i in (3, 4):
        assert torch.equal(sources[i], torch.tensor(0)) and torch.equal(targets[i], torch.tensor(0))

    expected = addmm_expected(m, n, k, bm, bn, bk)
    for target, reference in zip((targets[0], targets[1], targets[2], targets[5]), expected):
        assert target.dtype == torch.int64
        assert torch.equal(target, torch.from_numpy(reference))


def test_addmm_small_case_by_hand():
    arrangement = functools.partial(addmm_arrangement, BLOCK_SIZE_M=2, BLOCK_SIZE_N=2, BLOCK_SIZE_K=2)
    tensors = (Tensor(shape=(3, 4)), Tensor(shape=(3, 5)), Tensor(shape=(5, 4)), Tensor(0), Tensor(0),
               Tensor(shape=(3, 4)))
    _, targets = simulate_arrangement(arrangement, tensors)
    # Program 2 is block (1, 0) of the output: rows 2.. (row 3 is outside), columns 0..1.
    assert targets[5][2].tolist() == [[8, 9], [-1, -1]]
    # It reads row block 1 of mat1 (row 2 only; column 5 is outside) ...
    assert targets[1][2].tolist() == [[[10, 11], [-1, -1]], [[12, 13], [-1, -1]], [[14, -1], [-1, -1]]]
    # ... and column block 0 of mat2 (rows 0..4, row 5 outside).
    assert targets[2][2].tolist() == [[[0, 1], [4, 5]], [[8, 9], [12, 13]], [[16, 17], [-1, -1]]]


def test_matches_flatten_eval():
    # Upstream's identity: the target is the arranged tensor with its outermost level flattened.
    arrangement = functools.partial(addmm_arrangement, BLOCK_SIZE_M=2, BLOCK_SIZE_N=4, BLOCK_SIZE_K=2)
    tensors = (Tensor(shape=(5, 6)), Tensor(shape=(5, 3)), Tensor(shape=(3, 6)), Tensor(0), Tensor(0),
               Tensor(shape=(5, 6)))
    _, targets = simulate_arrangement(arrangement, tensors)
    for arranged, target in zip(arrangement(*tensors), targets):
        value = arranged.flatten().eval() if arranged.ndim != 0 else arranged.eval()
        assert torch.equal(torch.from_numpy(value), target)


def test_torch_and_numpy_arguments_give_their_shapes():
    arrangement = functools.partial(add_arrangement, BLOCK_SIZE=4)
    x = torch.empty(20)[::2]  # non-contiguous: only the shape matters
    sources, targets = simulate_arrangement(arrangement, (x, np.zeros(10, dtype=np.float16), torch.empty(10)))
    for source, target in zip(sources, targets):
        assert torch.equal(source, torch.arange(10))
        assert target.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, -1, -1]]


def test_numbers_and_0_dim_tensors():
    def arrangement(x, alpha, beta):
        return x.tile((2, 2)), alpha, beta

    sources, targets = simulate_arrangement(arrangement, (torch.empty(2, 3), 2.0, torch.tensor(3)))
    assert targets[0].shape == (2, 2, 2)
    for i in (1, 2):
        assert torch.equal(sources[i], torch.tensor(0)) and torch.equal(targets[i], torch.tensor(0))


def test_pad_permute_and_strided_tiles():
    def arrangement(x):
        return x.pad(((1, 0), (0, 1))).permute((1, 0)).tile((2, 3), strides=(1, 2))

    sources, targets = simulate_arrangement(arrangement, (Tensor(shape=(2, 3)),))
    # The padded tensor is 3x4 (row -1 and column 3 masked), read transposed (4x3): windows of
    # 2 rows, one row apart (3 of them), and 3 columns, 2 apart (1 of them).
    padded = np.full((3, 4), -1)
    padded[1:, :3] = np.arange(6).reshape(2, 3)
    view = padded.T
    assert targets[0].tolist() == [view[i:i + 2, 0:3].tolist() for i in range(3)]


def test_three_levels_and_the_program_count():
    def arrangement(x, y):
        # x: (8, 6) as 2x3 programs of (4, 2) tiles of 1x2 elements; y: one row per program.
        x_arranged = x.tile((1, 2)).tile((4, 1))
        x_arranged.dtype = x_arranged.dtype.squeeze(1)
        y_arranged = y.tile((1, 1)).expand((-1, 3))
        return x_arranged, y_arranged

    sources, targets = simulate_arrangement(arrangement, (Tensor(shape=(8, 6)), Tensor(shape=(2, 1))))
    assert targets[0].shape == (6, 4, 1, 2)
    index = np.arange(48).reshape(8, 6)
    for p in range(6):
        i, j = divmod(p, 3)
        assert targets[0][p].reshape(4, 2).tolist() == index[4 * i:4 * i + 4, 2 * j:2 * j + 2].tolist()
        assert targets[1][p].tolist() == [[i]]


def test_block_sizes_given_as_numbers_or_symbols_with_values():
    n = Symbol("n", constexpr=True)

    def arrangement(x, BLOCK=n):
        return (x.tile((BLOCK,)),)

    _, targets = simulate_arrangement(functools.partial(arrangement, BLOCK=3), (Tensor(shape=(7,)),))
    assert targets[0].tolist() == [[0, 1, 2], [3, 4, 5], [6, -1, -1]]


def test_a_single_arranged_tensor_and_the_device():
    def arrangement(x):
        return x.tile((2,))

    sources, targets = simulate_arrangement(arrangement, [torch.empty(3)], device=torch.device("cpu"))
    assert targets[0].tolist() == [[0, 1], [2, -1]]
    assert targets[0].device.type == "cpu"
    sources, targets = simulate_arrangement(arrangement, [torch.empty(3)], device="cpu")
    assert sources[0].device.type == "cpu"


# --- Errors -----------------------------------------------------------------------------


def test_unbound_block_size_is_a_clear_value_error():
    tensors = (Tensor(shape=(3,)), Tensor(shape=(3,)), Tensor(shape=(3,)))
    with pytest.raises(ValueError, match=r"cannot simulate 'x'.*functools\.partial"):
        simulate_arrangement(add_arrangement, tensors)


def test_symbolic_sizes_are_a_value_error():
    arrangement = functools.partial(add_arrangement, BLOCK_SIZE=2)
    with pytest.raises(ValueError, match=r"'y' has the symbolic shape"):
        simulate_arrangement(arrangement, (Tensor(shape=(3,)), Tensor(1), Tensor(shape=(3,))))


def test_bad_arguments():
    arrangement = functools.partial(add_arrangement, BLOCK_SIZE=2)
    with pytest.raises(TypeError, match="must be callable"):
        simulate_arrangement(None, (Tensor(shape=(3,)),))
    with pytest.raises(TypeError, match="tuple or a list"):
        simulate_arrangement(arrangement, Tensor(shape=(3,)))
    with pytest.raises(TypeError, match="'y' must be a Tensor"):
        simulate_arrangement(arrangement, (Tensor(shape=(3,)), "tensor", Tensor(shape=(3,))))
    with pytest.raises(ValueError, match="gives 3 tensors for 2 arguments"):
        simulate_arrangement(lambda x, y: (x, y, x), (torch.empty(2), torch.empty(2)))
    with pytest.raises(TypeError, match="must give Tensors, got int"):
        simulate_arrangement(lambda x: (1,), (torch.empty(2),))


def test_outermost_shapes_must_agree():
    def arrangement(x, y):
        return x.tile((2,)), y.tile((4,))

    with pytest.raises(ValueError, match=r"outermost shapes differ: 'x' has \(4,\) but 'y' has \(2,\)"):
        simulate_arrangement(arrangement, (torch.empty(8), torch.empty(8)))


def test_tensors_may_be_any_iterable():
    arrangement = functools.partial(add_arrangement, BLOCK_SIZE=8)
    _, targets = simulate_arrangement(arrangement, (torch.empty(4) for _ in range(3)))
    assert [t.tolist() for t in targets] == [[[0, 1, 2, 3, -1, -1, -1, -1]]] * 3
