"""Acceptance tests: Triton's elementwise names in `ninetoothed.language` (and its libdevice).

One small kernel per function, launched over odd sizes (partial blocks) on fresh random data,
every output poisoned first and every element checked against a float64 (or exact integer)
reference computed by torch/numpy/math. float16 runs compute in float32 and round once where
stored, so they are checked against the float64 reference of the float16 inputs.
"""

import functools
import math
import zlib

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from ninetoothed.language import libdevice

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)
BLOCK = 128
SIZES = (1, 1001)


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def poisoned(n, dtype):
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,)).bool()  # random: a wrong or missing store shows
    fill = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).min + 7
    return torch.full((n,), fill, dtype=dtype)


def arrangement(*tensors):
    return tuple(t.tile((BLOCK_SIZE,)) for t in tensors)


@functools.lru_cache(maxsize=None)
def kernel(fn, num_inputs):
    """`output = fn(*inputs)` elementwise, one block of BLOCK_SIZE per program."""
    if num_inputs == 1:

        def application(x, output):
            output = fn(x)  # noqa: F841

    elif num_inputs == 2:

        def application(x, y, output):
            output = fn(x, y)  # noqa: F841

    elif num_inputs == 3:

        def application(x, y, z, output):
            output = fn(x, y, z)  # noqa: F841

    else:

        def application(x, y, z, w, output):
            output = fn(x, y, z, w)  # noqa: F841

    return ninetoothed.make(arrangement, application, tuple(Tensor(1) for _ in range(num_inputs + 1)))


def run(fn, inputs, output_dtype):
    output = poisoned(inputs[0].numel(), output_dtype)
    kernel(fn, len(inputs))(*inputs, output, BLOCK_SIZE=BLOCK)
    return output


# --- inputs -----------------------------------------------------------------------------------


def normal(n):
    return torch.randn(n) * 3


def positive(n):
    return torch.rand(n) * 8 + 0.05


def unit(n):
    return torch.rand(n) * 1.8 - 0.9


def above_one(n):
    return torch.rand(n) * 9 + 1


def gamma_domain(n):
    x = torch.rand(n) * 6 + 0.05
    x[::3] = -x[::3] + 0.5  # some negative non-integers
    return x


def halves(n):
    """Numbers with exact .5 cases, to see rounding of halves."""
    x = torch.randint(-20, 20, (n,)).float() / 2
    x[::2] = normal(n)[::2]
    return x


def specials(n):
    x = normal(n)
    x[::7] = float("nan")
    x[1::11] = float("inf")
    x[2::13] = float("-inf")
    x[3::17] = -0.0
    x[4::19] = 0.0
    return x


def nonzero(n):
    x = normal(n)
    x[x == 0] = 1.0
    return x


def small_ints(n):
    return torch.randint(-6, 7, (n,), dtype=torch.int32)


def vec(fn):
    """A float64 reference from a scalar Python function."""
    return lambda *xs: torch.tensor(
        np.vectorize(fn, otypes=[np.float64])(*[x.numpy() for x in xs]), dtype=torch.float64
    )


# --- float functions against float64 references ------------------------------------------------

MATH = dict(rtol=2e-6, atol=1e-6)  # a few float32 ulp
LOOSE = dict(rtol=3e-5, atol=1e-6)  # OpenCL allows 16 ulp for lgamma/tgamma, 4 for hypot and friends
EXACT = dict(rtol=0.0, atol=0.0)

