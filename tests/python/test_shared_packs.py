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
from ninetoothed import Tensor
from ninetoothed._core import current_device, set_workspace_limit_for_testing, workspace_leases
from test_kernels_convolution import BLOCK_SIZE_K, BLOCK_SIZE_M, BLOCK_SIZE_N, matmul_application, matmul_arrangement

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
    a, w = torch.randn(100, 96).to(dtype), torch.randn(80, 96).to(dtype)
    check_matmul(a, w.t(), dtype)


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
