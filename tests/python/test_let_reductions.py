"""Whole-block reductions of a value held twice (codegen/c/emitter.h, write_array()): in a
program on one work-item, the sum, max and min of a Let block fold as the block is written,
into 16 partial results by the last index modulo 16, instead of a pass of their own. These
tests check every element of kernels that reduce such blocks, on whole and partial blocks
with a tail of fewer than 16 elements, in float32, float16 and int32, and where the folds go."""

import re

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BM = ninetoothed.Symbol("BM", constexpr=True)
BN = ninetoothed.Symbol("BN", constexpr=True)


def _arrangement(x, out):
    return x.tile((BM, BN)), out.tile((BM, BN))


def _statistics_application(x, out):
    scaled = x * 2.0  # held: read by three reductions and the output
    total = ntl.sum(scaled)
    top = ntl.max(scaled)
    bottom = ntl.min(scaled)
    out = (scaled - bottom) / (top - bottom + 1.0) + total * 0.001  # noqa: F841


def _work_item_source(source):
    return source[source.index("// A program on one work-item.") :]


def _reference(x, rows, cols, bm, bn, fill_max, fill_min):
    x = x.double() * 2.0
    out = torch.empty_like(x)
    for i in range(0, rows, bm):
        for j in range(0, cols, bn):
            block = x[i : i + bm, j : j + bn]
            # The padding of a partial block holds the fill value (0) doubled.
            padded = block.numel() < bm * bn
            top = max(block.max().item(), fill_max) if padded else block.max().item()
            bottom = min(block.min().item(), fill_min) if padded else block.min().item()
            out[i : i + bm, j : j + bn] = (block - bottom) / (top - bottom + 1.0) + block.sum() * 0.001
    return out


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("rows, cols, bm, bn", ((37, 45, 8, 20), (16, 64, 4, 32), (5, 7, 8, 8), (33, 100, 1, 50)))
def test_sum_max_min_of_a_held_block(dtype, rows, cols, bm, bn):
    kernel = ninetoothed.make(_arrangement, _statistics_application, (Tensor(2), Tensor(2)))
    x = torch.randn(rows, cols).to(dtype)
    out = torch.full((rows, cols), float("nan"), dtype=dtype)
    kernel(x, out, BM=bm, BN=bn)
    expected = _reference(x, rows, cols, bm, bn, 0.0, 0.0)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(out.double(), expected, rtol=tolerance, atol=tolerance)
    body = _work_item_source(kernel.source)
    # Three folds in the pass that writes the held block, and no reduction pass of their own.
    writes = re.findall(r"nt_let\d+\[[^\n]*\] = [^\n]*;\n((?:\s*nt_parts\d+\[[^\n]*\n){3})", body)
    assert writes, body
    assert "nt_lanes" not in body, body


def _int_application(x, out):
    tripled = x * 3
    out = tripled - ntl.sum(tripled) + ntl.max(tripled)  # noqa: F841


@pytest.mark.parametrize("rows, cols, bm, bn", ((9, 50, 4, 17), (8, 32, 8, 32)))
def test_integer_sum_of_a_held_block_is_exact(rows, cols, bm, bn):
    kernel = ninetoothed.make(_arrangement, _int_application, (Tensor(2, dtype=ninetoothed.int32), Tensor(2, dtype=ninetoothed.int32)))
    x = torch.randint(-1000, 1000, (rows, cols), dtype=torch.int32)
    out = torch.full((rows, cols), -7, dtype=torch.int32)
    kernel(x, out, BM=bm, BN=bn)
    expected = torch.empty_like(x)
    for i in range(0, rows, bm):
        for j in range(0, cols, bn):
            block = x[i : i + bm, j : j + bn].long() * 3
            top = block.max().item()
            if block.numel() < bm * bn:
                top = max(top, 0)  # the padding's 0
            expected[i : i + bm, j : j + bn] = (block - block.sum() + top).int()
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def _count_application(x, out):
    positive = x > 0  # held: read by a sum and by the where
    out = ntl.where(positive, ntl.sum(positive), -ntl.sum(x < 0))  # noqa: F841


@pytest.mark.parametrize("rows, cols, bm, bn", ((9, 50, 4, 17), (8, 32, 8, 32)))
def test_sum_of_booleans_counts_them(rows, cols, bm, bn):
    # A sum of booleans starts from 0 (it started from 1, the identity of a min of booleans),
    # held (folded as the block is written) or not (its own pass over a comparison).
    kernel = ninetoothed.make(_arrangement, _count_application, (Tensor(2), Tensor(2)))
    x = torch.randn(rows, cols)
    x[x.abs() < 0.3] = 0.0
    out = torch.full((rows, cols), float("nan"))
    kernel(x, out, BM=bm, BN=bn)
    expected = torch.empty_like(x)
    for i in range(0, rows, bm):
        for j in range(0, cols, bn):
            block = x[i : i + bm, j : j + bn]  # the padding's 0 is neither > 0 nor < 0
            positives, negatives = float((block > 0).sum()), float((block < 0).sum())
            expected[i : i + bm, j : j + bn] = torch.where(block > 0, positives, -negatives)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
