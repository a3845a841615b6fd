"""Tensor-core dots in CUDA C: float16 and bfloat16 operands staged as 16-bit values, copied by
cp.async where whole rows are contiguous and aligned, read by ldmatrix, and loaded NT_STAGES - 1
iterations ahead of the k loop that multiplies them (num_stages).

On any machine: what the generated CUDA C holds, and NVRTC builds of it for every number of stages
(where NVRTC can be loaded). On a machine with a GPU: results on CUDA tensors for every path of the
copies (aligned rows, misaligned rows, strided rows, partial blocks, loops shorter than the
pipeline), checked element by element against float64.
"""

import re
import sys

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor, _core

# The matmul test_cuda_source.py builds, with its block-size symbols BM, BN, BK.
from test_cuda_source import (  # noqa: E402
    matmul_application,
    matmul_arrangement,
    matmul_nt_application,
    matmul_nt_arrangement,
)


def make_matmul(dtype, **keywords):
    tensors = (Tensor(2, dtype=dtype), Tensor(2, dtype=dtype), Tensor(2, dtype=ninetoothed.float32))
    return ninetoothed.make(matmul_arrangement, matmul_application, tensors, **keywords)


DTYPES = {"float16": (ninetoothed.float16, torch.float16), "bfloat16": (ninetoothed.bfloat16, torch.bfloat16)}


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_source_stages_16_bit_operands_ahead(dtype):
    kernel = make_matmul(DTYPES[dtype][0])
    source = kernel.cuda_source
    for spelling in ("nt_cp_async16(", "nt_ldmatrix_x4(", "nt_ldmatrix_x4_trans(", "NT_CP_ASYNC_COMMIT();",
                     "NT_CP_ASYNC_WAIT(NT_STAGES > 1 ? NT_STAGES - 2 : 0);", "#define NT_STAGES 3"):
        assert spelling in source, spelling
    # The operands' buffers hold 16-bit values, NT_STAGES of them each (one more where wgmma
    # groups run on: test_k_loop_takes_one_barrier_and_leaves_wgmma_groups_running).
    assert "half* nt_stages" in source if dtype == "float16" else "ushort* nt_stages" in source
    # OpenCL keeps its float staging: none of this reaches its source.
    opencl = kernel.source
    for spelling in ("cp_async", "ldmatrix", "NT_STAGES"):
        assert spelling not in opencl, spelling


def k_loop(source):
    """The text of the first k loop that loads its operands ahead (it counts iterations in nt_it),
    from its `for` to its closing brace, and the text after it."""
    start = source.index("for (", source.index(" = 0;\n", source.index("nt_it")) )
    depth, i = 0, source.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        if depth == 0:
            return source[start:i + 1], source[i + 1:]
        i += 1


def outside_single_stage(text):
    """`text` without its `#if NT_STAGES == 1` sections (what a build of one stage adds)."""
    return re.sub(r"#if NT_STAGES == 1\n.*?#endif\n", "", text, flags=re.S)


@pytest.mark.parametrize("dtype", DTYPES)
def test_k_loop_takes_one_barrier_and_leaves_wgmma_groups_running(dtype):
    """An iteration waits for its copies and takes the pipeline's only barrier before it starts the
    copy NT_STAGES - 1 ahead. On two warpgroups or more (NT_WGMMA_DEFER), its wgmma group runs on
    while the next iteration starts: the iteration ends waiting for all groups but its own, the loop
    for all, and the buffers are one more than NT_STAGES."""
    source = make_matmul(DTYPES[dtype][0]).cuda_source
    assert "#if defined(NT_WGMMA) && NT_WORK_ITEMS >= 256\n#define NT_WGMMA_DEFER 1" in source
    assert "#define NT_ASYNC_BUFFERS (NT_STAGES + NT_WGMMA_DEFER)" in source
    loop, after = k_loop(source[source.index("__global__"):])
    steady = outside_single_stage(loop)
    assert steady.count("NT_BARRIER();") == 1
    wait = steady.index("NT_CP_ASYNC_WAIT(NT_STAGES > 1 ? NT_STAGES - 2 : 0);")
    assert wait < steady.index("NT_BARRIER();") < steady.index("nt_cp_async16(") < steady.index("NT_WGMMA_FENCE();")
    assert "(nt_it" in steady and "+ NT_STAGES - 1) % NT_ASYNC_BUFFERS" in steady
    # The steps' own wait only where groups do not run on; the iteration's and the loop's where they do.
    assert re.search(r"NT_WGMMA_COMMIT\(\);\s*#if !NT_WGMMA_DEFER\s*NT_WGMMA_WAIT\(0\);", steady)
    assert re.search(r"#if NT_WGMMA_DEFER\s*NT_WGMMA_WAIT\(1\);", steady)
    assert re.search(r"^\s*#if NT_WGMMA_DEFER\s*NT_WGMMA_WAIT\(0\);", after)
    # A single stage: the copy is the iteration's own, waited for and shared before the dot.
    single = re.search(r"#if NT_STAGES == 1\n(.*?)#endif\n", loop, re.S).group(1)
    assert "NT_CP_ASYNC_WAIT(0);" in single and "NT_BARRIER();" in single
    # The shared memory a launch asks for counts the buffer more (128 x 64 and 64 x 128 of 16 bits).
    compiled = make_matmul(DTYPES[dtype][0])._most_recent()
    values = {"BM": 128, "BN": 128, "BK": 64, "nt_work_items": 256, "nt_mma_layout": 1, "nt_stages": 3}
    running_on = compiled.cuda_shared_bytes({**values, "nt_wgmma_defer": 1})
    waited_for = compiled.cuda_shared_bytes({**values, "nt_wgmma_defer": 0})
    one = 2 * (128 * 64 + 64 * 128)
    assert one <= running_on - waited_for <= one + 4 * 1024 and waited_for >= 3 * one  # (1024-byte alignments)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copies_ahead_count_to_a_bound_the_compiler_knows(dtype):
    """Each work-item's cp.async copies are counted from 0 to (chunks + work-items - 1) / work-items,
    unrolled: their offsets move by the step's own term alone and are computed out of the k loop.
    Counted from the work-item's lane, the loop was a general one that recomputed every offset
    (the float16 matmul's best tile took 0.338 ms on an H200 that way, 0.260 ms unrolled). A
    work-item past the last chunk copies nothing where the chunks do not divide evenly."""
    source = make_matmul(DTYPES[dtype][0]).cuda_source
    loop, _ = k_loop(source[source.index("__global__"):])
    copies = re.findall(r"NT_UNROLL\n\s*for \(int (nt_step\d+) = 0; \1 < \(\(\((\w+)\) \* \(\((\w+)\) / 8\)\)"
                        r" \+ NT_WORK_ITEMS - 1\) / NT_WORK_ITEMS; \+\+\1\) \{\n\s*const nt_index (nt_chunk\d+) = "
                        r"NT_LANE \+ \1 \* NT_WORK_ITEMS;\n\s*if \(\(\(\2\) \* \(\(\3\) / 8\)\) % NT_WORK_ITEMS == 0 "
                        r"\|\| \4 < ", loop)
    assert sorted((rows, columns) for _, rows, columns, _ in copies) == [("BK", "BN"), ("BM", "BK")]
    assert "= NT_LANE; nt_chunk" not in source
    assert " int nt_wgmma_at(int r, int c, int rows, int atom) {" in source


