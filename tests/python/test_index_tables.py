"""Index tables (codegen/c/emitter.h): in a program on one work-item, the unravelled parts
of a block's offsets and masks that depend on one index alone are computed once per row or
column, into tables before the nest (or before the loop that leaves them unchanged)."""

import re

import pytest
import torch
import torch.nn.functional as F

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor
from test_kernels_convolution import (
    BLOCK_SIZE_K,
    BLOCK_SIZE_M,
    BLOCK_SIZE_N,
    _conv2d_kernel,
    conv2d_arrangement,
    matmul_application,
    matmul_arrangement,
)



def _flattened_matmul_arrangement(input, filter, output):
    # A GEMM over flattened dims: its rows are (i, j) pairs (row // size_1, row % size_1), its
    # reduction steps (k1, k2) pairs; sizes known only at launch.
    rows = input.flatten(end_dim=2).flatten(start_dim=1)
    return matmul_arrangement(rows, filter.flatten(end_dim=2), output.flatten(end_dim=2))


def _work_item_source(source):
    return source[source.index("// A program on one work-item.") :]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("a, b, k1, k2, n", ((3, 7, 5, 3, 9), (2, 1, 4, 8, 33), (5, 9, 5, 7, 35)))
def test_flattened_matmul(dtype, a, b, k1, k2, n):
    kernel = ninetoothed.make(_flattened_matmul_arrangement, matmul_application, (Tensor(4), Tensor(3), Tensor(3)))
    # Neither input nor output is contiguous: the tables hold offsets through real strides.
    input = torch.randn(k2, a, b, k1).to(dtype).permute(1, 2, 3, 0)
    filter = torch.randn(k1, k2, n).to(dtype)
    output = torch.full((b, a, n), float("nan"), dtype=dtype).transpose(0, 1)
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})  # partial blocks
    kernel(input, filter, output)
    expected = torch.einsum("abxy,xyn->abn", input.double(), filter.double())
    tolerance = 1e-5 * (k1 * k2) ** 0.5 if dtype == torch.float32 else 1e-3
    torch.testing.assert_close(output.double(), expected, rtol=tolerance, atol=tolerance)
    body = _work_item_source(kernel.source)
    k_loop = body.index("for (nt_index nt_k")
    assert re.search(rf"nt_index nt_tab\d+\[{BLOCK_SIZE_M.name}\];", body[:k_loop]), body
    assert re.search(rf"nt_index nt_tab\d+\[{BLOCK_SIZE_K.name}\];", body[k_loop:]), body


def test_implicit_gemm_tables_leave_the_k_loop():
    conv2d = _conv2d_kernel(True)
    input, filter = torch.randn(2, 3, 9, 7), torch.randn(5, 3, 3, 3)
    output = torch.full((2, 5, 9, 7), float("nan"))
    conv2d(input, filter, output, padding_h=1, padding_w=1)
    torch.testing.assert_close(
        output.double(), F.conv2d(input.double(), filter.double(), padding=1), rtol=1e-5, atol=1e-5
    )
    body = _work_item_source(conv2d.source)
    k_loop = body.index("for (nt_index nt_k")
    # The output positions' tables (rows of the GEMM) are filled once per program, before the
    # k loop; the reduction steps' (columns) inside it, once per step.
    assert re.search(rf"nt_index nt_tab\d+\[{BLOCK_SIZE_M.name}\];", body[:k_loop]), body
    assert re.search(rf"nt_index nt_tab\d+\[{BLOCK_SIZE_K.name}\];", body[k_loop:]), body
    # Sizes the arrangement divides by are not known to be nonzero: their tables are guarded.
    assert re.search(r"nt_tab\d+\[e\d+\] = \(\(.*\) != 0\) \? ", body), body


def _flattened_grid_arrangement(input, output, BLOCK=(BLOCK_SIZE_M, BLOCK_SIZE_N)):
    # The program grid is flattened: the program id is divided, the element indices are not.
    return input.tile(BLOCK).flatten(), output.tile(BLOCK).flatten()


def _shifted_by_sum(input, output):
    shifted = input + 1
    output = shifted * shifted + ntl.sum(shifted)  # noqa: F841


def test_affine_parts_stay_inline():
    kernel = ninetoothed.make(_flattened_grid_arrangement, _shifted_by_sum, (Tensor(2), Tensor(2)))
    kernel.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32})
    input = torch.randn(37, 45)
    output = torch.full_like(input, float("nan"))
    kernel(input, output)
    shifted = input.double() + 1
    blocks = torch.zeros_like(shifted)
    for i in range(0, 37, 32):
        for j in range(0, 45, 32):
            block = shifted[i : i + 32, j : j + 32]
            # Elements past the tensor read 0 (the default `other`), so 1 after the shift.
            blocks[i : i + 32, j : j + 32] = block * block + block.sum() + (32 * 32 - block.numel())
    torch.testing.assert_close(output.double(), blocks, rtol=1e-5, atol=1e-4)
    # Offsets affine in the element indices (the division is the program id's) are not
    # tabulated: a table would turn the unit-stride loads into gathers.
    assert "nt_tab" not in _work_item_source(kernel.source), kernel.source


def _copy_lines(source):
    """The lines of a CUDA source that load a gathered element's bits for a run (emitter_mma_staging.cpp)."""
    return [line for line in source.splitlines() if re.search(r"nt_bits\d+\[nt_place\d+\] = .*\(\(const ushort\*\)nt_p", line)]


