"""THREADS LAUNCHES: threads each launch two element-wise kernels on their own tensors; prints 'ok'.

Most launches are small (they run on PoCL's single-threaded companion device); every tenth is big
enough for the pthread device, so both devices' queues are used from every thread.

Every result is checked exactly; any exception or wrong element is reported and the exit status
is 1. Run with an empty NINETOOTHED_CACHE_DIR for a cold cache (tuning and builds race too).
"""

import sys
import threading

import torch

from stress_kernels import add_one, double


def main(num_threads, launches):
    failures = []

    def work(t):
        try:
            for i in range(launches):
                n = 1000 + 7 * t + i % 5 if i % 10 else 100_003 + t
                x = torch.randn(n)
                y, z = torch.full((n,), float("nan")), torch.full((n,), float("nan"))
                add_one(x, y)
                double(x, z)
                if not (torch.equal(y, x + 1) and torch.equal(z, x * 2)):
                    failures.append(f"thread {t} launch {i}: wrong result")
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(f"thread {t}: {error!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(num_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        print("\n".join(failures[:10]))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
