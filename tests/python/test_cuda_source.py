"""The CUDA target: generated CUDA C (on any machine), NVRTC builds of it (where NVRTC can be
loaded: no GPU needed), the clear error without a CUDA driver, and, on a machine with a GPU, launches
on CUDA tensors: devices chosen by the tensors, mixed devices refused, views, streams, CuPy arrays.

Kernel results on CUDA tensors are checked by the whole kernel suite run with
NINETOOTHED_TEST_DEVICE=cuda (scripts/gpu/run.sh); this file tests what that switch cannot.
"""

import math
import os
import re
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor, _core

BLOCK_SIZE = Symbol("BLOCK_SIZE", constexpr=True)


def add_arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def add_application(x, y, z):
    z = x + y  # noqa: F841


def softmax_arrangement(input, output):
    return input.tile((1, BLOCK_SIZE)), output.tile((1, BLOCK_SIZE))


def softmax_application(input, output):
    row_minus_max = input - ntl.max(input)
    numerator = ntl.exp(row_minus_max)
    output = numerator / ntl.sum(numerator)  # noqa: F841


BM, BN, BK = (Symbol(name, constexpr=True) for name in ("BM", "BN", "BK"))


def matmul_arrangement(a, b, c):
    c_tiled = c.tile((BM, BN))
    a_tiled = a.tile((BM, BK)).tile((1, -1)).expand((-1, c_tiled.shape[1]))
    a_tiled.dtype = a_tiled.dtype.squeeze(0)
    b_tiled = b.tile((BK, BN)).tile((-1, 1)).expand((c_tiled.shape[0], -1))
    b_tiled.dtype = b_tiled.dtype.squeeze(1)
    return a_tiled, b_tiled, c_tiled


def matmul_application(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k])
    c = accumulator  # noqa: F841


def matmul_nt_arrangement(a, b, c):
    # b is (N, K), multiplied transposed: attention's dot(q, trans(k)).
    c_tiled = c.tile((BM, BN))
    a_tiled = a.tile((BM, BK)).tile((1, -1)).expand((-1, c_tiled.shape[1]))
    a_tiled.dtype = a_tiled.dtype.squeeze(0)
    # (N / BN, 1) blocks of rows of k blocks, each program's n-block at its column: (1, N / BN),
    # expanded over the programs' rows.
    b_tiled = b.tile((BN, BK)).tile((1, -1)).permute((1, 0)).expand((c_tiled.shape[0], -1))
    b_tiled.dtype = b_tiled.dtype.squeeze(0)
    return a_tiled, b_tiled, c_tiled


def matmul_nt_application(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], ntl.trans(b[k]))
    c = accumulator  # noqa: F841


def make_add():
    return ninetoothed.make(add_arrangement, add_application, (Tensor(1), Tensor(1), Tensor(1)))


def make_softmax():
    return ninetoothed.make(softmax_arrangement, softmax_application, (Tensor(2, other=float("-inf")), Tensor(2)))


def make_matmul(dtype):
    return ninetoothed.make(matmul_arrangement, matmul_application, tuple(Tensor(2, dtype=dtype) for _ in range(3)))


KERNELS = {
    "add": (make_add, ""),
    "softmax": (make_softmax, "-DBLOCK_SIZE=512"),
    "matmul_f16": (lambda: make_matmul(ninetoothed.float16), "-DBM=64 -DBN=64 -DBK=32"),
    "matmul_f32": (lambda: make_matmul(ninetoothed.float32), "-DBM=32 -DBN=32 -DBK=16"),
    "matmul_nt_f16": (
        lambda: ninetoothed.make(matmul_nt_arrangement, matmul_nt_application,
                                 tuple(Tensor(2, dtype=ninetoothed.float16) for _ in range(3))),
        "-DBM=64 -DBN=64 -DBK=32",
    ),
}


def configuration(kernel, given):
    """`given` and the default configuration of the kernel's meta symbols, as build options."""
    defaults = kernel._most_recent().default_config
    return " ".join([given] + [f"-D{name}={value}" for name, value in defaults.items()])