def test_dots_whose_operands_the_iteration_stages_keep_their_waits():
    """x = x + dot(x.to(float16), w[k]): w[k] is loaded ahead, but a is staged in the iteration itself
    (and is the accumulator), so its group may not run on into the next iteration, which rewrites
    a's array: the steps wait for their own group."""
    from test_cuda_source import _held_cases

    source = _held_cases()["in_place"].cuda_source
    loop, _ = k_loop(source[source.index("__global__"):])
    assert "% NT_ASYNC_BUFFERS" in loop  # the loop is written in the order that could defer
    assert "NT_WGMMA_WAIT(1);" not in source and "#if !NT_WGMMA_DEFER" not in source
    assert "NT_WGMMA_WAIT(0);" in loop


def test_dots_read_at_once_keep_their_waits():
    """Attention's dots (their results read at once, on mma.sync) leave nothing running: their loop
    keeps NT_STAGES buffers and its order: the copy ahead before the wait, and a barrier at the end of
    the iteration too (the one-barrier order is untimed there; docs/performance.md)."""
    from test_cuda_source import _attention_source

    source = _attention_source().cuda_source
    assert "NT_WGMMA_DEFER" not in source and "NT_ASYNC_BUFFERS" not in source
    loop, _ = k_loop(source[source.index("__global__"):])
    assert "+ NT_STAGES - 1) % NT_STAGES" in loop
    # (k and v copied partial blocks too, their masked chunks zeros: nt_cp_async16_zfill)
    assert loop.index("nt_cp_async16_zfill(") < loop.index("NT_CP_ASYNC_WAIT(NT_STAGES - 1);") < loop.index("NT_BARRIER();")
    assert loop.rstrip("}").rstrip().endswith("NT_BARRIER();")


def test_attention_dots_read_a_from_registers_on_warpgroups():
    """On Hopper both of attention's dots go on wgmma where the layouts are wgmma's accumulators'
    (else mma.sync, as before), b from its atoms: k k-major (q kᵀ: k staged as it is), v n-major.
    p v reads p from the registers that hold it (its slots packed before the fence); q kᵀ reads q
    from its atoms, staged once before the loop, so that q's registers are free in the loop."""
    from test_cuda_source import _attention_source

    source = _attention_source().cuda_source
    body = source[source.index("__global__"):]
    # p v from registers; q kᵀ from q's atoms, where q is held and where not; p v from p's atoms
    # where p is staged (-DNT_NO_HELD_A).
    assert body.count("nt_wgmma_f16_ra<") == 1 and body.count("nt_wgmma_f16<") == 3
    assert body.count("#ifdef NT_WGMMA") == 4 and body.count("NT_WGMMA_WAIT(0);") == 4
    assert "NT_WGMMA_DEFER" not in body  # read at once: nothing left running
    assert "nt_wgmma_desc_k(" in body and "nt_wgmma_desc_mn(" in body and "nt_wgmma_at(" in body
    assert "NT_ASYNC_PROXY_FENCE();" in body  # the copies of k and v into the atoms
    q = re.search(r"nt_wgmma_desc_k\((nt_invariant\d+), ", body)
    loop = body.index("for (nt_index nt_i")  # the loop over blocks of keys
    assert q and body.index(f", {q.group(1)});") < loop < q.start()  # filled before it, read in it
    # p's fragments are packed before the fence, then issued.
    dot = re.search(r"uint nt_fa\[\(BLOCK_N\) / 16\]", body)
    fence = body.index("NT_WGMMA_FENCE();", dot.end())
    assert re.search(r"nt_pack_f16x2\(nt_let\d+\[", body[dot.end():fence])
    assert body.index("nt_wgmma_f16_ra<NT_WGMMA_N(", fence) < body.index("NT_WGMMA_COMMIT();", fence)


