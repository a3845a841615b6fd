"""Jagged tensors: `Tensor(ndim, jagged_dim=d)` over torch's nested tensors of layout torch.jagged.

The kernels are written as upstream's test_jagged.py and an operator library would write them. A
jagged argument is its values (the sequences joined along the ragged dimension) and its offsets
(where each sequence starts, then the end). torch 1.13 has no jagged layout: there the arguments
are `HandBuiltJagged`, the same three things torch's nested tensors give a kernel (`values()`,
`offsets()`, `_ragged_idx`); where torch has torch.jagged, its nested tensors are tested too.
"""

import copy
import functools
import os
import pickle
import random

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("block_size", constexpr=True)
BLOCK_J = Symbol("block_j", constexpr=True)
BLOCK_C = Symbol("block_c", constexpr=True)

# NINETOOTHED_TEST_DEVICE=cuda moves dense arguments to CUDA (conftest.py) but not jagged ones: there,
# these tests run on CUDA tensors of their own.
_HOST = () if os.environ.get("NINETOOTHED_TEST_DEVICE") == "cuda" else ("cpu",)
DEVICES = _HOST + (("cuda",) if torch.cuda.is_available() else ())
FORMS = ("hand-built",) + (("torch.jagged",) if hasattr(torch, "jagged") else ())


class HandBuiltJagged:
    """What a kernel reads of a torch.jagged nested tensor, for torches without that layout."""

    def __init__(self, values, offsets, ragged_idx):
        self._values = values
        self._offsets = offsets
        self._ragged_idx = ragged_idx

    def values(self):
        return self._values

    def offsets(self):
        return self._offsets


def jagged(batches, jagged_dim, form, before=0, after=0, poison=None):
    """The sequences `batches` as a jagged tensor of `form`, its values with `before` and `after`
    elements around them along the ragged dimension (set to `poison`, else random)."""
    axis = jagged_dim - 1
    shape = list(batches[0].shape)
    pads = []
    for n in (before, after):
        shape[axis] = n
        pad = torch.randn(shape, dtype=torch.float32).to(batches[0].dtype)
        if poison is not None:
            pad.fill_(poison)
        pads.append(pad.to(batches[0].device))
    values = torch.cat([pads[0], *batches, pads[1]], dim=axis)
    lengths = [b.shape[axis] for b in batches]
    offsets = torch.tensor([before] + lengths, dtype=torch.int64).cumsum(0).to(values.device)
    if form == "hand-built":
        return HandBuiltJagged(values, offsets, jagged_dim)
    return torch.nested.nested_tensor_from_jagged(values, offsets=offsets, jagged_dim=jagged_dim)


def random_batches(num_batches, jagged_dim, dtype, device, other_sizes=(19, 6)):
    """Sequences of random lengths (empty ones, ones shorter and longer than a block among them)."""
    lengths = [random.choice((0, 1, 5, 16, 33, 70)) for _ in range(num_batches)]
    lengths[0] = 37  # one partial block at least
    batches = []
    for n in lengths:
        shape = list(other_sizes)
        shape[jagged_dim - 1] = n
        batches.append(torch.randn(shape, dtype=torch.float32).to(dtype).to(device))
    return batches


def padded(batches, jagged_dim, padding):
    """torch.nested.to_padded_tensor's result, by hand, in float32."""
    longest = max(b.shape[jagged_dim - 1] for b in batches)
    shape = [len(batches)] + list(batches[0].shape)
    shape[jagged_dim] = longest
    out = torch.full(shape, float(padding), dtype=torch.float32)
    for i, b in enumerate(batches):
        index = [i] + [slice(None)] * b.ndim
        index[jagged_dim] = slice(0, b.shape[jagged_dim - 1])
        out[tuple(index)] = b.float().cpu()
    return out


# upstream's ToPaddedTensor
def to_padded_arrangement(input, output, block_size=BLOCK_SIZE):
    tile_shape = (1,) + tuple(block_size for _ in range(1, input.ndim))

    return input.tile(tile_shape), output.tile(tile_shape)


def copy_application(input, output):
    output = input  # noqa: F841


# upstream's Copy: a dense tensor expanded along the jagged one's ragged dimension
def copy_arrangement(dst, src, jagged_dim, block_size=BLOCK_SIZE):
    tile_shape = (1,) + tuple(block_size for _ in range(1, dst.ndim))

    return dst.tile(tile_shape), src.expand(
        tuple(-1 if dim != jagged_dim else dst.shape[dim] for dim in range(src.ndim))
    ).tile(tile_shape)


def store_application(dst, src):
    dst = src  # noqa: F841


