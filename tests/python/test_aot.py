"""Ahead-of-time kernels: make(..., caller="opencl") and ninetoothed.build.

The kernels are written as upstream's AOT tests write them (premake
functions, functools.partial arrangements, configs of (args, kwargs,
compilation_configs)); the libraries are called from Python and from a C
program compiled against the generated headers.
"""

import ctypes
import functools
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor


def _poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype)


# --- kernels ----------------------------------------------------------------------


def add_arrangement(input, other, output, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    return input.tile((block_size,)), other.tile((block_size,)), output.tile((block_size,))


def add_application(input, other, output):
    output = input + other  # noqa: F841


def axpy_arrangement(input, other, alpha, output, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    return input.tile((block_size,)), other.tile((block_size,)), alpha, output.tile((block_size,))


def axpy_application(input, other, alpha, output):
    output = input + alpha * other  # noqa: F841


def axpy_premake(size=None, dtype=None, block_size=None):
    arrangement = functools.partial(axpy_arrangement, block_size=block_size)
    tensors = (
        Tensor(shape=(size,), dtype=dtype),
        Tensor(shape=(size,), dtype=dtype),
        Tensor(0, dtype=ninetoothed.float64),
        Tensor(shape=(size,), dtype=dtype),
    )
    return arrangement, axpy_application, tensors


def softmax_arrangement(input, output, BLOCK_SIZE=ninetoothed.Symbol("BLOCK_SIZE", constexpr=True)):
    return input.tile((1, BLOCK_SIZE)), output.tile((1, BLOCK_SIZE))


def softmax_application(input, output):
    row_minus_max = input - ntl.max(input)
    numerator = ntl.exp(row_minus_max)
    denominator = ntl.sum(numerator)
    output = numerator / denominator  # noqa: F841


def matmul_arrangement(input, other, output, BLOCK_SIZE_M=None, BLOCK_SIZE_N=None, BLOCK_SIZE_K=None):
    BLOCK_SIZE_M = BLOCK_SIZE_M or ninetoothed.block_size()
    BLOCK_SIZE_N = BLOCK_SIZE_N or ninetoothed.block_size()
    BLOCK_SIZE_K = BLOCK_SIZE_K or ninetoothed.block_size()
    output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))
    input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K))
    input_arranged = input_arranged.tile((1, -1))
    input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
    input_arranged.dtype = input_arranged.dtype.squeeze(0)
    other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N))
    other_arranged = other_arranged.tile((-1, 1))
    other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
    other_arranged.dtype = other_arranged.dtype.squeeze(1)
    return input_arranged, other_arranged, output_arranged


def matmul_application(input, other, output):
    accumulator = ntl.zeros(output.shape, dtype=ntl.float32)
    for k in range(input.shape[0]):
        accumulator += ntl.dot(input[k], other[k])
    output = accumulator  # noqa: F841


def matmul_premake(dtype=None, block_size_m=None, block_size_n=None, block_size_k=None):
    arrangement = functools.partial(
        matmul_arrangement, BLOCK_SIZE_M=block_size_m, BLOCK_SIZE_N=block_size_n, BLOCK_SIZE_K=block_size_k
    )
    tensors = tuple(Tensor(2, dtype=dtype) for _ in range(3))
    return arrangement, matmul_application, tensors


def scale_arrangement(input, scale, flip, output):
    return input.tile((64,)), scale, flip, output.tile((64,))


def scale_application(input, scale, flip, output):
    if flip:
        output = -input * scale  # noqa: F841
    else:
        output = input * scale  # noqa: F841


