"""Ahead-of-time CUDA libraries: make(..., caller="cuda") and ninetoothed.build(..., caller="cuda").

Where NVRTC can be loaded (no GPU needed): the library is written and linked, its binaries cover
every configuration tuning may time, for each architecture asked, and the launch plan carries the
CUDA C. Without a CUDA driver a launch returns NINETOOTHED_ERROR_DEVICE naming libcuda. On a
machine with a GPU: the libraries run on CUDA tensors from Python (torch's streams, views, float16)
and from a C program on its own stream, and that program never loads NVRTC.
"""

import ctypes
import functools
import json
import os
import pathlib
import shutil
import subprocess

import pytest
import torch

import ninetoothed
from ninetoothed import Tensor, _core

needs_nvrtc = pytest.mark.skipif(not _core.nvrtc_available(), reason="NVRTC (libnvrtc.so) cannot be loaded here")
_GPU = torch.cuda.is_available() and _core.cuda_available()
needs_gpu = pytest.mark.skipif(not _GPU, reason="no CUDA device")


def add_arrangement(input, other, output, block_size=None):
    if block_size is None:
        block_size = ninetoothed.block_size()
    return input.tile((block_size,)), other.tile((block_size,)), output.tile((block_size,))


def add_application(input, other, output):
    output = input + other  # noqa: F841


def scale_premake(dtype=None, block_size=None):
    arrangement = functools.partial(scale_arrangement, block_size=block_size)
    tensors = (Tensor(2, dtype=dtype), Tensor(0, dtype=ninetoothed.float32), Tensor(2, dtype=dtype))
    return arrangement, scale_application, tensors


def scale_arrangement(input, alpha, output, block_size=None):
    return input.tile((1, block_size)), alpha, output.tile((1, block_size))


def scale_application(input, alpha, output):
    output = input * alpha  # noqa: F841


def _make_add(tmp_path, name="add_f32", dtype=ninetoothed.float32):
    return ninetoothed.make(add_arrangement, add_application, tuple(Tensor(1, dtype=dtype) for _ in range(3)),
                            caller="cuda", kernel_name=name, output_dir=tmp_path)


@pytest.fixture
def architectures(monkeypatch):
    """Binaries for Hopper and PTX for 8.0 on, whatever GPUs this machine has (or not)."""
    monkeypatch.setenv("NINETOOTHED_CUDA_ARCHITECTURES", "sm_90a,compute_80")


# --- on any machine with NVRTC ----------------------------------------------------------


@needs_nvrtc
def test_make_writes_a_cuda_library_with_every_tuning_candidate_built(tmp_path, architectures):
    kernel = _make_add(tmp_path)
    manifest = json.loads((tmp_path / "add_f32.json").read_text())
    assert manifest["caller"] == "cuda"
    source = (tmp_path / "add_f32.cpp").read_text()
    assert "ninetoothed_aot_launch_cuda(" in source
    # The plan the library embeds, read back: CUDA C, and one binary per variant and architecture.
    plan = _embedded_plan(source)
    compiled = _core.CompiledKernel(plan)
    assert '__global__' in compiled.cuda_source
    expected = {(arch, options) for arch in ("sm_90a", "compute_80") for options in compiled.cuda_build_variants(arch)}
    embedded = _embedded_images(source)
    assert embedded == expected
    # The candidates: block sizes, warps (64, 128, 256 threads) and the contiguous and general strides.
    options = compiled.cuda_build_variants("sm_90a")
    assert {o for o in options if "-DNT_WORK_ITEMS=64" in o} and {o for o in options if "-DNT_WORK_ITEMS=256" in o}
    assert any("NT_UNIT_" in o for o in options) and any("NT_UNIT_" not in o for o in options)
    assert len({o.split("-Dblock_size")[0] for o in options}) >= 1
    assert len(options) == len(set(options))
    # Host tensors are refused with the library's caller named.
    x = torch.randn(10)
    with pytest.raises(ValueError, match="caller='cuda'.*CUDA tensors"):
        kernel(x, x, x)


def _embedded_plan(source):
    """The plan's bytes from a generated NAME.cpp (its C string literal)."""
    start = source.index("ninetoothed_plan_[] =") + len("ninetoothed_plan_[] =")
    end = source.index(";\n", start)
    literal = "".join(part.strip()[1:-1] for part in source[start:end].strip().split("\n"))
    return literal.encode("latin-1").decode("unicode_escape").encode("latin-1")