CASES = {
    "erfc": (libdevice.erfc, [normal], torch.special.erfc, MATH),
    "lgamma": (libdevice.lgamma, [gamma_domain], torch.lgamma, LOOSE),
    "tgamma": (libdevice.tgamma, [gamma_domain], vec(math.gamma), LOOSE),
    "rint": (libdevice.rint, [halves], torch.round, EXACT),
    "nearbyint": (libdevice.nearbyint, [halves], torch.round, EXACT),
    "acosh": (libdevice.acosh, [above_one], torch.acosh, MATH),
    "asinh": (libdevice.asinh, [normal], torch.asinh, MATH),
    "atanh": (libdevice.atanh, [unit], torch.atanh, MATH),
    "sinpi": (libdevice.sinpi, [normal], lambda x: torch.sin(math.pi * x), MATH),
    "cospi": (libdevice.cospi, [normal], lambda x: torch.cos(math.pi * x), MATH),
    "logb": (libdevice.logb, [nonzero], lambda x: torch.floor(torch.log2(x.abs())), EXACT),
    "rcbrt": (libdevice.rcbrt, [nonzero], lambda x: 1 / torch.sign(x) / x.abs() ** (1 / 3), MATH),
    "sqrt_rn": (ntl.sqrt_rn, [positive], torch.sqrt, None),
    "libdevice.sqrt_rn": (libdevice.sqrt_rn, [positive], torch.sqrt, None),
    "rcp_rn": (libdevice.rcp_rn, [nonzero], lambda x: 1 / x, None),
    "saturatef": (libdevice.saturatef, [normal], lambda x: x.clamp(0, 1), EXACT),
    "normcdf": (libdevice.normcdf, [normal], lambda x: 0.5 * torch.special.erfc(-x / math.sqrt(2)), MATH),
    "fmod": (libdevice.fmod, [normal, nonzero], torch.fmod, EXACT),
    "remainder": (libdevice.remainder, [normal, nonzero], vec(math.remainder), EXACT),
    "hypot": (libdevice.hypot, [normal, normal], torch.hypot, MATH),
    "atan2": (libdevice.atan2, [normal, normal], torch.atan2, MATH),
    "copysign": (libdevice.copysign, [normal, specials], torch.copysign, EXACT),
    "fdim": (libdevice.fdim, [normal, normal], lambda x, y: (x - y).clamp(min=0), None),
    "div_rn": (ntl.div_rn, [normal, nonzero], lambda x, y: x / y, None),
    "fdiv": (ntl.fdiv, [normal, nonzero], lambda x, y: x / y, MATH),
    "fdiv_ieee": (lambda x, y: ntl.fdiv(x, y, ieee_rounding=True), [normal, nonzero], lambda x, y: x / y, None),
    "libdevice.div_rn": (libdevice.div_rn, [normal, nonzero], lambda x, y: x / y, None),
    "rhypot": (libdevice.rhypot, [nonzero, nonzero], lambda x, y: 1 / torch.hypot(x, y), MATH),
    "pow_float": (libdevice.pow, [positive, normal], torch.pow, LOOSE),
    "pow_int_block": (libdevice.pow, [normal, small_ints], lambda x, n: x ** n, MATH),
    "pow_int_python": (lambda x: libdevice.pow(x, 3), [normal], lambda x: x**3, MATH),
    "clamp": (lambda x, lo, hi: ntl.clamp(x, lo, hi), [normal, lambda n: -torch.rand(n), torch.rand],
              lambda x, lo, hi: torch.minimum(torch.maximum(x, lo), hi), EXACT),
    "clamp_python_bounds": (lambda x: ntl.clamp(x, -0.5, 2.0), [normal], lambda x: x.clamp(-0.5, 2.0), EXACT),
    "fma_rn": (libdevice.fma_rn, [normal, normal, normal], lambda x, y, z: x * y + z, None),
    "norm3d": (libdevice.norm3d, [normal, normal, normal], lambda a, b, c: (a * a + b * b + c * c).sqrt(), MATH),
    "norm4d": (libdevice.norm4d, [normal] * 4, lambda a, b, c, d: (a * a + b * b + c * c + d * d).sqrt(), MATH),
    "ldexp": (libdevice.ldexp, [normal, small_ints], lambda x, n: x * 2.0**n, EXACT),
    "frexp_mantissa": (lambda x: libdevice.frexp(x)[0], [nonzero], lambda x: torch.frexp(x).mantissa, EXACT),
    "softmax": (lambda x: ntl.softmax(x), [normal], lambda x: torch.softmax(x.view(-1, 1), 0).view(-1), MATH),
}


def rounded(reference, inputs):
    """The reference rounded once to float32 (for correctly rounded operations)."""
    return reference(*[x.double() for x in inputs]).float().double()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("name", sorted(CASES))
def test_float_function(name, dtype, size):
    fn, makers, reference, tolerance = CASES[name]
    inputs = [make(size) for make in makers]
    if name == "softmax":  # one whole block: the softmax is over it
        inputs = [make(BLOCK) for make in makers]
    inputs = [x.to(dtype) if x.is_floating_point() else x for x in inputs]
    output = run(fn, inputs, dtype)
    wide = [x.double() if x.is_floating_point() else x.long() for x in inputs]
    expected = reference(*wide).double()
    if dtype == torch.float16:
        # Computed in float32, rounded once to float16.
        torch.testing.assert_close(output.double(), expected.half().double(), rtol=2e-3, atol=2e-3,
                                   equal_nan=True)
        return
    if tolerance is None:  # correctly rounded: the float32 rounding of the exact result
        expected = rounded(reference, inputs)
        tolerance = EXACT
    torch.testing.assert_close(output.double(), expected, equal_nan=True, **tolerance)


