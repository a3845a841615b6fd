"""float32 -> float16 rounding, bit for bit against torch, over every exponent and the roundings'
edge cases: stores into float16 tensors and `.to(float16)` inside an application (on CPUs a
branch-free conversion of the kernels' own, c_types.cpp's nt_half_bits_rte; elsewhere the device's).
"""

import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)


def arrangement(input, output, BLOCK_SIZE=BLOCK_SIZE):
    return input.tile((BLOCK_SIZE,)), output.tile((BLOCK_SIZE,))


def store_application(input, output):
    output = input  # noqa: F841  (float32 into a float16 tensor)


def round_trip_application(input, output):
    output = input.to(ntl.float16).to(ntl.float32) * 1.0  # noqa: F841


def edge_case_floats():
    """Every sign, exponent and top 10 mantissa bits, with the 13 bits a rounding drops set to
    each case: zero, below half, a tie (round to even either way), above half, all ones."""
    high = torch.arange(1 << 19, dtype=torch.int64) << 13
    lows = torch.tensor([0x0, 0x1, 0xFFF, 0x1000, 0x1001, 0x1FFF], dtype=torch.int64)
    bits = (high[:, None] | lows[None, :]).reshape(-1)
    bits = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32)
    return bits.view(torch.float32)


def same_halves(got, expected):
    nan = expected.isnan()
    assert torch.equal(got.isnan(), nan)
    assert torch.equal(got[~nan].view(torch.int16), expected[~nan].view(torch.int16))


def test_float16_stores_round_as_torch_does():
    x = edge_case_floats()
    output = torch.full(x.shape, float("nan"), dtype=torch.float16)
    ninetoothed.make(arrangement, store_application, (Tensor(1), Tensor(1)))(x, output, BLOCK_SIZE=1024)
    same_halves(output, x.half())


def test_to_float16_in_an_application_rounds_as_torch_does():
    x = edge_case_floats()
    output = torch.full(x.shape, float("nan"))
    ninetoothed.make(arrangement, round_trip_application, (Tensor(1), Tensor(1)))(x, output, BLOCK_SIZE=1024)
    expected = x.half().float()
    nan = expected.isnan()
    assert torch.equal(output.isnan(), nan)
    assert torch.equal(output[~nan].view(torch.int32), expected[~nan].view(torch.int32))