@pytest.mark.parametrize("name", KERNELS)
def test_cuda_source_is_cuda_c(name):
    make, _ = KERNELS[name]
    source = make().cuda_source
    assert 'extern "C" __global__ void __launch_bounds__(NT_WORK_ITEMS) nt_kernel_' in source
    # Nothing of OpenCL's own spelling is left in the CUDA source.
    for word in ("__kernel", "__global ", "__local ", "__private ", "get_group_id", "get_local_id", "CLK_"):
        assert word not in source, word
    # Nor of the CPU's work-item form (vectors of 16 floats, register transposes).
    assert "float16 nt_" not in source and "vload16" not in source and "nt_transpose" not in source
    if name != "add":  # values shared over a thread block
        assert "extern __shared__ __align__(1024) char nt_shared[];" in source
        assert "#define NT_BARRIER() __syncthreads()" in source


def test_opencl_source_unchanged_by_the_cuda_dialect():
    kernel = make_softmax()
    opencl = kernel.source
    assert "__kernel void nt_kernel_" in opencl and "__local " in opencl
    assert "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)" in opencl
    assert "__global__" not in opencl and "__shared__" not in opencl and "NT_D " not in opencl
    assert opencl.startswith("// Generated by NineToothed.\n#ifdef cl_khr_fp64\n")


def test_row_reductions_start_with_warp_shuffles():
    cuda_source, opencl_source = make_softmax().cuda_source, make_softmax().source
    assert "NT_SHUFFLE_XOR(" in cuda_source and "__shfl_xor_sync(0xffffffffu" in cuda_source
    assert "NT_SHUFFLE_XOR" not in opencl_source  # OpenCL's work-items share through local memory only


def test_a_transposed_operand_is_staged_as_it_lies():
    """dot(a, trans(b)): b's block is copied as it lies (rows of n, by cp.async, pipelined) and its
    fragments loaded by ldmatrix without .trans; a k-major b's with .trans."""
    transposed = KERNELS["matmul_nt_f16"][0]().cuda_source
    body = transposed[transposed.index("__global__"):]
    assert "nt_ldmatrix_x4_pair(" in body and "nt_ldmatrix_x4_trans(" not in body
    assert body.count("nt_cp_async16(") >= 4  # both operands, ahead of the loop and in it
    plain = make_matmul(ninetoothed.float16).cuda_source
    body = plain[plain.index("__global__"):]
    assert "nt_ldmatrix_x4_trans(" in body and "nt_ldmatrix_x4_pair(" not in body