# --- predicates, integers out of floats --------------------------------------------------------

PREDICATES = {
    "isnan": (libdevice.isnan, torch.bool, torch.isnan),
    "isinf": (libdevice.isinf, torch.bool, torch.isinf),
    "finitef": (libdevice.finitef, torch.int32, lambda x: torch.isfinite(x).int()),
    "isfinited": (libdevice.isfinited, torch.int32, lambda x: torch.isfinite(x).int()),
    "signbit": (libdevice.signbit, torch.int32, lambda x: torch.signbit(x).int()),
    "ilogb": (libdevice.ilogb, torch.int32, lambda x: torch.frexp(x).exponent - 1),
    "frexp_exponent": (lambda x: libdevice.frexp(x)[1], torch.int32, lambda x: torch.frexp(x).exponent),
    "llrint": (libdevice.llrint, torch.int64, lambda x: torch.round(x).long()),
    "llround": (libdevice.llround, torch.int64,
                lambda x: (torch.sign(x) * torch.floor(x.abs() + 0.5)).long()),
    "float2int_rz": (libdevice.float2int_rz, torch.int32, lambda x: torch.trunc(x).int()),
    "float2int_rd": (libdevice.float2int_rd, torch.int32, lambda x: torch.floor(x).int()),
    "float2int_ru": (libdevice.float2int_ru, torch.int32, lambda x: torch.ceil(x).int()),
    "float2int_rn": (libdevice.float2int_rn, torch.int32, lambda x: torch.round(x).int()),
    "float_as_int": (libdevice.float_as_int, torch.int32, lambda x: x.view(torch.int32)),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_float_to_integer_function(name, size):
    fn, output_dtype, reference = PREDICATES[name]
    if name in ("isnan", "isinf", "finitef", "isfinited", "signbit"):
        x = specials(size)
    elif name in ("ilogb", "frexp_exponent"):
        x = nonzero(size)
    else:
        x = halves(size)
    output = run(fn, [x], output_dtype)
    assert torch.equal(output, reference(x))


def test_float16_predicates_see_float16_values():
    x = specials(1001).half()
    assert torch.equal(run(libdevice.isnan, [x], torch.bool), torch.isnan(x))
    assert torch.equal(run(libdevice.signbit, [x], torch.int32), torch.signbit(x).int())


# --- integers -----------------------------------------------------------------------------------


def random_integers(n, dtype):
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (n,), dtype=torch.int64).to(dtype)


def unsigned_high(x, y, bits):
    mask = (1 << bits) - 1
    return [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x.tolist(), y.tolist())]


def to_signed(values, bits):
    return [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in values]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", (torch.int32, torch.int64))
def test_umulhi(dtype, size):
    x, y = random_integers(size, dtype), random_integers(size, dtype)
    bits = torch.iinfo(dtype).bits
    output = run(ntl.umulhi, [x, y], dtype)
    assert output.tolist() == to_signed(unsigned_high(x, y, bits), bits)


def test_umulhi_of_uint32_bits():
    """uint32 is not a torch 1.13 dtype: the int32 bits are the uint32 ones."""
    x, y = random_integers(1001, torch.int32), random_integers(1001, torch.int32)
    output = run(lambda a, b: ntl.umulhi(a.to(ntl.uint32, bitcast=True), b.to(ntl.uint32, bitcast=True))
                 .to(ntl.int32, bitcast=True), [x, y], torch.int32)
    assert output.tolist() == to_signed(unsigned_high(x, y, 32), 32)


def test_umulhi_rejects_floats():
    with pytest.raises(TypeError, match="integer"):
        run(ntl.umulhi, [torch.randn(8), torch.randn(8)], torch.float32)


@pytest.mark.parametrize("size", SIZES)
def test_integer_libdevice(size):
    x, y = random_integers(size, torch.int32), random_integers(size, torch.int32)
    bits = [v & 0xFFFFFFFF for v in x.tolist()]
    assert run(libdevice.popc, [x], torch.int32).tolist() == [bin(v).count("1") for v in bits]
    assert run(libdevice.clz, [x], torch.int32).tolist() == [32 - v.bit_length() for v in bits]
    assert run(libdevice.ffs, [x], torch.int32).tolist() == [(v & -v).bit_length() for v in bits]
    reversed_bits = [int(f"{v:032b}"[::-1], 2) for v in bits]
    assert run(libdevice.brev, [x], torch.int32).tolist() == to_signed(reversed_bits, 32)
    signed_high = [(a * b) >> 32 for a, b in zip(x.tolist(), y.tolist())]
    assert run(libdevice.mulhi, [x, y], torch.int32).tolist() == signed_high
    assert run(libdevice.hadd, [x, y], torch.int32).tolist() == [(a + b) >> 1 for a, b in zip(x.tolist(), y.tolist())]