# --- make(..., caller="opencl") ----------------------------------------------------


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("size", (1, 1000, 45327))
def test_make_writes_upstreams_files_and_the_callable_runs(tmp_path, size, dtype):
    nt_dtype = ninetoothed.float32 if dtype == torch.float32 else ninetoothed.float16
    name = f"add_{str(dtype)[6:]}"
    kernel = ninetoothed.make(
        add_arrangement, add_application, tuple(Tensor(1, dtype=nt_dtype) for _ in range(3)),
        caller="opencl", kernel_name=name, output_dir=tmp_path,
    )
    for file in ("ninetoothed.h", f"{name}.h", f"{name}.cpp", f"{name}.so", f"lib{name}.so"):
        assert (tmp_path / file).exists(), file
    assert pathlib.Path(kernel.library).is_file()
    header = (tmp_path / f"{name}.h").read_text()
    assert (f"NineToothedResult launch_{name}(NineToothedStream stream, NineToothedTensor input, "
            "NineToothedTensor other, NineToothedTensor output);") in header
    input, other = torch.randn(size).to(dtype), torch.randn(size).to(dtype)
    output = _poisoned((size,), dtype)
    kernel(input, other, output)
    assert torch.equal(output, (input.float() + other.float()).to(dtype))


def test_scalars_and_constexpr_parameters(tmp_path):
    tensors = (Tensor(1, dtype=ninetoothed.float32), Tensor(0, dtype=ninetoothed.float32),
               Tensor(0, constexpr=True, value=1), Tensor(1, dtype=ninetoothed.float32))
    kernel = ninetoothed.make(scale_arrangement, scale_application, tensors,
                              caller="opencl", kernel_name="scale", output_dir=tmp_path)
    input = torch.randn(300)
    output = _poisoned((300,), torch.float32)
    kernel(input, 0.125, torch.tensor(False), output)  # the constexpr is compiled in (1), as upstream
    assert torch.equal(output, -input * 0.125)
    kernel(input, torch.tensor(3.0), None, output)
    assert torch.equal(output, -input * 3.0)


def test_softmax_with_a_constexpr_block_fixed_by_partial(tmp_path):
    arrangement = functools.partial(softmax_arrangement, BLOCK_SIZE=128)
    kernel = ninetoothed.make(arrangement, softmax_application,
                              (Tensor(2, dtype=ninetoothed.float32, other=float("-inf")),
                               Tensor(2, dtype=ninetoothed.float32)),
                              caller="opencl", kernel_name="softmax", output_dir=tmp_path)
    input = torch.randn(37, 100)
    output = _poisoned((37, 100), torch.float32)
    kernel(input, output)
    expected = torch.softmax(input.double(), dim=-1)
    assert torch.allclose(output.double(), expected, rtol=1e-5, atol=1e-7)


def test_unset_constexpr_symbols_and_dtypes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="BLOCK_SIZE"):
        ninetoothed.make(softmax_arrangement, softmax_application,
                         (Tensor(2, dtype=ninetoothed.float32), Tensor(2, dtype=ninetoothed.float32)),
                         caller="opencl", kernel_name="softmax", output_dir=tmp_path)
    with pytest.raises(ValueError, match="no dtype"):
        ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)),
                         caller="opencl", kernel_name="add", output_dir=tmp_path)
    with pytest.raises(ValueError, match="C identifier"):
        ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                         caller="opencl", kernel_name="add-1", output_dir=tmp_path)
    with pytest.raises(NotImplementedError, match="caller='opencl'.*caller='cuda'"):
        ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                         caller="hip", kernel_name="add", output_dir=tmp_path)
    assert not (tmp_path / "add.so").exists()


def test_bad_calls_from_python_raise(tmp_path):
    kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                              caller="opencl", kernel_name="add", output_dir=tmp_path)
    x = torch.randn(10)
    with pytest.raises(TypeError, match="float32"):
        kernel(x, x.double(), torch.empty(10))
    with pytest.raises(ValueError, match="1 dimensions"):
        kernel(x, x, torch.empty(2, 5))
    with pytest.raises(TypeError, match="3 tensors"):
        kernel(x, x)