def test_an_operand_bound_before_its_loop_is_staged_once():
    """Flash attention's dot(q_scaled, trans(k[i])): q_scaled, a Let bound before the key loop, is
    staged once before the loop in its own type (16-bit, padded rows), read by ldmatrix in every
    iteration, and held as floats nowhere in shared memory."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_kernels_attention import KERNEL

    q, k, v = (torch.randn(1, 2, 40, 16).half() for _ in range(3))
    o = torch.empty_like(q)
    KERNEL(q, k, v, 0.25, False, o, BLOCK_M=32, BLOCK_N=16)
    source = KERNEL._binder.last.cuda_source
    body = source[source.index("__global__"):]
    loop = body.index("for (nt_index nt_i")
    staged = re.findall(r"half\* (nt_invariant\d+) = ", body)
    assert len(staged) == 1, staged
    fill = re.search(r"NT_STORE_HALF_LOCAL\(\(float\)\((nt_let\d+)\[\(nt_r\d+ \* NT_C\d+ \+ nt_c\d+\)\]\), [^;]*, "
                     + staged[0] + r"\);", body)
    assert fill and fill.start() < loop  # filled before the loop, from the Let's registers
    assert f"float* {fill.group(1)} = " not in body  # the Let is not held in shared memory as floats
    assert "nt_ldmatrix_x4(nt_fa[nt_i], " + staged[0] in body[loop:]
    # Its dots' results are read at once: their layouts are not those of k loops' accumulations on
    # Hopper (NT_WGMMA<n>); their warpgroup MMAs read a from registers, or from its atoms where staged.
    assert "#define NT_WGMMA0" not in source and "nt_wgmma_f16_ra<" in body


def _attention_source():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_kernels_attention import KERNEL

    q, k, v = (torch.randn(1, 2, 40, 16).half() for _ in range(3))
    o = torch.empty_like(q)
    KERNEL(q, k, v, 0.25, False, o, BLOCK_M=32, BLOCK_N=16)
    return KERNEL._binder.last


def test_flash_attentions_p_is_read_from_registers():
    """Flash attention's dot(p.to(float16), v[i]): p, held in registers in the tile layout of its shape,
    is packed from its slots into mma.sync's a fragments where both dots' layouts give each warp whole
    rows (NT_HELD_A: forced for these shapes where the rows allow); it is staged in shared memory
    only where they do not."""
    source = _attention_source().cuda_source
    body = source[source.index("__global__"):]
    p = re.search(r"(nt_let\d+)\[\(nt_r\d+ \* NT_C\d+ \+ nt_c\d+\)\] = nt_exp2_f\(\(nt_let\d+\[", body).group(1)
    assert re.search(r"nt_fa\[nt_i\]\[3\] = nt_pack_f16x2\(" + p + r"\[\(2 \* nt_i \+ 1\) \* NT_C\d+ \+ nt_k0 / 4 \+ 2\]", body)
    # Staged (a store of p's slots into shared memory) only under the negated condition, and read
    # from its slots under the condition itself.
    staged = []
    for unless in re.finditer(r"if \(!\((NT_HELD_A && [^\n]*)\)\)", body):
        held = body.index("if (" + unless.group(1) + ") {", unless.end())
        staged += [held] if f"NT_STORE_HALF_LOCAL((float)({p}[" in body[unless.end():held] else []
    assert len(staged) == 1 and body.index(f"nt_pack_f16x2({p}[") > staged[0]
    assert body.count(f"NT_STORE_HALF_LOCAL((float)({p}[") == 1
    assert "#define NT_HELD_A 1" in source and "NT_HELD_A && NT_ROWS" in source  # the row-warp layouts
    assert "NT_HELD_A" not in _attention_source().source  # OpenCL C stages p as before


def test_flash_attentions_partial_blocks_are_copied_in_a_loop():
    """k and v's partial blocks (no cp.async there) are copied one element at a time in a loop from
    NT_LANE, not counted to a known bound and unrolled: unrolled, those copies took registers from
    the dots (flash attention 11-50% slower on an H200, docs/performance.md). Only gathered runs
    (an implicit GEMM's, test_index_tables.py) are unrolled."""
    body = _attention_source().cuda_source
    body = body[body.index("__global__"):]
    loops = re.findall(r"for \(nt_index (nt_copy\d+) = NT_LANE; \1 < \(\(BLOCK_N\) \* \(ninetoothed_tensor_\d+_size_3\)\); "
                       r"\1 \+= NT_WORK_ITEMS\) \{", body)
    assert len(loops) >= 2, body  # k and v, ahead of the loop and in it
    assert "nt_bits" not in body  # no runs: not a gather


def test_partial_blocks_whose_masks_test_rows_are_copied_with_zeros():
    """k and v's blocks, whose conditions test their rows alone (the sequence) and whose masked
    elements read zeros, are copied by cp.async whole or partial, masked chunks filled with zeros
    (nt_cp_async16_zfill): where a launch says their rows are aligned (NT_ALIGNED_ROWS_<i>), the test
    before the copies is a constant. A matmul's a, whose conditions test its columns (k), copies only
    whole blocks so."""
    body = _attention_source().cuda_source
    body = body[body.index("__global__"):]
    assert body.count("nt_cp_async16_zfill(") >= 4  # k and v, ahead of the loop and in it
    assert re.search(r"if \(\(NT_ALIGNED_ROWS_1 \? \(\(", body) and "NT_ALIGNED_ROWS_2 ?" in body
    matmul = make_matmul(ninetoothed.float16).cuda_source
    assert "nt_cp_async16_zfill(" not in matmul[matmul.index("__global__"):]
    assert "#ifndef NT_ALIGNED_ROWS_0\n#define NT_ALIGNED_ROWS_0 0\n#endif" in matmul


def test_flash_attentions_row_statistics_stay_in_registers():
    """The running maximum and sum and alpha are row vectors of the blocks' rows: on CUDA C each is held
    by the work-items that hold its rows of the blocks (a slice layout), the row reductions end in
    their registers, and none of them is held in shared memory (OpenCL C holds them there, as before)."""
    compiled = _attention_source()
    source = compiled.cuda_source
    slices = re.findall(r"#define NT_COL(\d+)\(tx, c\) NT_ROW(\d+)\(NT_VLANE\2 / NT_TX\2, c\)", source)
    assert len(slices) == 1
    # The family's other member takes the head's warps and work-items.
    head = slices[0][1]
    assert re.search(rf"#define NT_WM\d+ \(NT_WM{head}\)", source) and re.search(rf"#define NT_TX\d+ \(NT_TX{head}\)", source)
    body = source[source.index("__global__"):]
    assert len(re.findall(r"nt_red\d+\[nt_r\] = \(float\)nt_acc\d+\[nt_r\];", body)) == 2  # max and sum
    assert "sizeof(float) * (BLOCK_M)" not in body  # no row vector in shared memory
    assert "__local float nt_red" in compiled.source
    assert not re.search(r"#define NT_COL\d+\(tx, c\) NT_ROW", compiled.source)


def test_flash_attention_fits_two_programs_an_sm():
    """The shared memory a program asks for (CompiledKernel.cuda_shared_bytes): at 128 x 64 blocks of
    head dim 64 on 4 warps, q, p, three stages of k and v, and the two row reductions' partials,
    bounded by the family's widest columns (the head's NT_TX). Two programs fit an H100's or
    H200's 228 KB; bounded by rows x work-items, the partials alone took 128 KB and one fit."""
    compiled = _attention_source()
    # The symbols its build was given (the constexpr sizes among them), at head dim 64.
    built = {name: int(value) for name, value in re.findall(r"-D(\w+)=(-?\d+)\b", compiled.last_options)}
    sizes = {name: 64 if re.fullmatch(r"ninetoothed_tensor_\d+_size_3", name) else value
             for name, value in built.items()}

    def shared(block_m, block_n, work_items, **symbols):
        values = {**sizes, "BLOCK_M": block_m, "BLOCK_N": block_n, "nt_work_items": work_items, "nt_mma_layout": 1,
                  "nt_stages": 3, "nt_wgmma_defer": 0, **symbols}
        return compiled.cuda_shared_bytes(values)

    staged = 2 * (128 * 64 + 128 * 64 + 3 * 2 * 64 * 64)  # q, p, k and v (16-bit)
    assert staged < shared(128, 64, 128) <= 113 * 1024
    assert shared(128, 64, 128) < shared(128, 64, 256) < shared(128, 64, 256, nt_stages=4)
    assert compiled.cuda_shared_bytes({"BLOCK_M": 128}) is None  # a symbol missing


@pytest.mark.parametrize("application, sliced", (("stored_statistics_application", True),
                                                 ("added_statistics_application", False)))
def test_row_vectors_stored_to_a_tensor_the_kernel_reads_keep_the_plain_layout(application, sliced):
    """Every work-item of a row holds its row vector's element: each stores it, the same value, where
    the kernel only writes the tensor; where it also reads it (m = m + row_max), each would read what
    another may have written already, so that size keeps the plain layout."""
    sys.path.insert(0, os.path.dirname(__file__))
    import test_kernels_attention as attention

    kernel = attention.statistics_kernel(getattr(attention, application))
    q, k, v = (torch.randn(1, 2, 40, 16).half() for _ in range(3))
    kernel(q, k, v, 0.25, False, torch.empty_like(q), torch.zeros(1, 2, 40), BLOCK_M=32, BLOCK_N=16)
    source = kernel._binder.last.cuda_source
    assert "NT_HELD_A && NT_ROWS" in source
    assert bool(re.search(r"#define NT_COL\d+\(tx, c\) NT_ROW", source)) == sliced


def test_row_vectors_folded_across_work_items_keep_the_plain_layout():
    """A slice layout's row vector is held by every work-item of its row: a kernel that folds one
    (here max(row_max)) would count it more than once there, so its row vectors keep the plain layout."""
    sys.path.insert(0, os.path.dirname(__file__))
    import test_kernels_attention as attention

    kernel = attention.statistics_kernel(attention.folded_statistics_application)
    q, k, v = (torch.randn(1, 2, 40, 16).half() for _ in range(3))
    kernel(q, k, v, 0.25, False, torch.empty_like(q), torch.zeros(1, 2, 40), BLOCK_M=32, BLOCK_N=16)
    source = kernel._binder.last.cuda_source
    assert "NT_HELD_A && NT_ROWS" in source  # p is still read from registers where the rows allow
    assert not re.search(r"#define NT_COL\d+\(tx, c\) NT_ROW", source)
    assert not re.search(r"#define NT_WM\d+ \(NT_WM\d+\)", source)


def scaled_rows_application(a, b, c):
    # a dot's a a cast Let whose shape (BM, BK) is no dot's result: its layout is no mma one
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        p = a[k] * 2.0
        accumulator += ntl.dot(p.to(ntl.float16), b[k]) + ntl.sum(p, 1)[:, None]
    c = accumulator  # noqa: F841


def square_arrangement(a, w, c):
    c_tiled = c.tile((BM, BN))
    w_tiled = w.tile((BN, BN)).tile((-1, 1)).expand((c_tiled.shape[0], -1))
    w_tiled.dtype = w_tiled.dtype.squeeze(1)
    return a.tile((BM, BN)), w_tiled, c_tiled


def in_place_application(a, w, c):
    # x += dot(x, w): the dot accumulates into the array its a is read from
    x = a * 1.0
    for k in range(w.shape[0]):
        x = x + ntl.dot(x.to(ntl.float16), w[k])
    c = x  # noqa: F841


def _held_cases():
    f16, f32 = ninetoothed.float16, ninetoothed.float32
    return {
        "not_a_result_shape": ninetoothed.make(matmul_arrangement, scaled_rows_application,
                                               (Tensor(2, dtype=f32), Tensor(2, dtype=f16), Tensor(2, dtype=f32))),
        "in_place": ninetoothed.make(square_arrangement, in_place_application,
                                     (Tensor(2, dtype=f32), Tensor(2, dtype=f16), Tensor(2, dtype=f32))),
    }


@pytest.mark.parametrize("case", ("not_a_result_shape", "in_place"))
def test_dots_whose_a_cannot_be_read_from_registers_stage_it(case):
    """A Let or local is read as a's fragments only where its layout is an mma one (its shape is a
    dot result's) and the dot does not accumulate into it: otherwise it is staged, and the source
    names no layout macro its layout lacks."""
    source = _held_cases()[case].cuda_source
    body = source[source.index("__global__"):]
    assert not re.search(r"nt_pack_f16x2\(nt_(let|local)\d+\[", body)
    assert "NT_HELD_A" not in body
    assert "nt_ldmatrix_x4(nt_fa[nt_i], " in body


needs_nvrtc = pytest.mark.skipif(not _core.nvrtc_available(), reason="NVRTC (libnvrtc.so) is not installed")


@needs_nvrtc
@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("warps", (1, 4, 8))
# Off tensor cores (no NT_MMA_SYNC) sm_90a builds what sm_80 does: Hopper's paths are under it.
@pytest.mark.parametrize("architecture, mma", (("sm_80", False), ("sm_80", True), ("sm_90a", True)))
def test_cuda_source_builds_with_nvrtc(name, warps, mma, architecture):
    make, options = KERNELS[name]
    kernel = make()
    source = kernel.cuda_source
    options = configuration(kernel, options) + f" -DNT_WORK_ITEMS={32 * warps}"
    if warps == 4:  # a launch whose tensors lie within 2^30 elements: index arithmetic in int
        options += " -DNT_INDEX32"
    if mma:
        options += " -DNT_MMA_LAYOUT -DNT_MMA_SYNC"
    assert len(_core.compile_cuda(source, options, architecture)) > 0


@needs_nvrtc
@pytest.mark.parametrize("architecture, blocks, warps, index", (("sm_80", (64, 32), 4, ""),
                                                                ("sm_90a", (128, 64), 8, " -DNT_INDEX32"),
                                                                ("sm_90a", (128, 64), 4, ""),
                                                                ("sm_90a", (64, 128), 4, " -DNT_INDEX32"),
                                                                ("sm_90a", (128, 64), 8, " -DNT_INDEX32 -DNT_ALIGNED_ROWS_0=1 "
                                                                 "-DNT_ALIGNED_ROWS_1=1 -DNT_ALIGNED_ROWS_2=1")))
def test_flash_attention_builds_with_nvrtc(architecture, blocks, warps, index):
    """On sm_90a, 4 and 8 warps, both dots on wgmma with a from registers (head dim 64 there)."""
    compiled = _attention_source()
    options = re.sub(r"-cl-mad-enable|-DNT_VECTOR_BYTES=\S+|-DNT_WORK_ITEMS=\S+|-DNT_MMA_\S+|-DNT_CPU", "",
                     compiled.last_options)
    options = options.replace("-DBLOCK_M=32", f"-DBLOCK_M={blocks[0]}").replace("-DBLOCK_N=16", f"-DBLOCK_N={blocks[1]}")
    if architecture == "sm_90a":
        options = options.replace("size_3=16", "size_3=64")
    options += f" -DNT_WORK_ITEMS={32 * warps} -DNT_MMA_LAYOUT -DNT_MMA_SYNC" + index
    assert len(_core.compile_cuda(compiled.cuda_source, options, architecture)) > 0


@needs_nvrtc
@pytest.mark.parametrize("case", ("not_a_result_shape", "in_place"))
def test_dots_whose_a_is_staged_build_with_nvrtc(case):
    source = _held_cases()[case].cuda_source
    options = "-DBM=64 -DBN=64 -DBK=32 -DNT_WORK_ITEMS=128 -DNT_MMA_LAYOUT -DNT_MMA_SYNC"
    assert len(_core.compile_cuda(source, options, "sm_80")) > 0


@needs_nvrtc
def test_nvrtc_errors_carry_the_log():
    with pytest.raises(RuntimeError, match=r"CUDA build failed[\s\S]*build log:[\s\S]*nt_undefined_name"):
        _core.compile_cuda('extern "C" __global__ void k(float* x) { x[0] = nt_undefined_name; }', "", "sm_90a")


@pytest.mark.skipif(_core.cuda_available(), reason="this machine has a CUDA driver")
def test_cuda_array_without_a_driver_is_a_clear_error():
    class DeviceArray:
        """A CUDA array as CuPy exposes one; its memory is never touched."""

        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x7F0000000000, False), "version": 3}

    kernel = make_add()
    with pytest.raises(ValueError, match=r"CUDA driver \(libcuda\.so\.1\)"):
        kernel(DeviceArray(), DeviceArray(), DeviceArray())


