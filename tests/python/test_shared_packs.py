"""Dot operands packed once per launch for the programs that read the same block
(codegen/c/shared_packs.h): a matmul's b is packed by the first program of its column that needs
it, into a slot of the launch's workspace, and read from there by the others. On a CPU device the
programs share; elsewhere, and where a launch gets no workspace, each packs its own."""

import os
import threading

import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor
from ninetoothed._core import current_device, set_workspace_limit_for_testing, workspace_leases
from test_kernels_convolution import BLOCK_SIZE_K, BLOCK_SIZE_M, BLOCK_SIZE_N, matmul_application, matmul_arrangement
from test_kernels_dot import accumulate_int

# The tutorial's matmul (as test_kernels_convolution.py writes it), a kernel of this file's own: pinned here.
matmul = ninetoothed.make(matmul_arrangement, matmul_application, (Tensor(2), Tensor(2), Tensor(2)))

# Each program's rows of x times one weight every program reads whole.
BLOCK_SIZE = ninetoothed.block_size()


def project_arrangement(x, w, output):
    x_arranged = x.tile((BLOCK_SIZE, -1))
    return x_arranged, w.tile((-1, -1)).expand((x_arranged.shape[0], -1)), output.tile((BLOCK_SIZE, -1))


def project_application(x, w, output):
    output = ntl.dot(x, w)  # noqa: F841


project = ninetoothed.make(
    project_arrangement,
    project_application,
    tuple(Tensor(2, shape_options={"constexpr": True}) for _ in range(3)),
)

# Where launches share: work-item programs on a CPU device, over host tensors.
on_cpu = (
    current_device()["is_cpu"]
    and os.environ.get("NINETOOTHED_TEST_DEVICE") != "cuda"
    and os.environ.get("NINETOOTHED_PROGRAM_LAYOUT") != "work-group"
)


def pin(m, n, k):
    matmul.pin({BLOCK_SIZE_M.name: m, BLOCK_SIZE_N.name: n, BLOCK_SIZE_K.name: k})


def check_matmul(a, b, dtype):
    c = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=dtype)
    matmul(a, b, c)
    expected = a.double() @ b.double()
    tolerance = 1e-4 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(c.double(), expected, rtol=tolerance, atol=tolerance * a.shape[1] ** 0.5)


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
@pytest.mark.parametrize("m, k, n, blocks", ((150, 100, 97, (32, 32, 32)), (129, 65, 97, (64, 32, 32)), (128, 128, 64, (32, 32, 64))))
def test_programs_that_share_blocks_compute_every_element(dtype, m, k, n, blocks):
    pin(*blocks)
    leases = workspace_leases()
    for _ in range(3):  # launch after launch on one workspace: older launches' flags are no claims
        a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
        check_matmul(a, b, dtype)
    if on_cpu:
        assert workspace_leases() >= leases + 3
        assert matmul.source.count("= nt_claim_slot(") == 2  # a and b, each shared along one digit


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16))
def test_a_transposed_operand_is_packed_by_transposes_into_the_slot(dtype):
    pin(32, 32, 32)
    leases = workspace_leases()
    a, w = torch.randn(100, 96).to(dtype), torch.randn(80, 96).to(dtype)
    check_matmul(a, w.t(), dtype)
    if on_cpu:
        assert workspace_leases() == leases + 1
        assert matmul.source.count("= nt_claim_slot(") == 2


def test_without_a_workspace_every_program_packs_its_own():
    pin(32, 32, 32)
    set_workspace_limit_for_testing(0)
    try:
        leases = workspace_leases()
        a, b = torch.randn(150, 100), torch.randn(100, 97)
        check_matmul(a, b, torch.float32)
        assert workspace_leases() == leases
    finally:
        set_workspace_limit_for_testing(1 << 30)


def test_an_operand_every_program_reads_whole_is_packed_once():
    x, w = torch.randn(137, 40), torch.randn(40, 40)
    output = torch.full((137, 40), float("nan"))
    project.pin({BLOCK_SIZE.name: 32})
    project(x, w, output)
    torch.testing.assert_close(output.double(), x.double() @ w.double(), rtol=1e-5, atol=1e-5)
    # w's block is every program's; x's, each program's own.
    assert project.source.count("= nt_claim_slot(") == 1


def test_threads_launching_at_once_each_get_their_own_results():
    pin(32, 32, 32)
    errors = []

    def run(seed):
        generator = torch.Generator().manual_seed(seed)
        try:
            for _ in range(3):
                a = torch.randn(140, 70, generator=generator)
                b = torch.randn(70, 100, generator=generator)
                check_matmul(a, b, torch.float32)
        except Exception as error:  # noqa: BLE001 (reported below, with the others)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@pytest.mark.parametrize("vector_bytes", (64, 4))
