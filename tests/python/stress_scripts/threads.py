"""THREADS LAUNCHES: threads each launch two element-wise kernels on their own tensors; prints 'ok'.

Most launches are small (they run on PoCL's single-threaded companion device); every tenth is big
enough for the pthread device, so both devices' queues are used from every thread.

Every result is checked exactly; any exception or wrong element is reported and the exit status
is 1. Run with an empty NINETOOTHED_CACHE_DIR for a cold cache (tuning and builds race too).
"""

import sys

import torch

from stress_kernels import add_one, double, finish, run_in_threads


def main(num_threads, launches):
    failures = []

    def work(t):
        for i in range(launches):
            n = 1000 + 7 * t + i % 5 if i % 10 else 100_003 + t
            x = torch.randn(n)
            y, z = torch.full((n,), float("nan")), torch.full((n,), float("nan"))
            add_one(x, y)
            double(x, z)
            if not (torch.equal(y, x + 1) and torch.equal(z, x * 2)):
                failures.append(f"thread {t} launch {i}: wrong result")

    run_in_threads(work, num_threads, failures)
    finish(failures)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