def test_an_unchanged_library_is_reused_and_a_changed_one_rebuilt(tmp_path):
    # (Each block_size() is a new symbol, so a fixed block keeps the sources the same within one process.)
    arrangement = functools.partial(add_arrangement, block_size=64)
    tensors = tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3))
    ninetoothed.make(arrangement, add_application, tensors, caller="opencl", kernel_name="k", output_dir=tmp_path)
    first = (tmp_path / "k.so").stat().st_mtime_ns
    ninetoothed.make(arrangement, add_application, tensors, caller="opencl", kernel_name="k", output_dir=tmp_path)
    assert (tmp_path / "k.so").stat().st_mtime_ns == first
    kernel = ninetoothed.make(arrangement, softmax_like_application, tensors, caller="opencl", kernel_name="k",
                              output_dir=tmp_path)
    assert (tmp_path / "k.so").stat().st_mtime_ns != first
    x, y = torch.randn(77), torch.randn(77)
    output = _poisoned((77,), torch.float32)
    kernel(x, y, output)
    assert torch.equal(output, x - y)


def softmax_like_application(input, other, output):
    output = input - other  # noqa: F841


# --- build ------------------------------------------------------------------------


def test_build_dispatches_on_the_configuration_arguments(tmp_path):
    configs = (
        ((), {"dtype": ninetoothed.float32, "block_size_m": 32, "block_size_n": 32, "block_size_k": 16}, {}),
        ((), {"dtype": ninetoothed.float16, "block_size_m": 64, "block_size_n": 32, "block_size_k": 32}, {}),
    )
    kernel = ninetoothed.build(matmul_premake, configs, kernel_name="mm", output_dir=tmp_path)
    for dtype, nt_dtype, blocks, atol in ((torch.float32, ninetoothed.float32, (32, 32, 16), 1e-4),
                                           (torch.float16, ninetoothed.float16, (64, 32, 32), 2e-2)):
        lhs, rhs = torch.randn(33, 65).to(dtype), torch.randn(65, 47).to(dtype)
        output = _poisoned((33, 47), dtype)
        kernel(lhs, rhs, output, nt_dtype, *blocks)
        expected = lhs.double() @ rhs.double()
        assert torch.allclose(output.double(), expected, atol=atol, rtol=1e-3)
    with pytest.raises(ValueError, match="no built variant"):
        kernel(lhs, rhs, output, ninetoothed.float64, 32, 32, 16)
    header = (tmp_path / "mm.h").read_text()
    assert ("launch_mm(NineToothedStream stream, NineToothedTensor input, NineToothedTensor other, "
            "NineToothedTensor output, int dtype_, int block_size_m_, int block_size_n_, int block_size_k_)") in header


def test_build_tunes_meta_parameters(tmp_path):
    configs = (
        ((), {"size": 20011, "dtype": ninetoothed.float16, "block_size": 256}, {}),
        ((), {"size": 20011, "dtype": ninetoothed.float16, "block_size": 1024}, {}),
        ((), {"size": 20011, "dtype": ninetoothed.float32, "block_size": 512}, {}),
        ((), {"size": 20011, "dtype": ninetoothed.float32, "block_size": 1024}, {}),
        ((), {"size": 1127, "dtype": ninetoothed.float16, "block_size": 64}, {"num_warps": 4}),
        ((), {"size": 1127, "dtype": ninetoothed.float16, "block_size": 64}, {"num_warps": 8}),
        ((), {"size": 1127, "dtype": ninetoothed.float32, "block_size": 512}, {"num_warps": 4}),
    )
    kernel = ninetoothed.build(axpy_premake, configs, meta_parameters=("block_size",), kernel_name="axpy",
                               output_dir=tmp_path)
    rows = (tmp_path / "axpy.csv").read_text().splitlines()
    assert rows[0] == "" and len(rows) == 2 + 2 * 4
    for size in (20011, 1127):
        for dtype, nt_dtype, tol in ((torch.float32, ninetoothed.float32, 1e-6), (torch.float16, ninetoothed.float16, 1e-3)):
            input, other = torch.randn(size).to(dtype), torch.randn(size).to(dtype)
            alpha = torch.randn((), dtype=torch.float64)
            output = _poisoned((size,), dtype)
            kernel(input, other, alpha, output, size, nt_dtype)
            expected = input.double() + alpha.item() * other.double()
            assert torch.allclose(output.double(), expected, rtol=tol, atol=tol)
    header = (tmp_path / "axpy.h").read_text()
    assert "NineToothedTensor output, int size_, int dtype_);" in header
    with pytest.raises(ValueError, match="no built variant"):
        kernel(input, other, alpha, output, 999, ninetoothed.float32)