cuda = pytest.mark.skipif(not torch.cuda.is_available() or not _core.cuda_available(), reason="no CUDA device")


@cuda
@pytest.mark.host_tensors  # needs host tensors that stay on the host
def test_mixed_devices_are_refused_by_name():
    kernel = make_add()
    x, z = torch.randn(10, device="cuda"), torch.empty(10, device="cuda")
    with pytest.raises(ValueError, match=r"one device: 'x' on cuda:0, 'y' on cpu, 'z' on cuda:0"):
        kernel(x, torch.randn(10), z)


def mixed_index_arrangement(x, n, y):
    return x.tile((64,)), n, y.tile((64,))


def mixed_index_application(x, n, y):
    # Program ids, loop variables and offsets are int64 values, whatever type the index arithmetic
    # behind them has (int under NT_INDEX32): with an int64 scalar in min, max and clamp, and in
    # products past int's range.
    pid = ntl.program_id(0)
    acc = ntl.minimum(pid, n) + ntl.clamp(pid, 0, n) + pid * pid * 3_000_000_000
    for i in range(n):
        acc = acc + ntl.maximum(i, n - 3) * 1_000_000_000
    y = x + ntl.maximum(x.offsets(0), n) + acc  # noqa: F841


def mixed_index_kernel():
    i64 = ninetoothed.int64
    return ninetoothed.make(mixed_index_arrangement, mixed_index_application,
                            (Tensor(1, dtype=i64), Tensor(0, dtype=i64), Tensor(1, dtype=i64)))