# Each sequence's sum over its length, a program looping over its blocks of rows.
def sequence_sum_arrangement(input, output, block_j=BLOCK_J, block_c=BLOCK_C):
    input_arranged = input.tile((1, block_j, block_c)).tile((1, -1, 1))
    input_arranged.dtype = input_arranged.dtype.squeeze((0, 2))
    input_arranged.dtype.dtype = input_arranged.dtype.dtype.squeeze(0)
    input_arranged = input_arranged.squeeze(1)

    output_arranged = output.tile((1, block_c))
    output_arranged.dtype = output_arranged.dtype.squeeze(0)

    return input_arranged, output_arranged


def sequence_sum_application(input, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)

    for k in range(input.shape[0]):
        accumulator += ntl.sum(input[k].to(ntl.float32), 0)

    output = accumulator  # noqa: F841


def to_padded_kernel(jagged_dim, padding):
    return ninetoothed.make(
        to_padded_arrangement, copy_application, (Tensor(3, jagged_dim=jagged_dim, other=padding), Tensor(3))
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("num_batches", (1, 3, 7))
@pytest.mark.parametrize("jagged_dim", (1, 2))
def test_to_padded_tensor(jagged_dim, num_batches, dtype, form, device):
    batches = random_batches(num_batches, jagged_dim, dtype, device)
    input = jagged(batches, jagged_dim, form, before=3, after=2)
    expected = padded(batches, jagged_dim, -1)
    output = torch.full(expected.shape, float("nan"), dtype=dtype, device=device)

    to_padded_kernel(jagged_dim, -1)(input, output, block_size=16)

    assert torch.equal(output.float().cpu(), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("jagged_dim", (1, 2))
def test_stores_reach_each_sequence_and_nothing_else(jagged_dim, form, device):
    batches = random_batches(5, jagged_dim, torch.float32, device)
    dst = jagged([torch.full_like(b, 7.0) for b in batches], jagged_dim, form, before=4, after=5, poison=-9.0)
    src_shape = [len(batches)] + list(batches[0].shape)
    src_shape[jagged_dim] = 1
    src = torch.randn(src_shape, device=device)
    kernel = ninetoothed.make(
        functools.partial(copy_arrangement, jagged_dim=jagged_dim),
        store_application,
        (Tensor(3, jagged_dim=jagged_dim), Tensor(3)),
    )

    kernel(dst, src, block_size=8)

    values = dst.values().cpu()
    offsets = dst.offsets().cpu().tolist()
    axis = jagged_dim - 1
    for i, (start, end) in enumerate(zip(offsets, offsets[1:])):
        got = values.narrow(axis, start, end - start)
        assert torch.equal(got, src[i].cpu().expand_as(got))
    assert (values.narrow(axis, 0, offsets[0]) == -9.0).all()
    assert (values.narrow(axis, offsets[-1], values.shape[axis] - offsets[-1]) == -9.0).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_sequence_sums_loop_over_each_sequences_blocks(dtype, form, device):
    batches = random_batches(6, 1, dtype, device, other_sizes=(1, 45))
    input = jagged(batches, 1, form, after=11)
    expected = torch.stack([b.double().sum(0).cpu() for b in batches])
    output = torch.full(expected.shape, float("nan"), dtype=torch.float32, device=device)
    kernel = ninetoothed.make(
        sequence_sum_arrangement, sequence_sum_application, (Tensor(3, jagged_dim=1), Tensor(2))
    )

    kernel(input, output, block_j=8, block_c=16)

    assert torch.allclose(output.double().cpu(), expected, rtol=1e-5, atol=1e-4)


def test_offsets_that_leave_the_values_are_refused_before_any_write():
    batches = random_batches(3, 1, torch.float32, "cpu")
    good = jagged(batches, 1, "hand-built")
    kernel = to_padded_kernel(1, 0)
    output = torch.full(padded(batches, 1, 0).shape, float("nan"))
    values, offsets = good.values(), good.offsets()
    total = values.shape[0]
    for bad in (
        torch.tensor([0, 40, 20, total]),  # falling
        torch.tensor([-1, 10, 20, total]),  # before the values
        torch.tensor([0, 10, 20, total + 1]),  # past them
    ):
        with pytest.raises(ValueError, match="offsets must rise"):
            kernel(HandBuiltJagged(values, bad, 1), output, block_size=16)
    with pytest.raises(TypeError, match="int64"):
        kernel(HandBuiltJagged(values, offsets.int(), 1), output, block_size=16)
    with pytest.raises(ValueError, match="contiguous"):
        kernel(HandBuiltJagged(values, torch.stack([offsets, offsets], 1)[:, 0], 1), output, block_size=16)
    assert output.isnan().all()


def test_arguments_must_be_jagged_as_declared():
    batches = random_batches(2, 1, torch.float32, "cpu")
    kernel = to_padded_kernel(1, 0)
    output = torch.empty(padded(batches, 1, 0).shape)
    with pytest.raises(TypeError, match="jagged tensor"):
        kernel(torch.randn(2, 3, 4), output, block_size=16)
    with pytest.raises(ValueError, match="ragged in dimension 2"):
        kernel(jagged(random_batches(2, 2, torch.float32, "cpu"), 2, "hand-built"), output, block_size=16)
    dense = ninetoothed.make(to_padded_arrangement, copy_application, (Tensor(3), Tensor(3)))
    with pytest.raises(TypeError):
        dense(jagged(batches, 1, "hand-built"), output, block_size=16)


def test_a_program_must_read_one_sequence():
    def two_sequences_a_program(input, output, block_size=BLOCK_SIZE):
        return input.tile((2, block_size, block_size)), output.tile((2, block_size, block_size))

    with pytest.raises(ValueError, match="one sequence"):
        kernel = ninetoothed.make(two_sequences_a_program, copy_application, (Tensor(3, jagged_dim=1), Tensor(3)))
        batches = random_batches(2, 1, torch.float32, "cpu")
        kernel(jagged(batches, 1, "hand-built"), torch.empty(padded(batches, 1, 0).shape), block_size=16)


# Each sequence's last element: the size the arrangement computes with is the sequence's own.
def last_arrangement(input, output, block_size=BLOCK_SIZE):
    return input[:, -1].tile((1, block_size)), output.tile((1, block_size))


@pytest.mark.parametrize("device", DEVICES)
def test_sizes_in_an_arrangement_are_each_sequences_own(device):
    batches = random_batches(7, 1, torch.float32, device)
    batches[2] = batches[2][:0]  # an empty sequence has no last element: `other` there
    input = jagged(batches, 1, "hand-built", after=9)
    output = torch.full((len(batches), batches[0].shape[1]), float("nan"), device=device)
    kernel = ninetoothed.make(last_arrangement, copy_application, (Tensor(3, jagged_dim=1, other=-5), Tensor(2)))
    kernel(input, output, block_size=4)
    expected = torch.stack([b[-1].cpu() if len(b) else torch.full((b.shape[1],), -5.0) for b in batches])
    assert torch.equal(output.cpu(), expected)


def twice_arrangement(a, b, output, block_size=BLOCK_SIZE):
    tile = (1, block_size, block_size)
    return a.tile(tile), b.tile(tile), output.tile(tile)


def twice_application(a, b, output):
    output = a + b  # noqa: F841


def test_jagged_tensors_that_cannot_be_are_refused():
    with pytest.raises(ValueError, match="leave it None"):
        Tensor(shape=(None, 16, 4), jagged_dim=1)
    with pytest.raises(ValueError, match="is jagged"):
        Tensor(3, jagged_dim=1).shape = (2, 16, 4)
    batches = random_batches(2, 1, torch.float32, "cpu")
    output = torch.full(padded(batches, 1, 0).shape, float("nan"))
    meta_offsets = HandBuiltJagged(jagged(batches, 1, "hand-built").values(), torch.empty(3, dtype=torch.int64, device="meta"), 1)
    with pytest.raises(ValueError, match="meta device"):
        to_padded_kernel(1, 0)(meta_offsets, output, block_size=16)
    assert output.isnan().all()

    x = Tensor(3, jagged_dim=1)
    with pytest.raises(ValueError, match="one parameter's only"):
        kernel = ninetoothed.make(twice_arrangement, twice_application, (x, x, Tensor(3)))
        kernel(jagged(batches, 1, "hand-built"), jagged(batches, 1, "hand-built"), output, block_size=16)


def test_jagged_dim_survives_copies_and_pickles():
    x = Tensor(3, jagged_dim=2, other=-1)
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x)), x.tile((1, 4, 4)).source):
        assert y.jagged_dim == 2


def test_ahead_of_time_libraries_refuse_jagged_tensors(tmp_path):
    with pytest.raises(ValueError, match="jagged"):
        ninetoothed.make(
            functools.partial(to_padded_arrangement, block_size=16),
            copy_application,
            (Tensor(3, jagged_dim=1, dtype=ninetoothed.float32), Tensor(3, dtype=ninetoothed.float32)),
            caller="opencl",
            kernel_name="to_padded",
            output_dir=tmp_path,
        )


@pytest.mark.skipif(not ninetoothed._core.nvrtc_available(), reason="NVRTC (libnvrtc.so) is not installed")
def test_cuda_source_reads_each_programs_sequence_once():
    kernel = ninetoothed.make(sequence_sum_arrangement, sequence_sum_application, (Tensor(3, jagged_dim=1), Tensor(2)))
    source = kernel.cuda_source
    assert source.count("_seq_offsets[") == 2  # where the sequence starts, and where the next one does
    assert len(ninetoothed._core.compile_cuda(source, "-Dblock_j=8 -Dblock_c=32 -DNT_WORK_ITEMS=128", "sm_80")) > 0