def _embedded_images(source):
    """(architecture, options) of each NtAotCudaImage entry of a generated NAME.cpp."""
    table = source[source.index("ninetoothed_images_[] = {"):]
    entries = set()
    for line in table.splitlines()[1:]:
        if not line.startswith("    {"):
            break
        architecture, options = line.strip()[1:].split(", ")[:2]
        entries.add((architecture.strip('"'), options.strip('"')))
    return entries


@needs_nvrtc
def test_a_cuda_launch_plan_reads_back_and_an_opencl_plan_has_no_cuda_source(tmp_path):
    from ninetoothed import aot

    plan, _ = aot.trace_kernel(add_arrangement, add_application, tuple(Tensor(1, dtype=ninetoothed.float16)
                                                                        for _ in range(3)), "add", caller="cuda")
    again = _core.CompiledKernel(plan)
    assert again.launch_plan(cuda=True) == plan
    assert "vload_half" in again.cuda_source or "half" in again.cuda_source
    opencl_plan, _ = aot.trace_kernel(add_arrangement, add_application,
                                      tuple(Tensor(1, dtype=ninetoothed.float16) for _ in range(3)), "add")
    with pytest.raises(ValueError, match="without CUDA C"):
        _core.CompiledKernel(opencl_plan).cuda_source
    with pytest.raises(ValueError, match="not a CUDA architecture"):
        again.cuda_build_variants("gfx90a")
    with pytest.raises(ValueError, match="not a CUDA architecture"):
        again.add_cuda_image("sm_x", "", b"")


@needs_nvrtc
def test_build_with_caller_cuda_dispatches_variants(tmp_path, architectures):
    configs = tuple(((), {"dtype": dtype, "block_size": 128}, {}) for dtype in (ninetoothed.float32,
                                                                                ninetoothed.float16))
    kernel = ninetoothed.build(scale_premake, configs, caller="cuda", kernel_name="scale", output_dir=tmp_path)
    assert kernel.caller == "cuda"
    for variant in json.loads((tmp_path / "scale.json").read_text())["variants"]:
        assert "ninetoothed_aot_launch_cuda(" in (tmp_path / f"{variant['name']}.cpp").read_text()
    header = (tmp_path / "scale.h").read_text()
    assert "launch_scale(NineToothedStream stream" in header


@needs_nvrtc
@pytest.mark.skipif(_GPU, reason="checks the machine without a CUDA driver")
def test_without_a_driver_a_launch_returns_the_device_error(tmp_path, architectures):
    kernel = _make_add(tmp_path)
    library = ctypes.CDLL(kernel.library)
    launch = library.launch_add_f32
    shape = (ctypes.c_uint64 * 1)(4)
    strides = (ctypes.c_int64 * 1)(1)

    class CTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p)]

    fake = CTensor(0x1000, ctypes.addressof(shape), ctypes.addressof(strides))
    assert launch(None, fake, fake, fake) == 4  # NINETOOTHED_ERROR_DEVICE
    library.ninetoothed_last_error_message.restype = ctypes.c_char_p
    assert b"libcuda" in library.ninetoothed_last_error_message()


# --- on a GPU ---------------------------------------------------------------------------


@needs_gpu
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("size", (1, 1000, 1000003))
def test_a_cuda_library_runs_on_cuda_tensors_and_streams(tmp_path, dtype, size):
    nt_dtype = ninetoothed.float32 if dtype == torch.float32 else ninetoothed.float16
    kernel = _make_add(tmp_path, f"add_{str(dtype)[6:]}", nt_dtype)
    x, y = torch.randn(size, device="cuda").to(dtype), torch.randn(size, device="cuda").to(dtype)
    z = torch.full((size,), float("nan"), device="cuda", dtype=dtype)
    kernel(x, y, z)
    assert torch.equal(z, (x.float() + y.float()).to(dtype))
    # On a side stream, ordered after the work queued before it there.
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        w = x * 2
        out = torch.full_like(z, float("nan"))
        kernel(w, y, out)
        result = out.clone()
    stream.synchronize()
    assert torch.equal(result, (x.float() * 2 + y.float()).to(dtype))
    # Offset, strided views: the general-stride binary.
    base = torch.randn(2 * size + 3, device="cuda").to(dtype)
    out = torch.full((2 * size + 3,), float("nan"), device="cuda", dtype=dtype)
    kernel(base[3::2], base[2:-1:2], out[1:-2:2])
    torch.cuda.synchronize()
    assert torch.equal(out[1:-2:2], (base[3::2].float() + base[2:-1:2].float()).to(dtype))
    assert torch.isnan(out[0::2].float()).all()