def test_index_values_stay_int64():
    kernel = mixed_index_kernel()
    x = torch.randint(-1000, 1000, (300,), dtype=torch.int64)
    y = torch.full_like(x, -1)
    n = 5
    kernel(x, n, y)
    pid = torch.arange(300) // 64
    loop = sum(max(i, n - 3) * 1_000_000_000 for i in range(n))
    expected = x + torch.clamp(torch.arange(300), min=n) + torch.clamp(pid, max=n) * 2 + pid * pid * 3_000_000_000 + loop
    assert torch.equal(y, expected)
    if _core.nvrtc_available():  # and it builds with int index arithmetic (mixed int and long)
        options = "-DNT_WORK_ITEMS=128 -DNT_INDEX32"
        assert len(_core.compile_cuda(kernel.cuda_source, options, "sm_80")) > 0


def fixed_add_arrangement(x, y, z):
    return x.tile((1024,)), y.tile((1024,)), z.tile((1024,))


@cuda
def test_offsets_are_32_bit_only_where_the_tensors_allow():
    """A launch whose tensors all lie within 2^30 elements builds with NT_INDEX32 (int offsets, as
    Triton's); a tensor of more elements, or a view spanning more memory, keeps long offsets, and
    its far elements, past int's range, are right."""
    kernel = ninetoothed.make(fixed_add_arrangement, add_application,
                              tuple(Tensor(1, dtype=ninetoothed.int8) for _ in range(3)))

    def check(x, y):
        z = torch.full_like(x, -128)
        kernel(x, y, z)
        torch.cuda.synchronize()
        assert torch.equal(z, x + y)
        return "-DNT_INDEX32" in kernel._binder.last.last_options.split()

    small = [torch.randint(-50, 50, (4097,), dtype=torch.int8, device="cuda") for _ in range(2)]
    assert check(*small)
    n = 2**31 + 37  # past int's range, the last block partly full
    big = [torch.randint(-50, 50, (n,), dtype=torch.int8, device="cuda") for _ in range(2)]
    assert not check(*big)
    # two elements, but more than 2^31 bytes apart
    assert not check(*(b.as_strided((2,), (2**31 + 1,), 3) for b in big))
    del big
    assert check(*small)  # and the small launch again: its own build, from the cache