def test_float32_dots_load_nothing_ahead():
    source = make_matmul(ninetoothed.float32).cuda_source
    assert "NT_STAGES" not in source and "cp_async16(" not in source.split("nt_kernel_")[-1]


needs_nvrtc = pytest.mark.skipif(not _core.nvrtc_available(), reason="NVRTC (libnvrtc.so) is not installed")


@needs_nvrtc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stages", (1, 4))  # no copies ahead; several (test_cuda_source.py builds the default, 3)
@pytest.mark.parametrize("warps", (8,))  # test_cuda_source.py builds 1, 4 and 8 warps
@pytest.mark.parametrize("architecture", ("sm_80", "sm_90a"))
def test_every_number_of_stages_builds_with_nvrtc(dtype, stages, warps, architecture):
    kernel = make_matmul(DTYPES[dtype][0])
    options = (f"-DBM=128 -DBN=64 -DBK=32 -DNT_WORK_ITEMS={32 * warps} -DNT_STAGES={stages} "
               "-DNT_MMA_LAYOUT -DNT_MMA_SYNC")
    assert len(_core.compile_cuda(kernel.cuda_source, options, architecture)) > 0
    # Without tensor cores (compute capability below 8.0) the copies and waits compile away.
    assert len(_core.compile_cuda(kernel.cuda_source, options.replace(" -DNT_MMA_SYNC", ""), "sm_75")) > 0


cuda = pytest.mark.skipif(not torch.cuda.is_available() or not _core.cuda_available(), reason="no CUDA device")


def operands(m, k, n, dtype, layout):
    """Fresh random a (m x k) and b (k x n) in `layout`: contiguous rows; rows starting one element
    after a 16-byte boundary; or strided (transposed views)."""
    if layout == "contiguous":
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    elif layout == "misaligned":
        a, b = torch.randn(m, k + 1, device="cuda")[:, 1:], torch.randn(k, n + 1, device="cuda")[:, 1:]
    else:
        a, b = torch.randn(k, m, device="cuda").t(), torch.randn(n, k, device="cuda").t()
    return a.to(dtype), b.to(dtype)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ("contiguous", "misaligned", "strided"))
@pytest.mark.parametrize("shape", ((256, 128, 192), (300, 200, 130), (65, 40, 72), (48, 16, 40)))
@pytest.mark.parametrize("stages", (None, 1, 2, 4))
def test_tensor_core_matmul_on_cuda(dtype, layout, shape, stages):
    m, k, n = shape
    keywords = {} if stages is None else {"num_stages": stages}
    kernel = make_matmul(DTYPES[dtype][0], **keywords)
    a, b = operands(m, k, n, DTYPES[dtype][1], layout)
    c = torch.full((m, n), float("nan"), device="cuda")
    kernel(a, b, c, BM=64, BN=64, BK=32)
    expected = (a.double() @ b.double()).float()
    torch.testing.assert_close(c, expected, rtol=1e-4, atol=1e-4)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_aligned_at_one_call_and_not_at_the_next(dtype):
    """A launch tells its build whether a tensor's rows are 16-byte aligned (NT_ALIGNED_ROWS_<i>: the
    copies' test is then a constant, and the element-by-element path beside them is gone): tensors of
    the same shapes and strides one element off a 16-byte boundary get a build of their own, whose
    copies test their rows, and the aligned ones theirs again after them."""
    m, k, n = 300, 200, 136
    kernel = make_matmul(DTYPES[dtype][0])
    a_memory = torch.randn(m * k + 8, device="cuda").to(DTYPES[dtype][1])
    b_memory = torch.randn(k * n + 8, device="cuda").to(DTYPES[dtype][1])
    for offset in (0, 1, 8, 0):
        a, b = a_memory[offset:offset + m * k].view(m, k), b_memory[offset:offset + k * n].view(k, n)
        c = torch.full((m, n), float("nan"), device="cuda")
        kernel(a, b, c, BM=64, BN=64, BK=32)
        torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("blocks", ((64, 64, 16), (32, 64, 32)))
