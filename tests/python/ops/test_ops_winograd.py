"""conv2d by Winograd's F(2x2, 3x3) (corpus/conv2d_winograd.py) against torch, element by element.

Shapes with odd output sizes (a last row or column of 2x2 tiles half outside the output), runs
of tiles and blocks of channels and filters that end partly past their sizes, several blocks of
channels (the accumulation over them), one output row of one tile, padding of 1 and uneven
padding (2, 0), a bias and none, a channels-last input, and float16 (transforms and products in
float32). The filter transform is
checked on its own against G g G^T in float64.
"""

import zlib

import pytest
import torch
import torch.nn.functional as F

from corpus import conv2d_winograd, mm
from ops_testing import assert_matches, poisoned

G = torch.tensor([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=torch.float64)

# Small blocks, so that the shapes below cross them: 16 tiles a run, 16 channels and 16 filters.
BLOCKS = {"block_size_t": 16, "block_size_c": 16, "block_size_k": 16}


@pytest.fixture(autouse=True)
def seed(request):
    torch.manual_seed(zlib.crc32(request.node.nodeid.encode()))


def _conv2d(input, weight, bias, padding, out):
    padding_h, padding_w = (padding, padding) if isinstance(padding, int) else padding
    kernel = mm.cached_make(
        conv2d_winograd.premake, padding_h=padding_h, padding_w=padding_w, **BLOCKS
    )
    if bias is None:
        bias = torch.zeros(weight.shape[0], dtype=out.dtype)
    kernel(input, conv2d_winograd.transform_weight(weight), bias, out)
    return out


def test_filter_transform_matches_g_g_gt():
    weight = torch.randn(37, 21, 3, 3)
    expected = torch.einsum("ar,kcrs,bs->abkc", G, weight.double(), G)

    transformed = conv2d_winograd.transform_weight(weight)

    assert transformed.shape == (4, 4, 37, 21) and transformed.dtype == torch.float32
    torch.testing.assert_close(transformed.double(), expected, rtol=1e-6, atol=1e-6)


# (input shape, filters, padding, bias)
# Paddings are constexpr: the cases share two of them, a build each (per dtype and layout).
CASES = {
    "odd-sizes": ((2, 19, 13, 23), 21, 1, True, torch.float32),
    "odd-sizes-float16": ((2, 19, 13, 23), 21, 1, True, torch.float16),
    "even-sizes-no-bias": ((1, 40, 18, 34), 33, 1, False, torch.float32),
    "one-tile": ((1, 3, 1, 2), 2, 1, True, torch.float32),
    "uneven-padding": ((3, 5, 9, 6), 7, (2, 0), True, torch.float32),
}


@pytest.mark.parametrize("input_shape, filters, padding, with_bias, dtype", CASES.values(), ids=CASES.keys())
def test_conv2d_winograd(input_shape, filters, padding, with_bias, dtype):
    input = torch.randn(input_shape).to(dtype)
    weight = torch.randn(filters, input_shape[1], 3, 3).to(dtype)
    bias = torch.randn(filters).to(dtype) if with_bias else None
    expected = F.conv2d(
        input.double(), weight.double(), None if bias is None else bias.double(), padding=padding
    )
    out = poisoned(expected.shape, dtype)

    _conv2d(input, weight, bias, padding, out)

    # The transforms add and subtract up to 16 terms of each product, so the float32 rounding
    # grows with the channels; float16 rounds the result once.
    scale = (input_shape[1] * 9) ** 0.5
    tolerance = 1e-5 * scale if dtype == torch.float32 else 2e-3 * scale
    assert_matches(out, expected, rtol=tolerance, atol=tolerance)


def test_conv2d_winograd_of_a_channels_last_input():
    input = torch.randn(2, 17, 11, 9).to(memory_format=torch.channels_last)
    weight, bias = torch.randn(19, 17, 3, 3), torch.randn(19)
    expected = F.conv2d(input.double(), weight.double(), bias.double(), padding=1)
    out = poisoned(expected.shape, torch.float32)

    _conv2d(input, weight, bias, 1, out)

    assert_matches(out, expected, rtol=2e-4, atol=2e-4)


def test_the_public_function_and_its_errors():
    input, weight = torch.randn(1, 4, 6, 7), torch.randn(5, 4, 3, 3)
    out = poisoned((1, 5, 6, 7), torch.float32)

    assert conv2d_winograd.conv2d(input, weight, padding=1, out=out) is out
    assert_matches(out, F.conv2d(input.double(), weight.double(), padding=1), rtol=1e-4, atol=1e-4)
    # A second call with other weights of the same shape: the thread's buffer for U is reused and
    # holds the new weights' transform.
    other = torch.randn(5, 4, 3, 3)
    out.fill_(float("nan"))
    conv2d_winograd.conv2d(input, other, padding=1, out=out)
    assert_matches(out, F.conv2d(input.double(), other.double(), padding=1), rtol=1e-4, atol=1e-4)

    with pytest.raises(AssertionError, match="3x3 filters"):
        conv2d_winograd.conv2d(input, torch.randn(5, 4, 5, 5))
    with pytest.raises(AssertionError, match="4 channels, the filters 3"):
        conv2d_winograd.conv2d(input, torch.randn(5, 3, 3, 3))
    with pytest.raises(AssertionError, match="float32"):
        conv2d_winograd.transform_weight(weight, out=torch.empty(4, 4, 5, 4, dtype=torch.float64))