_TUNED_ADD = r"""
import json
import torch
import ninetoothed
from ninetoothed import Tensor


def arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def application(x, y, z):
    z = x + y  # noqa: F841


kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1)))
x, y = torch.randn(100_000, device="cuda"), torch.randn(100_000, device="cuda")
z = torch.empty_like(x)
kernel(x, y, z)
assert torch.equal(z, x + y)
(record,) = kernel.tuning_report()
print(json.dumps({"key": record["key"], "from_disk": record["from_disk"]}))
"""


@cuda
def test_nvrtc_options_tune_apart(tmp_path):
    """NINETOOTHED_NVRTC_OPTIONS changes what is built (-DNT_NO_HELD_A, -DNT_NO_INDEX32): a
    configuration tuned without it is not taken with it, nor the other way round."""
    import json
    import subprocess

    script = tmp_path / "tuned_add.py"
    script.write_text(_TUNED_ADD)

    def tuning(**options):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), NINETOOTHED_CACHE_DIR=str(tmp_path / "cache"))
        env.pop("NINETOOTHED_NVRTC_OPTIONS", None)
        env.update(options)
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    plain = tuning()
    other = tuning(NINETOOTHED_NVRTC_OPTIONS="-DNT_NO_INDEX32")
    again = tuning()
    assert not plain["from_disk"] and not other["from_disk"] and again["from_disk"]
    assert "nvrtc_options=-DNT_NO_INDEX32" in other["key"] and "nvrtc_options" not in plain["key"]