@needs_gpu
def test_build_with_caller_cuda_tunes_on_the_gpu(tmp_path):
    configs = tuple(((), {"dtype": ninetoothed.float32, "block_size": b}, {}) for b in (64, 256))
    kernel = ninetoothed.build(scale_premake, configs, meta_parameters=("block_size",), caller="cuda",
                               kernel_name="scale_tuned", output_dir=tmp_path)
    x = torch.randn(37, 1001, device="cuda")
    out = torch.full_like(x, float("nan"))
    kernel(x, 0.5, out, ninetoothed.float32)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 0.5)


_C_PROGRAM = r"""
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "add_c.h"

#define CHECK(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { printf("%s failed: %d\n", #call, r_); return 1; } } while (0)

int main(void) {
    enum { N = 100003 };
    CUdevice device;
    CUcontext context;
    CUstream stream;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *z = malloc(N * sizeof(float));
    for (int i = 0; i < N; ++i) { x[i] = (float)i * 0.25f; y[i] = 7.0f - i; z[i] = NAN; }
    CUdeviceptr dx, dy, dz;
    CHECK(cuMemAlloc(&dx, N * sizeof(float)));
    CHECK(cuMemAlloc(&dy, N * sizeof(float)));
    CHECK(cuMemAlloc(&dz, N * sizeof(float)));
    CHECK(cuMemcpyHtoD(dx, x, N * sizeof(float)));
    CHECK(cuMemcpyHtoD(dy, y, N * sizeof(float)));
    CHECK(cuMemcpyHtoD(dz, z, N * sizeof(float)));
    uint64_t shape[1] = {N};
    int64_t strides[1] = {1};
    NineToothedTensor tx = {(void *)dx, shape, strides}, ty = {(void *)dy, shape, strides}, tz = {(void *)dz, shape, strides};
    NineToothedResult result = launch_add_c((NineToothedStream)stream, tx, ty, tz);
    if (result != NINETOOTHED_SUCCESS) { printf("launch: %s\n", ninetoothed_error_string(result)); return 1; }
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemcpyDtoH(z, dz, N * sizeof(float)));
    int failures = 0;
    for (int i = 0; i < N; ++i) failures += z[i] != x[i] + y[i];
    /* Did anything load NVRTC into this process? */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int nvrtc = 0;
    while (maps && fgets(line, sizeof line, maps)) nvrtc += strstr(line, "nvrtc") != NULL;
    if (maps) fclose(maps);
    printf("%d wrong elements, nvrtc mapped %d times\n", failures, nvrtc);
    return failures || nvrtc;
}
"""


@needs_gpu
def test_a_c_program_launches_a_cuda_library_on_its_stream_without_nvrtc(tmp_path):
    _make_add(tmp_path, "add_c")
    (tmp_path / "main.c").write_text(_C_PROGRAM)
    cuda_home = pathlib.Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    driver_dirs = [d for d in ("/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", str(cuda_home / "lib64/stubs"))
                   if (pathlib.Path(d) / "libcuda.so").exists() or (pathlib.Path(d) / "libcuda.so.1").exists()]
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([compiler, "-std=c99", "-Wall", "main.c", "-o", "main", "-I.", f"-I{cuda_home / 'include'}",
                    "-L.", *(f"-L{d}" for d in driver_dirs), "-ladd_c", "-Wl,-rpath,$ORIGIN", "-lcuda", "-lm"],
                   cwd=tmp_path, check=True)
    # No Python, an empty cache (so nothing compiled earlier is read) and no toolkit on the path.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "CUDA_HOME"}
    env["NINETOOTHED_CACHE_DIR"] = str(tmp_path / "empty-cache")
    result = subprocess.run(["./main"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 wrong elements, nvrtc mapped 0 times" in result.stdout


@needs_gpu
@pytest.mark.parametrize("architectures", ("compute_80", "sm_80,compute_80"))
def test_a_library_of_ptx_runs_on_a_later_gpu(tmp_path, monkeypatch, architectures):
    # No cubin of this GPU's architecture (an sm_80 cubin does not run on 9.0): the driver compiles
    # the PTX, with the configurations' limits those binaries were built for.
    monkeypatch.setenv("NINETOOTHED_CUDA_ARCHITECTURES", architectures)
    kernel = _make_add(tmp_path, "add_ptx")
    x, y = torch.randn(100003, device="cuda"), torch.randn(100003, device="cuda")
    z = torch.full_like(x, float("nan"))
    kernel(x, y, z)
    torch.cuda.synchronize()
    assert torch.equal(z, x + y)