def test_copies_fewer_than_the_work_items(dtype, blocks):
    """On 8 warps a 64 x 16 block is 128 copies of 16 bytes for 256 work-items: the work-items past
    the last chunk copy nothing (and 32 x 32 is 128 too, 64 x 32 256)."""
    bm, bn, bk = blocks
    kernel = make_matmul(DTYPES[dtype][0], num_warps=8, num_stages=3)
    a, b = operands(300, 200, 130, DTYPES[dtype][1], "contiguous")
    c = torch.full((300, 130), float("nan"), device="cuda")
    kernel(a, b, c, BM=bm, BN=bn, BK=bk)
    torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_large_blocks_on_eight_warps(dtype):
    kernel = make_matmul(DTYPES[dtype][0], num_warps=8, num_stages=3)
    a, b = operands(1000, 520, 770, DTYPES[dtype][1], "contiguous")
    c = torch.full((1000, 770), float("nan"), device="cuda")
    kernel(a, b, c, BM=128, BN=128, BK=32)
    torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)


def make_matmul_16_bit_out(dtype, **keywords):
    """The matmul with its result in the operands' 16-bit type (float16 or bfloat16)."""
    return ninetoothed.make(matmul_arrangement, matmul_application, tuple(Tensor(2, dtype=dtype) for _ in range(3)),
                            **keywords)


@pytest.mark.parametrize("dtype", DTYPES)
def test_16_bit_results_are_stored_a_pair_at_a_time(dtype):
    """A tensor core's layout holds pairs of adjacent columns: a 16-bit result is stored a pair at a
    time (rounded to nearest even and packed into one 32-bit store) where the block's rows are
    unit-stride, an even number of elements apart, from a 4-byte-aligned start; element by
    element otherwise, and wherever the block is partial."""
    source = make_matmul_16_bit_out(DTYPES[dtype][0]).cuda_source
    store = "nt_store_half2_rte(" if dtype == "float16" else "nt_store_bf16x2_rte("
    kernel = source[source.index("__global__"):]
    paired = re.search(r"#ifdef NT_MMA_SYNC\n\s*if \((NT_MMA\d+) && (NT_FULL\d+) && (.*?)\) \{\n(.*?)\} else\n\s*#endif\n",
                       kernel, re.S)
    assert paired, "no pair path"
    mma, full, test, body = paired.groups()
    assert mma[len("NT_MMA"):] == full[len("NT_FULL"):]
    assert ") == 1 && " in test and ") % 2 == 0 && ((ulong)(nt_p2 + " in test and ") & 3) == 0" in test
    assert body.count(store) == 1 and re.search(r"; (nt_c\d+) \+= 2\)", body)
    # The element-by-element stores remain: after the pair path, and for partial blocks.
    rest = kernel[paired.end():]
    element = "NT_STORE_HALF_GLOBAL(" if dtype == "float16" else "nt_float_to_bf16("
    assert rest.count(element) >= 2
    # A float32 result has no pairs; OpenCL none of this.
    assert store not in make_matmul(DTYPES[dtype][0]).cuda_source.split("__global__")[1]
    assert store not in make_matmul_16_bit_out(DTYPES[dtype][0]).source


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("output", ("contiguous", "odd_rows", "odd_start", "columns"))
@pytest.mark.parametrize("shape", ((256, 128, 192), (300, 200, 130)))
def test_16_bit_results_on_cuda(dtype, output, shape):
    """Every element of a 16-bit result, where its rows allow pair stores (contiguous) and where they
    do not: rows an odd number of elements apart, a start one element off 4 bytes, a transposed
    view. Nothing around the result is written."""
    m, k, n = shape
    torch_dtype = DTYPES[dtype][1]
    kernel = make_matmul_16_bit_out(DTYPES[dtype][0], num_warps=8, num_stages=3)
    a, b = operands(m, k, n, torch_dtype, "contiguous")
    if output == "contiguous":
        whole = torch.full((m, n), float("nan"), device="cuda", dtype=torch_dtype)
        c = whole
    elif output == "odd_rows":
        whole = torch.full((m, n + 1), float("nan"), device="cuda", dtype=torch_dtype)
        c = whole[:, :n]
    elif output == "odd_start":
        whole = torch.full((m * n + 1,), float("nan"), device="cuda", dtype=torch_dtype)
        c = whole[1:].view(m, n)
    else:
        whole = torch.full((n, m), float("nan"), device="cuda", dtype=torch_dtype)
        c = whole.t()
    kernel(a, b, c, BM=128, BN=128, BK=64)
    expected = (a.double() @ b.double()).to(torch_dtype)
    tolerance = 1e-2 if dtype == "float16" else 2e-2
    torch.testing.assert_close(c.float(), expected.float(), rtol=tolerance, atol=tolerance)
    written = torch.zeros_like(whole, dtype=torch.bool)
    if output == "odd_rows":
        written[:, :n] = True
    elif output == "odd_start":
        written[1:] = True
    else:
        written[...] = True
    assert torch.isnan(whole[~written]).all()


# --- Hopper's warpgroup MMAs (wgmma, sm_90a) -----------------------------------------------------

# (BM, BN, BK, num_warps): k-major atoms of 128, 64 and 32 bytes (BK 64 and 128, 32, 16), n-major
# ones likewise (BN), wgmma's of N 256 down to 16, one and two warpgroups.
WARPGROUP_BLOCKS = [(128, 128, 64, 4), (64, 256, 64, 4), (128, 96, 32, 8), (64, 48, 16, 4), (256, 64, 128, 8)]


