"""Operators of the corpus built ahead of time with ninetoothed.build, as an operator library ships them.

The premakes are the corpus's own (the same ones its Python entry points make kernels from); the
libraries are called through their dispatchers with upstream's configuration arguments.
"""

import pytest
import torch
import torch.nn.functional as F

import ninetoothed
from corpus import conv2d, softmax
from corpus.mm import InputPrecision
from ops_testing import DTYPES, assert_matches, poisoned

_NT_DTYPES = {torch.float32: ninetoothed.float32, torch.float16: ninetoothed.float16}


def _conv2d_config(dtype):
    kwargs = {
        "input_precision": InputPrecision.IEEE,
        "stride_h": 2,
        "stride_w": 1,
        "padding_h": 1,
        "padding_w": 1,
        "dilation_h": 1,
        "dilation_w": 1,
        "dtype": _NT_DTYPES[dtype],
        "block_size_m": 32,
        "block_size_n": 16,
        "block_size_k": 16,
    }
    return (), kwargs, {}


def test_conv2d_built_ahead_of_time(tmp_path):
    configs = tuple(_conv2d_config(dtype) for dtype in DTYPES)
    kernel = ninetoothed.build(conv2d.premake, configs, kernel_name="conv2d", output_dir=tmp_path)
    for dtype, config in zip(DTYPES, configs):
        input = torch.randn(2, 5, 11, 9).to(dtype)
        weight = torch.randn(7, 5, 3, 2).to(dtype)
        bias = torch.randn(7).to(dtype)
        expected = F.conv2d(input.float(), weight.float(), bias.float(), stride=(2, 1), padding=1)
        output = poisoned(expected.shape, dtype)
        kernel(input, weight, bias, output, None, *config[1].values())
        rtol, atol = (1e-5, 1e-4) if dtype == torch.float32 else (1e-2, 2e-2)
        assert_matches(output, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("shape", ((37, 100), (1, 1), (3, 1025)))
def test_softmax_built_ahead_of_time_tunes_its_block_in_the_library(tmp_path, shape):
    configs = tuple(((2, 1), {"dtype": _NT_DTYPES[dtype]}, {}) for dtype in DTYPES)
    kernel = ninetoothed.build(softmax.premake, configs, kernel_name="softmax", output_dir=tmp_path)
    for dtype in DTYPES:
        input = torch.randn(shape).to(dtype)
        output = poisoned(shape, dtype)
        # Configuration arguments: ndim, dim, log, dtype, block_size (None: a meta symbol, tuned on first use).
        kernel(input, output, 2, 1, False, _NT_DTYPES[dtype], None)
        assert_matches(output, torch.softmax(input.float(), dim=1))