def test_lazy_build_waits_for_the_first_call(tmp_path):
    configs = (((), {"dtype": ninetoothed.float32, "block_size_m": 16, "block_size_n": 16, "block_size_k": 16}, {}),)
    kernel = ninetoothed.build(matmul_premake, configs, kernel_name="lazy_mm", output_dir=tmp_path, lazy=True)
    assert not (tmp_path / "lazy_mm.so").exists()
    lhs, rhs = torch.randn(20, 9), torch.randn(9, 5)
    output = _poisoned((20, 5), torch.float32)
    kernel(lhs, rhs, output, ninetoothed.float32, 16, 16, 16)
    assert (tmp_path / "lazy_mm.so").exists()
    assert torch.allclose(output.double(), lhs.double() @ rhs.double(), atol=1e-5)


# --- a C program --------------------------------------------------------------------

_C_PROGRAM = r"""
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "add.h"
#include "mm.h"

static int check(const char *what, int ok) {
    printf("%s: %s\n", what, ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

int main(void) {
    int failures = 0;
    enum { N = 1001, M = 33, K = 65, P = 17 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *z = malloc(N * sizeof(float));
    for (int i = 0; i < N; ++i) { x[i] = (float)i * 0.5f; y[i] = 3.0f - i; z[i] = NAN; }
    uint64_t shape[1] = {N};
    int64_t strides[1] = {1};
    NineToothedTensor tx = {x, shape, strides}, ty = {y, shape, strides}, tz = {z, shape, strides};
    NineToothedResult result = launch_add(NULL, tx, ty, tz);
    int ok = result == NINETOOTHED_SUCCESS;
    for (int i = 0; i < N; ++i) ok = ok && z[i] == x[i] + y[i];
    failures += check("add", ok);

    /* The stream: a command queue of the caller's own context. */
    cl_platform_id platforms[8];
    cl_uint num_platforms = 0;
    cl_device_id device = NULL;
    clGetPlatformIDs(8, platforms, &num_platforms);
    for (cl_uint p = 0; p < num_platforms && !device; ++p)
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) device = NULL;
    cl_int status;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    for (int i = 0; i < N; ++i) z[i] = NAN;
    result = launch_add((NineToothedStream)queue, tx, ty, tz);
    ok = result == NINETOOTHED_SUCCESS;
    for (int i = 0; i < N; ++i) ok = ok && z[i] == x[i] + y[i];
    failures += check("add on the caller's queue", ok);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);

    float *a = malloc(M * K * sizeof(float)), *b = malloc(K * P * sizeof(float)), *c = malloc(M * P * sizeof(float));
    for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) - 6.0f;
    for (int i = 0; i < K * P; ++i) b[i] = (float)((i * 5) % 11) - 5.0f;
    for (int i = 0; i < M * P; ++i) c[i] = NAN;
    uint64_t sa[2] = {M, K}, sb[2] = {K, P}, sc[2] = {M, P};
    int64_t ta[2] = {K, 1}, tb[2] = {P, 1}, tc[2] = {P, 1};
    NineToothedTensor A = {a, sa, ta}, B = {b, sb, tb}, C = {c, sc, tc};
    result = launch_mm(NULL, A, B, C, NINETOOTHED_FLOAT32, 32, 32, 16);
    ok = result == NINETOOTHED_SUCCESS;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < P; ++j) {
            double sum = 0;
            for (int k = 0; k < K; ++k) sum += (double)a[i * K + k] * b[k * P + j];
            ok = ok && fabs(c[i * P + j] - sum) < 1e-3;
        }
    failures += check("mm", ok);

    /* Bad calls return codes, never crash. */
    failures += check("no variant", launch_mm(NULL, A, B, C, NINETOOTHED_FLOAT64, 32, 32, 16) ==
                                        NINETOOTHED_ERROR_NO_VARIANT);
    NineToothedTensor null_data = {NULL, shape, strides};
    failures += check("null data", launch_add(NULL, null_data, ty, tz) == NINETOOTHED_ERROR_INVALID_ARGUMENT);
    NineToothedTensor null_shape = {x, NULL, strides};
    failures += check("null shape", launch_add(NULL, tx, null_shape, tz) == NINETOOTHED_ERROR_INVALID_ARGUMENT);
    /* An output with more blocks of rows than the input: the outermost shapes differ. */
    float *big = malloc((M + 40) * P * sizeof(float));
    uint64_t other_shape[2] = {M + 40, P};
    NineToothedTensor wrong = {big, other_shape, tc};
    result = launch_mm(NULL, A, B, wrong, NINETOOTHED_FLOAT32, 32, 32, 16);
    failures += check("mismatched sizes", result == NINETOOTHED_ERROR_INVALID_VALUE);
    printf("%s\n", ninetoothed_error_string(result));
    failures += check("error strings", ninetoothed_error_string(NINETOOTHED_ERROR_NO_VARIANT)[0] != 0 &&
                                           ninetoothed_error_string(12345)[0] != 0);
    printf("%d failures\n", failures);
    return failures;
}
"""