def make_matmul_nt(dtype, **keywords):
    tensors = (Tensor(2, dtype=dtype), Tensor(2, dtype=dtype), Tensor(2, dtype=ninetoothed.float32))
    return ninetoothed.make(matmul_nt_arrangement, matmul_nt_application, tensors, **keywords)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_source_multiplies_on_warpgroups_where_built_for_hopper(dtype):
    """wgmma where NVRTC builds for sm_90a: both b layouts read through descriptors, the copies
    fenced for the tensor cores' proxy; mma.sync stays for every other target."""
    spelled = "f16" if dtype == "float16" else "bf16"
    for make, n_major in ((make_matmul, True), (make_matmul_nt, False)):
        source = make(DTYPES[dtype][0]).cuda_source
        assert "#if defined(NT_MMA_SYNC) && defined(__CUDA_ARCH_FEAT_SM90_ALL)" in source
        assert f"template <int TB> struct nt_wgmma_{spelled}<256, TB> {{" in source  # every width, built if used
        body = source[source.index("__global__"):]
        for spelling in ("#ifdef NT_WGMMA", "NT_WGMMA_FENCE();", f"nt_wgmma_{spelled}<NT_WGMMA_N(",
                         "NT_WGMMA_COMMIT();", "nt_wgmma_desc_k(", "nt_wgmma_at(", "NT_ASYNC_PROXY_FENCE();",
                         "nt_ldmatrix_x4("):
            assert spelling in body, spelling
        # a is k-major; b n-major as it is staged (rows of k), or k-major where it is trans(x).
        assert ("nt_wgmma_desc_mn(" in body) == n_major and body.count("nt_wgmma_desc_k(") == (1 if n_major else 2)
        assert "wgmma" not in make(DTYPES[dtype][0]).source.lower()  # OpenCL: none of it


@needs_nvrtc
@pytest.mark.parametrize("transposed", (False, True))
@pytest.mark.parametrize("blocks", WARPGROUP_BLOCKS)
def test_warpgroup_blocks_build_with_nvrtc(transposed, blocks):
    bm, bn, bk, warps = blocks
    dtype = "bfloat16" if blocks == WARPGROUP_BLOCKS[0] else "float16"  # the macros differ only in their type
    kernel = (make_matmul_nt if transposed else make_matmul)(DTYPES[dtype][0])
    options = f"-DBM={bm} -DBN={bn} -DBK={bk} -DNT_WORK_ITEMS={32 * warps} -DNT_STAGES=2 -DNT_MMA_LAYOUT -DNT_MMA_SYNC"
    assert len(_core.compile_cuda(kernel.cuda_source, options, "sm_90a")) > 0


@pytest.mark.host_tensors
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_transposed_operand_on_host_tensors(dtype):
    """dot(a[k], trans(b[k])) with b of (N, K) gives a @ b.T wherever it runs (here the kernel
    test_warpgroup_mma_on_cuda runs transposed, on the host's device): partial blocks in m, n, k."""
    m, k, n = 300, 200, 260
    a, b = torch.randn(m, k).to(DTYPES[dtype][1]), torch.randn(n, k).to(DTYPES[dtype][1])
    c = torch.full((m, n), float("nan"))
    make_matmul_nt(DTYPES[dtype][0])(a, b, c, BM=64, BN=64, BK=32)
    torch.testing.assert_close(c, (a.double() @ b.double().t()).float(), rtol=1e-4, atol=1e-4)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ("contiguous", "misaligned"))
@pytest.mark.parametrize("transposed", (False, True))
@pytest.mark.parametrize("blocks", WARPGROUP_BLOCKS)
def test_warpgroup_mma_on_cuda(dtype, layout, transposed, blocks):
    """Partial blocks in m, n and k (k = 200: the last block of k is half masked), on wgmma where
    the device is a Hopper GPU (elsewhere on mma.sync): every element against float64."""
    bm, bn, bk, warps = blocks
    m, k, n = 300, 200, 260
    a, b = operands(m, k, n, DTYPES[dtype][1], layout)
    if transposed:
        b = b.t().contiguous() if layout == "contiguous" else torch.randn(n, k + 1, device="cuda")[:, 1:].to(b.dtype)
    kernel = (make_matmul_nt if transposed else make_matmul)(DTYPES[dtype][0], num_warps=warps, num_stages=3)
    c = torch.full((m, n), float("nan"), device="cuda")
    kernel(a, b, c, BM=bm, BN=bn, BK=bk)
    expected = (a.double() @ (b.double().t() if transposed else b.double())).float()
    torch.testing.assert_close(c, expected, rtol=1e-4, atol=1e-4)


# (dtype, head dim, (BLOCK_M, BLOCK_N, warps)): one and two warpgroups, one and two 64-row strips a
# warpgroup, both types and head dims (each case builds twice, causal and not, for some 25 s a build).
WARPGROUP_ATTENTION = (("float16", 64, (64, 32, 4)), ("float16", 64, (128, 64, 4)), ("float16", 64, (128, 64, 8)),
                       ("float16", 128, (64, 128, 4)), ("bfloat16", 64, (128, 64, 4)), ("bfloat16", 128, (64, 64, 4)))


