"""make()/jit() take upstream NineToothed's keywords with upstream's meanings."""

import pytest
import torch

import ninetoothed
from ninetoothed import Tensor

BLOCK_SIZE = ninetoothed.block_size()


def arrangement(input, output, block_size=BLOCK_SIZE):
    return input.tile((block_size,)), output.tile((block_size,))


def application(input, output):
    output = input * 2 + 1  # noqa: F841


def test_make_keeps_the_upstream_keywords_and_runs():
    kernel = ninetoothed.make(
        arrangement,
        application,
        (Tensor(1), Tensor(1)),
        caller="torch",
        kernel_name="twice_plus_one",
        output_dir=None,
        num_warps=8,
        num_stages=3,
        max_num_configs=2,
    )
    assert (kernel.kernel_name, kernel.num_warps, kernel.num_stages, kernel.max_num_configs) == (
        "twice_plus_one",
        8,
        3,
        2,
    )
    input = torch.randn(1001)
    output = torch.full((1001,), float("nan"))
    kernel(input, output)
    assert torch.equal(output, input * 2 + 1)
    assert "twice_plus_one" in kernel.source
    assert len(kernel.tuning_report()[0]["candidates"]) <= 2


def test_jit_takes_the_same_keywords():
    @ninetoothed.jit(caller="torch", kernel_name="jitted", num_warps=4, num_stages=2, max_num_configs=3)
    def jitted(input: Tensor(1).tile((BLOCK_SIZE,)), output: Tensor(1).tile((BLOCK_SIZE,))):
        output = input - 3  # noqa: F841

    assert (jitted.kernel_name, jitted.num_warps, jitted.num_stages) == ("jitted", 4, 2)
    input = torch.randn(77).half()
    output = torch.full((77,), float("nan")).half()
    jitted(input, output)
    assert torch.equal(output, (input.float() - 3).half())


@pytest.mark.parametrize("caller", ("hip", "triton", ""))
def test_an_ahead_of_time_caller_is_refused_clearly(caller):
    with pytest.raises(NotImplementedError, match="ahead-of-time"):
        ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)), caller=caller)
    with pytest.raises(NotImplementedError, match="ahead-of-time"):
        ninetoothed.jit(caller=caller)


def test_output_dir_belongs_to_ahead_of_time_builds(tmp_path):
    with pytest.raises(ValueError, match="caller='opencl'"):
        ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)), output_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("keyword", ("num_warps", "num_stages", "max_num_configs"))
@pytest.mark.parametrize("value", (0, -4, 2.5, "4", True))
def test_wrong_launch_keywords_are_value_errors(keyword, value):
    with pytest.raises(ValueError, match=keyword):
        ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)), **{keyword: value})