def test_a_c_program_calls_the_libraries(tmp_path):
    ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                     caller="opencl", kernel_name="add", output_dir=tmp_path)
    configs = (((), {"dtype": ninetoothed.float32, "block_size_m": 32, "block_size_n": 32, "block_size_k": 16}, {}),)
    ninetoothed.build(matmul_premake, configs, kernel_name="mm", output_dir=tmp_path)
    (tmp_path / "main.c").write_text(_C_PROGRAM)
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run(
        [compiler, "-std=c99", "-Wall", "-Werror", "main.c", "-o", "main", "-I.", "-L.", "-ladd", "-lmm",
         "-Wl,-rpath,$ORIGIN", "-lOpenCL", "-lm"],
        cwd=tmp_path, check=True,
    )
    # A process with no Python in it.
    result = subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 failures" in result.stdout


# --- launch plans, threads, fork -------------------------------------------------------


def test_a_launch_plan_reads_back_as_the_same_kernel(tmp_path):
    from ninetoothed import _core

    arrangement = functools.partial(softmax_arrangement, BLOCK_SIZE=64)
    kernels = (
        (ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1) for _ in range(3))),
         lambda: (torch.randn(777), torch.randn(777), torch.full((777,), float("nan")))),
        (ninetoothed.make(matmul_arrangement, matmul_application, tuple(Tensor(2) for _ in range(3))),
         lambda: (torch.randn(33, 65), torch.randn(65, 17), torch.full((33, 17), float("nan")))),
        (ninetoothed.make(arrangement, softmax_application, (Tensor(2, other=float("-inf")), Tensor(2))),
         lambda: (torch.randn(9, 50), torch.full((9, 50), float("nan")))),
    )
    for kernel, arguments in kernels:
        args = arguments()
        kernel(*args)
        compiled = kernel._specialize(kernel._default_signature())
        plan = compiled.launch_plan()
        again = _core.CompiledKernel(plan)
        assert again.launch_plan() == plan
        assert again.source == compiled.source and again.meta_symbols == compiled.meta_symbols
        output = args[-1]
        expected = output.clone()
        output.fill_(float("nan"))
        again.launch([(t.data_ptr(), tuple(t.shape), t.stride()) for t in args], {}, compiled.default_config)
        kernel.pin(compiled.default_config)
        args2 = tuple(t.clone() for t in args)
        args2[-1].fill_(float("nan"))
        kernel(*args2)
        kernel.pin(None)
        assert torch.equal(output, args2[-1])
        assert torch.allclose(output, expected, equal_nan=False, atol=1e-5)