@cuda
@pytest.mark.parametrize("dtype, head_dim, blocks", WARPGROUP_ATTENTION)
def test_attention_on_warpgroups_on_cuda(dtype, head_dim, blocks):
    """Flash attention whose dots read a from registers on wgmma (on a Hopper GPU; mma.sync
    elsewhere): one or two warpgroups, one or two 64-row strips a warpgroup, partial blocks of
    queries and keys (200 of each), causal and not; every element against float64 computed from
    the kernel's own rounding of the scaled q (exp2's units)."""
    from test_kernels_attention import _head_tensor, application, arrangement

    bm, bn, warps = blocks
    torch_dtype = DTYPES[dtype][1]
    kernel = ninetoothed.make(arrangement, application, (_head_tensor(), _head_tensor(), _head_tensor(), Tensor(0),
                                                         Tensor(0, constexpr=True), _head_tensor()), num_warps=warps)
    q, k, v = (torch.randn(1, 2, 200, head_dim, device="cuda").to(torch_dtype) for _ in range(3))
    scale = head_dim**-0.5
    scaled = (q * (scale * 1.44269504089)).to(torch_dtype).double()
    for is_causal in (False, True):
        o = torch.full_like(q, float("nan"))
        kernel(q, k, v, scale, is_causal, o, BLOCK_M=bm, BLOCK_N=bn)
        scores = scaled @ k.double().transpose(-1, -2)
        if is_causal:
            scores = scores.masked_fill(torch.ones(200, 200, dtype=torch.bool, device="cuda").tril().logical_not(),
                                        float("-inf"))
        p = torch.exp2(scores - scores.amax(-1, keepdim=True))
        expected = (p @ v.double()) / p.sum(-1, keepdim=True)
        # p is rounded to the 16-bit type for its dot: bfloat16's 8 bits give the larger error.
        tolerance = 3e-3 if dtype == "float16" else 2e-2
        torch.testing.assert_close(o.double(), expected, rtol=tolerance, atol=tolerance)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stages", (1, 2, 4))
def test_wgmma_groups_running_on_at_every_number_of_stages(dtype, stages):
    """Two warpgroups (NT_WGMMA_DEFER on Hopper): each iteration's wgmma group runs on into the
    next, over NT_STAGES + 1 buffers: one stage (the copy is the iteration's own), two, and more
    than the loop has iterations in its partial last block (k = 200, BK 64)."""
    m, k, n = 300, 200, 260
    a, b = operands(m, k, n, DTYPES[dtype][1], "contiguous")
    kernel = make_matmul(DTYPES[dtype][0], num_warps=8, num_stages=stages)
    c = torch.full((m, n), float("nan"), device="cuda")
    kernel(a, b, c, BM=128, BN=128, BK=64)
    torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_dots_whose_operands_the_iteration_stages_on_eight_warps(dtype):
    from test_cuda_source import in_place_application, square_arrangement

    tensors = (Tensor(2, dtype=ninetoothed.float32), Tensor(2, dtype=DTYPES[dtype][0]), Tensor(2, dtype=ninetoothed.float32))
    kernel = ninetoothed.make(square_arrangement, in_place_application, tensors, num_warps=8, num_stages=3)
    m, n, steps = 200, 128, 3
    a = torch.randn(m, n, device="cuda")
    w = (torch.randn(steps * n, n, device="cuda") / n).to(DTYPES[dtype][1])
    c = torch.full((m, n), float("nan"), device="cuda")
    kernel(a, w, c, BM=128, BN=128)
    x = a.double()
    for k in range(steps):
        x = x + x.to(DTYPES[dtype][1]).double() @ w[k * n:(k + 1) * n].double()
    # (x rounded to bfloat16 at each step: a value at a rounding boundary may round the other way in
    # float than in double, one bfloat16 step, 1/128 of it)
    tolerance = 1e-3 if dtype == "float16" else 4e-3
    torch.testing.assert_close(c, x.float(), rtol=tolerance, atol=tolerance)


def twice_application(a, b, c):
    """Two k loops in a row in one program: the second's first copies go to buffers the first's
    last wgmma groups read."""
    first = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        first += ntl.dot(a[k], b[k])
    second = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        second += ntl.dot(a[k], b[k])
    c = first + 2 * second  # noqa: F841


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_k_loops_one_after_another_share_their_buffers_safely(dtype):
    m, k, n = 260, 330, 200
    a, b = operands(m, k, n, DTYPES[dtype][1], "contiguous")
    tensors = (Tensor(2, dtype=DTYPES[dtype][0]), Tensor(2, dtype=DTYPES[dtype][0]), Tensor(2, dtype=ninetoothed.float32))
    kernel = ninetoothed.make(matmul_arrangement, twice_application, tensors, num_warps=8, num_stages=3)
    c = torch.full((m, n), float("nan"), device="cuda")
    kernel(a, b, c, BM=128, BN=64, BK=64)
    torch.testing.assert_close(c, 3 * (a.double() @ b.double()).float(), rtol=1e-4, atol=1e-4)


BM, BN, BK = (ninetoothed.Symbol(name, constexpr=True) for name in ("BM", "BN", "BK"))