def test_the_source_builds_for_devices_whose_programs_pack_their_own(vector_bytes):
    """A GPU's OpenCL (no NT_CPU) compiles the same source's other branch: each program's private
    array, and no workspace read (NVIDIA's OpenCL runs TF32 dots' programs on one work-item)."""
    from ninetoothed._core import build_opencl

    pin(32, 32, 32)
    check_matmul(torch.randn(70, 40), torch.randn(40, 50), torch.float32)
    sizes = " ".join(f"-D{symbol.name}=32" for symbol in (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K))
    build_opencl(matmul.source, f"{sizes} -DNT_VECTOR_BYTES={vector_bytes}")


def test_a_grid_of_one_column_packs_privately():
    """b's blocks have as many readers as rows of programs, a's as columns: with one column of
    blocks, a's are packed by their one reader alone (no slot written), b's still shared."""
    pin(32, 128, 32)
    leases = workspace_leases()
    a, b = torch.randn(150, 70), torch.randn(70, 100)
    check_matmul(a, b, torch.float32)
    if on_cpu:
        assert workspace_leases() == leases + 1
        a_claim = matmul.source.split("= nt_claim_slot(")[1].split(";")[0]
        assert BLOCK_SIZE_N.name in a_claim  # shared only where the columns of blocks are more than one


integer_matmul = ninetoothed.make(
    matmul_arrangement, accumulate_int, tuple(Tensor(2, dtype=ninetoothed.int32) for _ in range(3))
)


def test_what_one_launch_packed_is_never_taken_for_another_launchs_flags():
    """The workspace's layout moves with the shapes; its memory goes from launch to launch and from
    kernel to kernel. Packed integers 1 and 2 are what a flag reads when a block is being packed
    and once it is published: a launch that took them for flags would wait forever, or read a slot
    nobody packed."""
    integer_matmul.pin({BLOCK_SIZE_M.name: 32, BLOCK_SIZE_N.name: 32, BLOCK_SIZE_K.name: 32})
    for m, k, n in ((64, 64, 64), (96, 64, 64), (64, 96, 128), (96, 64, 64)):
        a = torch.randint(0, 3, (m, k), dtype=torch.int32)
        b = torch.randint(0, 3, (k, n), dtype=torch.int32)
        c = torch.full((m, n), -1, dtype=torch.int32)
        integer_matmul(a, b, c)
        assert torch.equal(c, a @ b)
    pin(32, 32, 32)
    check_matmul(torch.randn(96, 64), torch.randn(64, 96), torch.float32)


@pytest.mark.host_tensors  # a hand-built jagged tensor, which NINETOOTHED_TEST_DEVICE=cuda does not move
def test_an_operand_of_a_jagged_tensor_is_each_sequences_own():
    from test_jagged import HandBuiltJagged

    lengths = (20, 13, 32)
    sequences = [torch.randn(n, 16) for n in lengths]
    offsets = torch.tensor((0, *torch.tensor(lengths).cumsum(0).tolist()), dtype=torch.int64)
    jagged = HandBuiltJagged(torch.cat(sequences), offsets, 1)
    w = torch.randn(16, 64)
    output = torch.full((3, max(lengths), 64), float("nan"))
    jagged_dot(jagged, w, output, bm=16, bn=16)
    for b, x in enumerate(sequences):
        torch.testing.assert_close(output[b, : len(x)].double(), x.double() @ w.double(), rtol=1e-5, atol=1e-5)
    assert jagged_dot.source.count("= nt_claim_slot(") == 1  # w's blocks, never the sequences'


BM = Symbol("bm", constexpr=True)
BN = Symbol("bn", constexpr=True)


def jagged_dot_arrangement(j, w, output, bm=BM, bn=BN):
    output_arranged = output.tile((1, bm, bn))
    output_arranged.dtype = output_arranged.dtype.squeeze(0)
    j_arranged = j.tile((1, bm, 16)).expand((-1, -1, output_arranged.shape[2]))
    j_arranged.dtype = j_arranged.dtype.squeeze(0)
    w_arranged = w.tile((16, bn)).unsqueeze(0).expand((output_arranged.shape[0], output_arranged.shape[1], -1))
    return j_arranged, w_arranged, output_arranged


def jagged_dot_application(j, w, output):
    output = ntl.dot(j, w)  # noqa: F841


jagged_dot = ninetoothed.make(
    jagged_dot_arrangement, jagged_dot_application, (Tensor(3, jagged_dim=1, other=0), Tensor(2), Tensor(3))
)


def test_the_cuda_launch_plan_of_a_kernel_with_dots_takes_the_same_arguments():
    """Every form of a kernel with a dot takes the workspace's arguments (CUDA C's unused), so that
    an ahead-of-time library's plan holds both sources."""
    pin(32, 32, 32)
    check_matmul(torch.randn(64, 64), torch.randn(64, 64), torch.float32)
    compiled = matmul._specialize(matmul._default_signature())
    assert compiled.launch_plan(cuda=True)