@cuda
@pytest.mark.parametrize("size", (1, 1000, 4097))
def test_views_and_offsets_on_cuda(size):
    kernel = make_add()
    base = torch.randn(3 * size + 5, device="cuda")
    x = base[5::3]  # an offset, strided view
    y = torch.randn(2 * size, device="cuda").flip(0)[:size]  # a negative stride
    z = torch.full((2 * size,), float("nan"), device="cuda")
    kernel(x, y, z[1::2])
    torch.testing.assert_close(z[1::2], x + y, rtol=0, atol=0)
    assert torch.isnan(z[0::2]).all()  # what lies between the elements is never written


@cuda
@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_launches_follow_the_current_stream(dtype):
    kernel = make_softmax()
    x = torch.randn(257, 300, device="cuda").to(dtype)
    out = torch.full_like(x, float("nan"))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        # Work queued on the stream before the launch must finish first: a long matmul writing x.
        big = torch.randn(4096, 4096, device="cuda")
        for _ in range(4):
            big = big @ big / 64
        x.copy_((big[:257, :300] * 0 + x.float()).to(dtype))
        kernel(x, out, BLOCK_SIZE=512)
        result = out.clone()
    stream.synchronize()
    torch.testing.assert_close(result.float(), torch.softmax(x.float(), -1), rtol=2e-3, atol=2e-3)
    assert kernel.last_launch_seconds is None  # a CUDA launch does not wait for its kernel


@cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one CUDA device")
def test_second_device():
    kernel = make_add()
    x, y = torch.randn(5000, device="cuda:1"), torch.randn(5000, device="cuda:1")
    z = torch.empty_like(x)
    kernel(x, y, z)
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)


@cuda
def test_cupy_arrays():
    cupy = pytest.importorskip("cupy")
    kernel = make_add()
    x, y = cupy.random.randn(3001, dtype=cupy.float32), cupy.random.randn(3001, dtype=cupy.float32)
    z = cupy.full(3001, math.nan, dtype=cupy.float32)
    kernel(x, y, z)
    cupy.cuda.get_current_stream().synchronize()
    assert cupy.array_equal(z, x + y)


@cuda
def test_matmul_on_tensor_cores():
    kernel = make_matmul(ninetoothed.float16)
    a, b = torch.randn(300, 200, device="cuda").half(), torch.randn(200, 130, device="cuda").half()
    c = torch.full((300, 130), float("nan"), device="cuda").half()
    kernel(a, b, c, BM=64, BN=64, BK=32)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=5e-2)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


_HOST_ONLY = r"""
import ctypes

# What the OpenCL drivers load themselves (NVIDIA's runs on libcuda, and so may PoCL's CUDA
# device), before NineToothed is imported: libcuda counts only if it was not already there.
opencl = ctypes.CDLL("libOpenCL.so.1")
count = ctypes.c_uint(0)
opencl.clGetPlatformIDs(0, None, ctypes.byref(count))
drivers_load_libcuda = "libcuda" in open("/proc/self/maps").read()

import numpy as np
import ninetoothed
from ninetoothed import Tensor


def arrangement(x, y, z, BLOCK_SIZE=ninetoothed.block_size()):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,)), z.tile((BLOCK_SIZE,))


def application(x, y, z):
    z = x + y  # noqa: F841


kernel = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1)))
x, y = np.arange(1000, dtype=np.float32), np.ones(1000, dtype=np.float32)
z = np.full(1000, np.nan, dtype=np.float32)
kernel(x, y, z)
assert (z == x + y).all()
# NVIDIA's OpenCL device itself runs on libcuda, whenever it opens it.
drivers_load_libcuda = drivers_load_libcuda or "NVIDIA" in ninetoothed.current_device()["platform"]
maps = open("/proc/self/maps").read()
print("driver opened" if ninetoothed._core.cuda_driver_opened() else "driver not opened",
      "libcuda loaded" if "libcuda" in maps and not drivers_load_libcuda else "no libcuda",
      "nvrtc loaded" if "nvrtc" in maps else "no nvrtc")
"""


def test_a_process_with_host_tensors_only_never_opens_cuda(tmp_path):
    import os
    import subprocess

    script = tmp_path / "host_only.py"
    script.write_text(_HOST_ONLY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "driver not opened no libcuda no nvrtc" in result.stdout