def gated_arrangement(x, w1, w3, c):
    c_tiled = c.tile((BM, BN))
    x_tiled = x.tile((BM, BK)).tile((1, -1)).expand((-1, c_tiled.shape[1]))
    x_tiled.dtype = x_tiled.dtype.squeeze(0)
    w_tiled = []
    for w in (w1, w3):
        tiled = w.tile((BK, BN)).tile((-1, 1)).expand((c_tiled.shape[0], -1))
        tiled.dtype = tiled.dtype.squeeze(1)
        w_tiled.append(tiled)
    return x_tiled, w_tiled[0], w_tiled[1], c_tiled


def gated_application(x, w1, w3, c):
    """A gated MLP's two products of one block of x: x[k] is held once (a Let read by two dots)."""
    gate = ntl.zeros(c.shape, dtype=ntl.float32)
    up = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(x.shape[0]):
        xk = x[k]
        gate += ntl.dot(xk, w1[k])
        up += ntl.dot(xk, w3[k])
    c = gate * up  # noqa: F841


def make_gated(dtype, **keywords):
    tensors = tuple(Tensor(2, dtype=dtype) for _ in range(3)) + (Tensor(2, dtype=ninetoothed.float32),)
    return ninetoothed.make(gated_arrangement, gated_application, tensors, **keywords)


def test_an_operand_held_elsewhere_is_read_where_the_others_layout_puts_them():
    """x[k], held for two dots, is not staged in wgmma's atoms, so these dots stay on mma.sync; their
    b operands, staged in the atoms all the same, are read by ldmatrix where the swizzle put them."""
    body = make_gated(ninetoothed.float16).cuda_source
    body = body[body.index("__global__"):]
    reads = [line for line in body.splitlines() if "nt_ldmatrix_x4_trans(" in line]
    assert reads and all("nt_wgmma_at(" in line for line in reads)
    assert "NT_WGMMA_FENCE" not in body


@needs_nvrtc
def test_an_operand_held_elsewhere_builds_with_nvrtc():
    options = "-DBM=128 -DBN=128 -DBK=64 -DNT_WORK_ITEMS=128 -DNT_STAGES=3 -DNT_MMA_LAYOUT -DNT_MMA_SYNC"
    assert len(_core.compile_cuda(make_gated(ninetoothed.float16).cuda_source, options, "sm_90a")) > 0


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_operand_held_elsewhere_on_cuda(dtype):
    m, k, n = 300, 200, 260
    x = torch.randn(m, k, device="cuda").to(DTYPES[dtype][1])
    w1, w3 = (torch.randn(k, n, device="cuda").to(DTYPES[dtype][1]) for _ in range(2))
    c = torch.full((m, n), float("nan"), device="cuda")
    make_gated(DTYPES[dtype][0], num_warps=4, num_stages=3)(x, w1, w3, c, BM=128, BN=128, BK=64)
    expected = ((x.double() @ w1.double()) * (x.double() @ w3.double())).float()
    torch.testing.assert_close(c, expected, rtol=1e-4, atol=1e-3)


# --- float32 operands: Triton's input_precision ------------------------------------------------


def matmul_tf32(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k], input_precision="tf32")
    c = accumulator  # noqa: F841


def matmul_tf32x3(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k], input_precision="tf32x3")
    c = accumulator  # noqa: F841


def matmul_ieee(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k], input_precision="ieee")
    c = accumulator  # noqa: F841


def matmul_allow_tf32_false(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k], allow_tf32=False)
    c = accumulator  # noqa: F841


def matmul_unknown_precision(a, b, c):
    accumulator = ntl.zeros(c.shape, dtype=ntl.float32)
    for k in range(a.shape[0]):
        accumulator += ntl.dot(a[k], b[k], input_precision="fp8")
    c = accumulator  # noqa: F841


PRECISIONS = {"tf32": matmul_tf32, "tf32x3": matmul_tf32x3, "ieee": matmul_ieee, "default": matmul_application,
              "allow_tf32=False": matmul_allow_tf32_false}


def make_f32(application):
    return ninetoothed.make(matmul_arrangement, application, tuple(Tensor(2, dtype=ninetoothed.float32) for _ in range(3)))