def test_staged_gathers_read_tables_in_shared_memory():
    # On a GPU (CUDA C), the tensor-core operands of a pipelined k loop are copied element by element
    # into shared memory where cp.async cannot copy them (an implicit GEMM's gathered rows): each
    # work-item copies elements of many rows, so the divisions are tabulated once for the
    # work-group, in shared memory, between barriers.
    half = ninetoothed.float16
    conv2d = ninetoothed.make(
        lambda input, filter, output: conv2d_arrangement(input, filter, output, True),
        matmul_application,
        (Tensor(4, dtype=half), Tensor(4, dtype=half, shape_options={"constexpr": True}), Tensor(4, dtype=half)),
    )
    source = conv2d.cuda_source
    k_loop = source.index("for (nt_index nt_k")
    assert re.search(r"nt_index\* nt_tab\d+ = \(nt_index\*\)\(nt_shared \+", source), source
    fill = r"for \(nt_index (nt_s[ij]\d+) = NT_LANE; \1 < {}; \1 \+= NT_WORK_ITEMS\) nt_tab\d+\[\1\] = "
    # The output positions' (rows of A) before the k loop, once per program; the reduction steps'
    # (columns of A, rows of the filter) once per step, inside it, for both operands.
    assert re.search(r"NT_BARRIER\(\);\n\s*" + fill.format(BLOCK_SIZE_M.name), source[:k_loop]), source
    assert re.search(fill.format(BLOCK_SIZE_K.name) + r"[^\n]*\n(.*\n)*?\s*NT_BARRIER\(\);", source[k_loop:])
    # 16-bit elements are copied in runs of 8 columns of a row (where 8 divides the block's width
    # and its rows' pitch, known when the source is built), one 16-byte store a run. A run's row
    # entries are read once a run; its columns' entries, the same at every run of a work-item where
    # the work-group is whole rows of runs, once before the copies, into an array read at the
    # element's place in its run.
    runs = re.findall(r"const int (nt_run\d+) = \((\w+)\) % 8 == 0 && \(.*\) % 8 == 0 \? 8 : 1;", source)
    # two operands (a's width BLOCK_SIZE_K, the filter's BLOCK_SIZE_N), before the loop and in it
    assert [width for _, width in runs] == [BLOCK_SIZE_K.name, BLOCK_SIZE_N.name] * 2, source
    run = runs[2][0]  # the loop's a
    assert re.search(rf"nt_tab\d+_\d+\[nt_r\] = nt_tab\d+\[NT_LANE % \(\({BLOCK_SIZE_K.name}\) / {run}\) \* {run} \+ nt_r\];",
                     source), source
    assert re.search(rf"if \({run} == 8\) \{{\n(.*\n){{5}}\s*\*\(uint4\*\)\(", source), source
    assert re.search(r"const nt_index nt_tab\d+_\d+ = nt_tab\d+\[nt_si\d+\];\n", source), source
    assert source.count("*(uint4*)(") == 4, source  # two operands, before the loop and in it
    copies = _copy_lines(source)
    assert len(copies) == 4, source
    for line in copies:  # the column entries of the run's array
        assert re.search(r"nt_tab\d+_\d+\[nt_place\d+\]", line) or "nt_p1" in line, line
    for line in copies:
        assert "nt_tab" in line and "nt_floordiv" not in line and "nt_floormod" not in line, line
        assert not re.search(r"[/%] \(*ninetoothed_tensor_\d+_size", line), line
    if ninetoothed._core.nvrtc_available():  # and it builds, on tensor cores and off them
        defaults = conv2d._most_recent().default_config
        sizes = set(re.findall(r"ninetoothed_tensor_\d+_size_\d", source))
        filter_sizes = sizes - set(re.findall(r"nt_index (ninetoothed_tensor_\d+_size_\d)", source))  # constexpr
        assert len(filter_sizes) == 4, filter_sizes
        constexprs = {"padding_h": 1, "padding_w": 1} | {name: 3 for name in filter_sizes}
        options = " ".join(f"-D{name}={value}" for name, value in (defaults | constexprs).items())
        options += " -DNT_WORK_ITEMS=128"
        mma = " -DNT_MMA_LAYOUT -DNT_MMA_SYNC -DNT_STAGES=3"
        for extra in ("", mma + " -DNT_INDEX32"):
            assert len(ninetoothed._core.compile_cuda(source, options + extra, "sm_90a")) > 0
        # With NT_INDEX32 (a launch whose tensors lie within 2^30 elements) index arithmetic is int:
        # the divisions by sizes known only at launch, 64-bit without it, are 32-bit (in the PTX).
        wide, narrow = (ninetoothed._core.compile_cuda(source, options + mma + extra, "compute_90").decode()
                        for extra in ("", " -DNT_INDEX32"))
        assert re.search(r"\b(div|rem)\.s64\b", wide) and re.search(r"\b(div|rem)\.s32\b", narrow)
        assert not re.search(r"\b(div|rem)\.s64\b", narrow)


def test_a_padded_window_is_tested_once_on_each_side():
    # The window's row against the padded tensor (0 <= h < H + 2 pad) and the tensor itself
    # (pad <= h < H + pad): one lower and one upper bound (codegen/c/mask_bounds.h), in every nest.
    input, filter = torch.randn(1, 3, 9, 8), torch.randn(4, 3, 3, 3)
    output = torch.full((1, 4, 9, 8), float("nan"))
    kernel = _conv2d_kernel(True)
    kernel(input, filter, output, padding_h=1, padding_w=1)
    torch.testing.assert_close(output, F.conv2d(input, filter, padding=1), rtol=1e-4, atol=1e-4)
    source = _work_item_source(kernel.source)
    for axis, size in (("h", "ninetoothed_tensor_0_size_2"), ("w", "ninetoothed_tensor_0_size_3")):
        assert f"((0 >= padding_{axis}) ? 0 : padding_{axis}) <= " in source
        assert f"(padding_{axis} <= (" not in source
        assert f"< ({size} + padding_{axis})))" not in source
