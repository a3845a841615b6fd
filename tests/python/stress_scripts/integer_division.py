"""INTEGER DIVISION: integer `//` and `%` in kernels never trap; prints 'ok'.

x86 raises SIGFPE for an integer division by zero and for MIN // -1. A padding element of a partial
block reads its divisor as 0; a user's tensor may hold 0 or -1 anywhere. PoCL's own SIGFPE handler
skips such a division, but only while it is installed: faulthandler (re-)enabled after PoCL starts
replaces it, as here, and the process then died. Elements with divisors other than 0 are checked
exactly against torch (C's truncating division, as upstream's Triton); a zero divisor gives the
dividend (`//`) or 0 (`%`), MIN // -1 wraps to MIN.
"""

import faulthandler
import sys

import torch

import stress_kernels  # noqa: F401 - puts the checkout on sys.path
import ninetoothed
from ninetoothed import Symbol, Tensor

BLOCK = Symbol("BLOCK", constexpr=True)


def arrangement(x, y, quotient, remainder):
    return x.tile((BLOCK,)), y.tile((BLOCK,)), quotient.tile((BLOCK,)), remainder.tile((BLOCK,))


def application(x, y, quotient, remainder):
    quotient = x // y  # noqa: F841
    remainder = x % y  # noqa: F841


divide = ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1), Tensor(1), Tensor(1)))


def main():
    for dtype in (torch.int32, torch.int64, torch.int16):
        smallest = torch.iinfo(dtype).min
        n = 1001  # a partial last block
        x = torch.randint(-1000, 1000, (n,), dtype=dtype)
        y = torch.randint(-20, 21, (n,), dtype=dtype)
        x[:5] = smallest
        y[:5] = -1
        y[5:10] = 0
        quotient = torch.full((n,), 7, dtype=dtype)
        remainder = torch.full((n,), 7, dtype=dtype)
        if dtype == torch.int32:  # PoCL is up: put faulthandler's SIGFPE handler over PoCL's
            divide(x[:1], torch.ones(1, dtype=dtype), quotient[:1], remainder[:1], BLOCK=64)
            faulthandler.disable()
            faulthandler.enable()
        divide(x, y, quotient, remainder, BLOCK=64)
        ordinary = (y != 0) & ~((x == smallest) & (y == -1))
        expected_q = torch.div(x[ordinary], y[ordinary], rounding_mode="trunc")
        assert torch.equal(quotient[ordinary], expected_q), dtype
        assert torch.equal(remainder[ordinary], x[ordinary] - expected_q * y[ordinary]), dtype
        assert torch.equal(quotient[y == 0], x[y == 0]), dtype
        assert torch.equal(remainder[y == 0], torch.zeros_like(x[y == 0])), dtype
        assert torch.equal(quotient[:5], x[:5]) and torch.equal(remainder[:5], torch.zeros(5, dtype=dtype)), dtype
    print("ok")


if __name__ == "__main__":
    sys.exit(main())
