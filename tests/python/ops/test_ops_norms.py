"""Normalisations of the corpus against torch: layer_norm, rms_norm, batch_norm (inference),
instance_norm and group_norm, with weights and biases, float32 and float16.

Outputs are poisoned first; references come from float64 copies of the inputs and parameters
(torch's own float32 statistics are off by a few roundings: a lone element normalises to 3e-5, not 0).
"""

import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import batch_norm, caching, group_norm, instance_norm, layer_norm, rms_norm
from ops_testing import DTYPES, assert_matches, poisoned

caching.set_default_max_num_configs(1)


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def dtype_id(dtype):
    return str(dtype).replace("torch.", "")


dtypes = pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)


def randn(shape, dtype, transposed=False):
    """Normal data of `shape`; `transposed` gives a view with its last two dims swapped."""
    if transposed:
        return torch.randn(*shape[:-2], shape[-1], shape[-2]).to(dtype).transpose(-1, -2)

    return torch.randn(shape).to(dtype)


@dtypes
@pytest.mark.parametrize("affine", (True, False))
@pytest.mark.parametrize(
    "shape, normalized_shape, transposed",
    (
        ((7, 33), (33,), False),
        ((1, 1), (1,), False),
        ((4, 7, 257), (257,), False),
        ((3, 5, 33), (5, 33), False),
        ((257, 9), (9,), True),
    ),
)
def test_layer_norm(shape, normalized_shape, transposed, affine, dtype):
    input = randn(shape, dtype, transposed) * 2 + 0.5
    weight = randn(normalized_shape, dtype) if affine else None
    bias = randn(normalized_shape, dtype) if affine else None
    out = poisoned(shape, dtype)

    layer_norm.layer_norm(input, normalized_shape, weight, bias, eps=1e-5, out=out)

    expected = F.layer_norm(
        input.double(),
        normalized_shape,
        None if weight is None else weight.double(),
        None if bias is None else bias.double(),
        eps=1e-5,
    )
    assert_matches(out, expected)


def rms_norm_reference(input, weight, eps):
    input = input.double()
    normalized = input * torch.rsqrt(input.pow(2).mean(-1, keepdim=True) + eps)

    return normalized if weight is None else normalized * weight.double()


@dtypes
@pytest.mark.parametrize("with_weight", (True, False))
@pytest.mark.parametrize("shape", ((1, 1023), (7, 3), (3, 7, 33), (2, 5, 257)))
def test_rms_norm(shape, with_weight, dtype):
    input = randn(shape, dtype)
    weight = randn(shape[-1:], dtype) if with_weight else None
    out = poisoned(shape, dtype)

    rms_norm.rms_norm(input, weight, eps=1e-6, out=out)

    assert_matches(out, rms_norm_reference(input, weight, 1e-6))


@dtypes
@pytest.mark.parametrize("shape", ((5, 7), (33, 2), (4, 7, 257), (2, 3, 5, 9), (1, 3, 1, 2)))
def test_batch_norm_inference(shape, dtype):
    channels = shape[1]
    input = randn(shape, dtype)
    running_mean = randn((channels,), dtype)
    running_var = (torch.rand(channels) + 0.5).to(dtype)
    weight = randn((channels,), dtype)
    bias = randn((channels,), dtype)
    out = poisoned(shape, dtype)

    batch_norm.batch_norm(input, running_mean, running_var, weight, bias, eps=1e-3, out=out)

    expected = F.batch_norm(
        input.double(),
        running_mean.double(),
        running_var.double(),
        weight.double(),
        bias.double(),
        training=False,
        eps=1e-3,
    )
    assert_matches(out, expected)


@dtypes
@pytest.mark.parametrize("affine", (True, False))
@pytest.mark.parametrize("shape", ((2, 3, 257), (4, 1, 7), (2, 3, 5, 9), (1, 2, 33, 17)))
def test_instance_norm(shape, affine, dtype):
    channels = shape[1]
    input = randn(shape, dtype) * 3 - 1
    weight = randn((channels,), dtype) if affine else None
    bias = randn((channels,), dtype) if affine else None
    out = poisoned(shape, dtype)

    instance_norm.instance_norm(input, weight, bias, eps=1e-5, out=out)

    expected = F.instance_norm(
        input.double(),
        weight=None if weight is None else weight.double(),
        bias=None if bias is None else bias.double(),
        eps=1e-5,
    )
    assert_matches(out, expected)


@dtypes
@pytest.mark.parametrize(
    "shape, num_groups",
    (((2, 6, 5, 9), 3), ((3, 4, 33), 2), ((1, 8, 257), 8), ((2, 5, 7, 3), 1), ((4, 6, 2), 3)),
)
def test_group_norm(shape, num_groups, dtype):
    channels = shape[1]
    input = randn(shape, dtype) * 2 + 1
    weight = randn((channels,), dtype)
    bias = randn((channels,), dtype)
    out = poisoned(shape, dtype)

    group_norm.group_norm(input, num_groups, weight, bias, eps=1e-5, out=out)

    expected = F.group_norm(input.double(), num_groups, weight.double(), bias.double(), eps=1e-5)
    assert_matches(out, expected)