def test_bitcast_round_trips_float16_and_float32():
    x = specials(1001)
    bits = run(lambda a: a.to(ntl.int32, bitcast=True), [x], torch.int32)
    assert torch.equal(bits, x.view(torch.int32))
    h = x.half()
    h[torch.isnan(h)] = 1.5  # float16 computes in float32: NaN payloads are not kept
    half_bits = run(lambda a: a.to(ntl.int16, bitcast=True), [h], torch.int16)
    assert torch.equal(half_bits, h.view(torch.int16))
    back = run(lambda a: ntl.cast(a, ntl.float16, bitcast=True), [half_bits], torch.float16)
    assert torch.equal(back.view(torch.int16), h.view(torch.int16))
    with pytest.raises(ValueError, match="same width"):
        run(lambda a: a.to(ntl.int64, bitcast=True), [x], torch.int64)


# --- NaN propagation ---------------------------------------------------------------------------


def test_maximum_minimum_clamp_propagate_nan():
    x, y = specials(1001), specials(1001).flip(0)
    nan_any = torch.isnan(x) | torch.isnan(y)
    big = run(lambda a, b: ntl.maximum(a, b, propagate_nan=ntl.PropagateNan.ALL), [x, y], torch.float32)
    assert torch.isnan(big).equal(nan_any)
    assert torch.equal(big[~nan_any], torch.maximum(x, y)[~nan_any])
    small = run(lambda a, b: ntl.minimum(a, b, ntl.PropagateNan.ALL), [x, y], torch.float32)
    assert torch.isnan(small).equal(nan_any)
    assert torch.equal(small[~nan_any], torch.minimum(x, y)[~nan_any])
    # Without propagation, NaN loses to a number.
    fmax = run(ntl.maximum, [x, y], torch.float32)
    assert torch.isnan(fmax).equal(torch.isnan(x) & torch.isnan(y))
    clamped = run(lambda a: ntl.clamp(a, -1.0, 1.0, propagate_nan=ntl.PropagateNan.ALL), [x], torch.float32)
    assert torch.isnan(clamped).equal(torch.isnan(x))
    assert torch.equal(clamped[~torch.isnan(x)], x[~torch.isnan(x)].clamp(-1, 1))


def test_nextafter_is_exact():
    x, y = normal(1001), specials(1001)
    output = run(libdevice.nextafter, [x, y], torch.float32)
    torch.testing.assert_close(output, torch.nextafter(x, y), rtol=0, atol=0, equal_nan=True)


def test_clamp_of_integers_stays_integer():
    x = random_integers(1001, torch.int32)
    output = run(lambda a: ntl.clamp(a, -1000, 1000), [x], torch.int32)
    assert torch.equal(output, x.clamp(-1000, 1000))


# --- random numbers -----------------------------------------------------------------------------


def philox_reference(seed, offsets, rounds=10):
    """Philox4x32 of counters (offset low, offset high, 0, 0) under key (seed low, seed high), in numpy."""
    mask = np.uint64(0xFFFFFFFF)
    offsets = offsets.astype(np.int64).view(np.uint64)
    c = [offsets & mask, offsets >> np.uint64(32), np.zeros_like(offsets), np.zeros_like(offsets)]
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    a, b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(rounds):
        p0, p1 = a * c[0], b * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & mask, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
    return [torch.from_numpy(w.astype(np.uint32).view(np.int32).copy()) for w in c]


def random_arrangement(x, seed, *outputs):
    return (x.tile((BLOCK_SIZE,)), seed) + tuple(o.tile((BLOCK_SIZE,)) for o in outputs)


def randint4x_application(x, seed, o0, o1, o2, o3):
    o0, o1, o2, o3 = ntl.randint4x(seed, x.offsets())  # noqa: F841


def randint_rounds_application(x, seed, o0, o1, o2, o3):
    o0 = ntl.randint(seed, x.offsets(), 7)  # noqa: F841
    o1, o2, o3, _ = ntl.philox(seed, x.offsets().to(ntl.uint32), 0, 0, 0, 7)  # noqa: F841