def test_a_version_1_launch_plan_still_launches():
    # Libraries built before parameters said whether the kernel reads or overwrites them embed
    # version-1 plans: every tensor is then taken as read (a discrete device copies it in).
    from ninetoothed import _core

    kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1) for _ in range(3)))
    compiled = kernel._specialize(kernel._default_signature())
    lines = compiled.launch_plan().split(b"\n")
    assert lines[0] == b"ninetoothed-launch-plan 2"
    old = [b"ninetoothed-launch-plan 1"]
    for line in lines[1:]:
        if line.startswith(b"param\t"):
            fields = line.split(b"\t")
            assert len(fields) == 9
            line = b"\t".join(fields[:7])
        old.append(line)
    again = _core.CompiledKernel(b"\n".join(old))
    x, y, z = torch.randn(1001), torch.randn(1001), torch.full((1001,), float("nan"))
    again.launch([(t.data_ptr(), tuple(t.shape), t.stride()) for t in (x, y, z)], {}, compiled.default_config)
    assert torch.equal(z, x + y)
    # The output is taken as read (version 1 says nothing), and not overwritten.
    assert b"param\toutput\tfloat32\t0\t0\t1\t1\t1\t0" in again.launch_plan()
    assert b"param\toutput\tfloat32\t0\t0\t1\t1\t0\t1" in compiled.launch_plan()


def test_num_warps_goes_into_the_launch_plan():
    from ninetoothed import _core, aot

    tensors = tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3))
    plan, _ = aot.trace_kernel(add_arrangement, add_application, tensors, "add", num_warps=8)
    assert b"\nnum_warps\t8\n" in plan
    assert _core.CompiledKernel(plan).launch_plan() == plan
    plan, _ = aot.trace_kernel(add_arrangement, add_application, tensors, "add")
    assert b"num_warps" not in plan
    with pytest.raises(ValueError, match="num_warps must be at least 1"):
        _core.CompiledKernel(plan.replace(b"\nfixed", b"\nnum_warps\t0\nfixed", 1) if b"\nfixed" in plan
                             else plan.replace(b"\narg\t", b"\nnum_warps\t0\narg\t", 1))


@pytest.mark.parametrize("damage", ("magic", "truncated", "expression", "parameter", "record"))
def test_a_damaged_launch_plan_is_a_value_error(damage):
    from ninetoothed import _core

    kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1) for _ in range(3)))
    plan = kernel._specialize(kernel._default_signature()).launch_plan()
    damaged = {
        "magic": plan.replace(b"launch-plan 2", b"launch-plan 9"),
        "truncated": plan[: len(plan) - 40],
        "expression": plan.replace(b"private_bytes\t0", b"private_bytes\t0 +* 1"),
        "parameter": plan.replace(b"arg\t0\t0", b"arg\t0\t7"),
        "record": plan.replace(b"grid\t", b"gird\t"),
    }[damage]
    assert damaged != plan
    with pytest.raises(ValueError, match="launch plan"):
        _core.CompiledKernel(damaged)


def test_threads_launch_one_library_at_once(tmp_path):
    import threading

    kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                              caller="opencl", kernel_name="add", output_dir=tmp_path)
    failures = []

    def work(seed):
        generator = torch.Generator().manual_seed(seed)
        for i in range(40):
            size = 1 + (seed * 131 + i * 17) % 3000
            x, y = torch.randn(size, generator=generator), torch.randn(size, generator=generator)
            z = torch.full((size,), float("nan"))
            kernel(x, y, z)
            if not torch.equal(z, x + y):
                failures.append((seed, i))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_forked_child_gets_an_error_code_not_a_hang(tmp_path):
    import time

    kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(3)),
                              caller="opencl", kernel_name="add", output_dir=tmp_path)
    x = torch.randn(10)
    kernel(x, x, torch.empty(10))
    pid = os.fork()
    if pid == 0:  # the child: the library's runtime refuses OpenCL at once
        try:
            kernel(x, x, torch.empty(10))
            os._exit(1)
        except ninetoothed.aot.AotError as error:
            os._exit(0 if error.code == 6 and "fork" in str(error) else 2)
        except BaseException:
            os._exit(3)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            pytest.fail("the forked child hung")
        time.sleep(0.05)
    assert os.WEXITSTATUS(status) == 0


def odd_names_arrangement(stream, default, arguments, ninetoothed_plan_):
    return tuple(t.tile((32,)) for t in (stream, default, arguments, ninetoothed_plan_))


def odd_names_application(stream, default, arguments, ninetoothed_plan_):
    ninetoothed_plan_ = stream + default * arguments  # noqa: F841


