"""WIDENING GRIDS: threads launch one kernel at once over grids of many widths; prints 'ok'.

PoCL 3.1 keeps a loaded work-group function per kernel, local size and grid width (a launch takes
the first one at least as wide as its grid), but releases a finished launch's by kernel and local
size alone. When a launch over a wider grid than any before added an entry while a narrower launch
of the same kernel was running, a release dropped the wrong entry and PoCL aborted the process
(`pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0' failed`).

Each round builds a new program (its constant differs), so its grid widths are all new; six
threads then launch it over 1 to 47 programs. Every result is checked exactly; a wrong element or
an exception exits with status 1.
"""

import sys

import torch

from stress_kernels import finish, run_in_threads  # (also puts the checkout on sys.path)
import ninetoothed
from ninetoothed import Symbol, Tensor

BLOCK = Symbol("BLOCK", constexpr=True)
CONSTANT = Symbol("CONSTANT", constexpr=True)


def add_constant_arrangement(x, c, y):
    return x.tile((BLOCK,)), c, y.tile((BLOCK,))


def add_constant_application(x, c, y):
    y = x + c  # noqa: F841


add_constant = ninetoothed.make(
    add_constant_arrangement, add_constant_application, (Tensor(1), Tensor(0, constexpr=True), Tensor(1))
)


def main(rounds):
    failures = []
    for constant in range(rounds):

        def work(seed):
            generator = torch.Generator().manual_seed(seed)
            for i in range(40):
                size = 1 + (seed * 131 + i * 17) % 3000
                x = torch.randn(size, generator=generator)
                y = torch.full((size,), float("nan"))
                add_constant(x, constant, y, BLOCK=64)
                if not torch.equal(y, x + constant):
                    failures.append(f"round {constant}, thread {seed}, launch {i}: wrong result")

        run_in_threads(work, 6, failures, label=f"round {constant}, ")
    finish(failures)


if __name__ == "__main__":
    main(int(sys.argv[1]))