@pytest.mark.parametrize("application", (randint4x_application, randint_rounds_application))
def test_randint_matches_philox(application):
    kernel = ninetoothed.make(random_arrangement, application, (Tensor(1), Tensor(0)) + tuple(Tensor(1) for _ in range(4)))
    size = 3001
    seed = int(torch.randint(0, 2**62, ()))
    outputs = [poisoned(size, torch.int32) for _ in range(4)]
    kernel(torch.empty(size), seed, *outputs, BLOCK_SIZE=BLOCK)
    offsets = np.arange(size)
    if application is randint4x_application:
        expected = philox_reference(seed, offsets)
    else:
        words = philox_reference(seed, offsets, 7)
        expected = [words[0], words[0], words[1], words[2]]
    for output, reference in zip(outputs, expected):
        assert torch.equal(output, reference)


def uniform_application(x, seed, o0, o1, o2, o3):
    o0 = ntl.rand(seed, x.offsets())  # noqa: F841
    o1 = ntl.rand4x(seed, x.offsets())[0]  # noqa: F841
    o2 = ntl.randn(seed, x.offsets())  # noqa: F841
    o3 = ntl.randn4x(seed, x.offsets())[0]  # noqa: F841


def test_rand_is_the_top_bits_of_randint():
    kernel = ninetoothed.make(random_arrangement, uniform_application, (Tensor(1), Tensor(0)) + tuple(Tensor(1) for _ in range(4)))
    size, seed = 3001, 12345
    outputs = [poisoned(size, torch.float32) for _ in range(4)]
    kernel(torch.empty(size), seed, *outputs, BLOCK_SIZE=BLOCK)
    words = philox_reference(seed, np.arange(size))
    uniform = [(w.view(torch.int32).long() & 0xFFFFFFFF) >> 8 for w in words]
    expected = [(u.double() * 2.0**-24).float() for u in uniform]
    assert torch.equal(outputs[0], expected[0])
    assert torch.equal(outputs[1], expected[0])
    u1 = expected[0].double().clamp(min=2.0**-25)
    normal = torch.sqrt(-2 * torch.log(u1)) * torch.cos(2 * math.pi * expected[1].double())
    torch.testing.assert_close(outputs[2].double(), normal, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(outputs[3], outputs[2], rtol=1e-5, atol=1e-5)


def test_uint_to_uniform_float_and_pair_uniform_to_normal():
    x = random_integers(1001, torch.int32)
    uniform = run(ntl.uint_to_uniform_float, [x], torch.float32)
    folded = torch.where(x < 0, -x.long() - 1, x.long())
    torch.testing.assert_close(uniform.double(), folded.double() * 4.656613e-10, rtol=1e-6, atol=0)
    assert ((uniform >= 0) & (uniform < 1)).all()
    u1, u2 = torch.rand(1001), torch.rand(1001)
    n1 = run(lambda a, b: ntl.pair_uniform_to_normal(a, b)[0], [u1, u2], torch.float32)
    n2 = run(lambda a, b: ntl.pair_uniform_to_normal(a, b)[1], [u1, u2], torch.float32)
    r = torch.sqrt(-2 * torch.log(u1.double().clamp(min=1e-7)))
    torch.testing.assert_close(n1.double(), r * torch.cos(2 * math.pi * u2.double()), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(n2.double(), r * torch.sin(2 * math.pi * u2.double()), rtol=1e-4, atol=1e-4)


# --- integer reductions --------------------------------------------------------------------------


def rows_arrangement(x, output):
    return x.tile((1, BLOCK_SIZE)), output.tile((1, 1))


def xor_rows_application(x, output):
    output = ntl.xor_sum(x, 1, keep_dims=True)  # noqa: F841


def or_rows_application(x, output):
    output = ntl.reduce_or(x, 1, keep_dims=True)  # noqa: F841


@pytest.mark.parametrize("dtype", (torch.int32, torch.int64, torch.int8))
@pytest.mark.parametrize("application", (xor_rows_application, or_rows_application))
def test_xor_sum_and_reduce_or(application, dtype):
    kernel = ninetoothed.make(rows_arrangement, application, (Tensor(2), Tensor(2)))
    x = random_integers(7 * 100, dtype).view(7, 100)  # 100 < BLOCK: masked elements read 0
    output = torch.full((7, 1), torch.iinfo(dtype).min + 3, dtype=dtype)
    kernel(x, output, BLOCK_SIZE=BLOCK)
    op = np.bitwise_xor if application is xor_rows_application else np.bitwise_or
    expected = torch.from_numpy(op.reduce(x.numpy(), axis=1, keepdims=True))
    assert torch.equal(output, expected)


def test_xor_sum_rejects_floats():
    kernel = ninetoothed.make(rows_arrangement, xor_rows_application, (Tensor(2), Tensor(2)))
    with pytest.raises(TypeError, match="integers"):
        kernel(torch.randn(3, 5), torch.empty(3, 1), BLOCK_SIZE=BLOCK)