def test_parameter_names_that_are_c_keywords_or_generated_names(tmp_path):
    kernel = ninetoothed.make(odd_names_arrangement, odd_names_application,
                              tuple(Tensor(1, dtype=ninetoothed.float32) for _ in range(4)),
                              caller="opencl", kernel_name="odd", output_dir=tmp_path)
    header = (tmp_path / "odd.h").read_text()
    assert ("NineToothedTensor stream_, NineToothedTensor default_, NineToothedTensor arguments, "
            "NineToothedTensor ninetoothed_plan__);") in header
    a, b, c = torch.randn(70), torch.randn(70), torch.randn(70)
    output = _poisoned((70,), torch.float32)
    kernel(a, b, c, output)
    assert torch.allclose(output.double(), a.double() + b.double() * c.double(), rtol=1e-6, atol=1e-6)


def test_concurrent_builds_of_one_name_leave_a_consistent_library(tmp_path):
    import threading

    dtypes = [ninetoothed.float32, ninetoothed.float64] * 3
    errors = []

    def build(dtype):
        try:
            kernel = ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=dtype) for _ in range(3)),
                                      caller="opencl", kernel_name="shared", output_dir=tmp_path)
            torch_dtype = torch.float32 if dtype == ninetoothed.float32 else torch.float64
            x = torch.randn(333, dtype=torch_dtype)
            z = torch.full((333,), float("nan"), dtype=torch_dtype)
            kernel(x, x, z)
            if not torch.equal(z, x + x):
                errors.append(dtype)
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=build, args=(dtype,)) for dtype in dtypes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    # What is left describes itself: its manifest and its library are the last build's.
    kernel = ninetoothed.aot.AotKernel(tmp_path, "shared")
    dtype = kernel._variants[0]["params"][0]["dtype"]
    x = torch.randn(50, dtype=getattr(torch, dtype))
    z = torch.full((50,), float("nan"), dtype=x.dtype)
    kernel(x, x, z)
    assert torch.equal(z, x + x)


def test_configuration_arguments_must_fit_a_c_int(tmp_path):
    configs = (((), {"dtype": ninetoothed.float32, "block_size_m": 16, "block_size_n": 16, "block_size_k": 16}, {}),)
    kernel = ninetoothed.build(matmul_premake, configs, kernel_name="mm_int", output_dir=tmp_path)
    lhs, rhs = torch.randn(4, 4), torch.randn(4, 4)
    with pytest.raises(ValueError, match="C int"):
        kernel(lhs, rhs, torch.empty(4, 4), ninetoothed.float32, 16 + 2**32, 16, 16)


def test_configurations_with_the_same_values_under_other_names_are_distinct_variants(tmp_path):
    configs = (
        ((), {"dtype": ninetoothed.float32, "block_size_m": 16, "block_size_n": 16, "block_size_k": 16}, {"num_warps": 2}),
        ((), {"dtype": ninetoothed.float32, "block_size_m": 16, "block_size_n": 16, "block_size_k": 16}, {"num_stages": 2}),
    )
    kernel = ninetoothed.build(matmul_premake, configs, kernel_name="mm_names", output_dir=tmp_path)
    assert len({v["name"] for v in kernel._variants}) == 2
    lhs, rhs = torch.randn(5, 7), torch.randn(7, 3)
    output = _poisoned((5, 3), torch.float32)
    kernel(lhs, rhs, output, ninetoothed.float32, 16, 16, 16, 2, 0)  # num_warps=2, num_stages unset (0)
    assert torch.allclose(output.double(), lhs.double() @ rhs.double(), atol=1e-5)


def test_a_name_the_launch_plan_cannot_carry_is_refused_when_made(tmp_path):
    tensors = tuple(Tensor(1, dtype=ninetoothed.float32, name=name) for name in ("é", "other", "out"))
    with pytest.raises(ValueError, match="cannot be built ahead of time"):
        ninetoothed.make(add_arrangement, add_application, tensors, caller="opencl", kernel_name="accented",
                         output_dir=tmp_path)
    assert not (tmp_path / "accented.so").exists()
