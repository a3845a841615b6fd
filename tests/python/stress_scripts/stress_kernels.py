"""Kernels the stress scripts launch: element-wise, softmax with odd rows, matmul, padded conv2d.

Imported by the scripts beside it (run as subprocesses, so that a crash is a failed test rather
than a dead test runner). The matmul and softmax are the tutorial's, the conv2d the one the
convolution tests use.
"""

import pathlib
import sys
import threading

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
for path in (ROOT / "python", ROOT / "examples", HERE.parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import ninetoothed  # noqa: E402
from ninetoothed import Tensor  # noqa: E402
from test_kernels_convolution import _conv2d_kernel  # noqa: E402
from tutorial_kernels import matmul_kernel, softmax_kernel  # noqa: E402,F401

BLOCK_SIZE = ninetoothed.block_size()


def unary_arrangement(x, y, block_size=BLOCK_SIZE):
    return x.tile((block_size,)), y.tile((block_size,))


def add_one_application(x, y):
    y = x + 1  # noqa: F841


def double_application(x, y):
    y = x * 2  # noqa: F841


def busy_application(x, y):
    # Long enough to watch: many dependent steps per element.
    acc = x
    for _ in range(2000):
        acc = acc * 0.999 + 0.001
    y = acc  # noqa: F841


add_one = ninetoothed.make(unary_arrangement, add_one_application, (Tensor(1), Tensor(1)))
double = ninetoothed.make(unary_arrangement, double_application, (Tensor(1), Tensor(1)))
busy = ninetoothed.make(unary_arrangement, busy_application, (Tensor(1), Tensor(1)))
conv2d_padded = _conv2d_kernel(True)


def run_in_threads(work, num_threads, failures, label=""):
    """Runs work(t) in threads t = 0 .. num_threads - 1 at once; an exception is a failure."""

    def guarded(t):
        try:
            work(t)
        except Exception as error:  # noqa: BLE001 - reported by finish()
            failures.append(f"{label}thread {t}: {error!r}")

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(num_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def finish(failures):
    """Prints the first failures and exits with status 1, or prints 'ok'."""
    if failures:
        print("\n".join(failures[:10]))
        sys.exit(1)
    print("ok")