def tf32(x):
    """x rounded to TF32 as cvt.rna does: to the nearest of 10 mantissa bits, ties away from zero."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def test_input_precision_is_in_the_ir():
    for name, expected in (("tf32", 'input_precision="tf32"'), ("tf32x3", 'input_precision="tf32x3"')):
        kernel = make_f32(PRECISIONS[name])
        assert expected in kernel.ir
        assert "NT_MMA_M16N8K8_tf32" in kernel.cuda_source
    assert "input_precision" not in make_f32(matmul_ieee).ir
    assert "input_precision" not in make_f32(matmul_allow_tf32_false).ir
    # float16 operands ignore it.
    assert "input_precision" not in make_matmul(ninetoothed.float16).ir


def test_unknown_input_precision_is_a_clear_error():
    with pytest.raises(ValueError, match=r"input_precision must be one of .*\'fp8\'"):
        make_f32(matmul_unknown_precision).ir  # noqa: B018 - the trace raises


def test_the_default_follows_triton_f32_default(monkeypatch):
    monkeypatch.delenv("TRITON_F32_DEFAULT", raising=False)
    assert 'input_precision="tf32"' in make_f32(matmul_application).ir
    monkeypatch.setenv("TRITON_F32_DEFAULT", "tf32x3")
    assert 'input_precision="tf32x3"' in make_f32(matmul_application).ir
    monkeypatch.setenv("TRITON_F32_DEFAULT", "ieee")
    assert "input_precision" not in make_f32(matmul_application).ir


@needs_nvrtc
@pytest.mark.parametrize("precision", ("tf32", "tf32x3"))
@pytest.mark.parametrize("stages", (1, 3))
def test_tf32_builds_with_nvrtc(precision, stages):
    kernel = make_f32(PRECISIONS[precision])
    options = (f"-DBM=128 -DBN=128 -DBK=32 -DNT_WORK_ITEMS=256 -DNT_STAGES={stages} "
               "-DNT_MMA_LAYOUT -DNT_MMA_SYNC")
    assert len(_core.compile_cuda(kernel.cuda_source, options, "sm_80")) > 0


@pytest.mark.host_tensors
@pytest.mark.parametrize("precision", ("tf32", "tf32x3"))
def test_devices_without_tensor_cores_multiply_in_float(precision):
    if _core.tensor_cores():
        pytest.skip("this OpenCL device has tensor cores")
    a, b = torch.randn(70, 40), torch.randn(40, 50)
    asked, exact = torch.full((70, 50), float("nan")), torch.full((70, 50), float("nan"))
    make_f32(PRECISIONS[precision])(a, b, asked, BM=32, BN=32, BK=16)
    make_f32(matmul_ieee)(a, b, exact, BM=32, BN=32, BK=16)
    assert torch.equal(asked, exact)


def tf32_devices():
    devices = []
    if torch.cuda.is_available() and _core.cuda_available():
        devices.append("cuda")
    if _core.tensor_cores():
        devices.append("opencl")  # host tensors on an OpenCL GPU with tensor cores (NVIDIA's)
    return devices


@pytest.mark.parametrize("device", tf32_devices())
@pytest.mark.parametrize("shape", ((256, 128, 192), (300, 200, 130), (48, 24, 40)))
def test_tf32_precisions(device, shape, monkeypatch):
    m, k, n = shape
    torch_device = "cuda" if device == "cuda" else "cpu"
    a, b = torch.randn(m, k, device=torch_device), torch.randn(k, n, device=torch_device)
    results = {}
    for name, application in PRECISIONS.items():
        monkeypatch.delenv("TRITON_F32_DEFAULT", raising=False)  # "default" is Triton's: TF32
        c = torch.full((m, n), float("nan"), device=torch_device)
        make_f32(application)(a, b, c, BM=64, BN=64, BK=32)
        results[name] = c.cpu().double()
    exact = a.cpu().double() @ b.cpu().double()
    # TF32: the exact products of the rounded operands, summed in float.
    rounded = tf32(a.cpu()).double() @ tf32(b.cpu()).double()
    torch.testing.assert_close(results["tf32"], rounded, rtol=1e-5, atol=1e-4)
    assert (results["tf32"] - exact).abs().max() > 1e-4  # not float products
    # tf32x3 and float: float32's precision.
    for name in ("tf32x3", "ieee", "allow_tf32=False"):
        torch.testing.assert_close(results[name], exact, rtol=1e-5, atol=1e-4)
    assert (results["tf32x3"] - exact).abs().max() < (results["tf32"] - exact).abs().max() / 20
    assert torch.equal(results["default"], results["tf32"])


@pytest.mark.parametrize("device", tf32_devices())
@pytest.mark.parametrize("precision", ("tf32", "tf32x3"))
def test_tf32_keeps_infinities(device, precision, monkeypatch):
    # An infinite operand (or one TF32 rounds up to infinity) gives what float products give, not NaN.
    torch_device = "cuda" if device == "cuda" else "cpu"
    a, b = torch.randn(64, 32, device=torch_device), torch.rand(32, 64, device=torch_device) + 0.5
    a[3, 5], a[7, 0] = float("inf"), -float("inf")
    a[9, 9] = 3.4028e38  # rounds up to infinity in TF32 (ties away)
    results = {}
    for name in (precision, "ieee"):
        c = torch.full((64, 64), 0.0, device=torch_device)
        make_f32(PRECISIONS[name])(a, b, c, BM=64, BN=64, BK=32)
        results[name] = c.cpu()
    for row in (3, 7):
        assert torch.equal(results[precision][row], results["ieee"][row])  # all +inf, all -inf
    assert not results[precision].isnan().any()


@cuda
@pytest.mark.parametrize("stages", (1, 2, 3))
def test_tf32_matmul_pipelined_on_cuda(stages):
    kernel = ninetoothed.make(matmul_arrangement, matmul_tf32, tuple(Tensor(2, dtype=ninetoothed.float32) for _ in range(3)),
                              num_stages=stages)
    a, b = torch.randn(1000, 520, device="cuda"), torch.randn(520, 770, device="cuda")[:, 1:]  # b misaligned
    c = torch.full((1000, 769), float("nan"), device="cuda")
    kernel(a, b, c, BM=128, BN=64, BK=32)
    rounded = tf32(a.cpu()).double() @ tf32(b.cpu()).double()
    torch.testing.assert_close(c.cpu().double(), rounded, rtol=1e-5, atol=1e-4)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
