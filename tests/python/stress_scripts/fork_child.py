"""FORK: launches in the parent, then in a forked child (os.fork and multiprocessing's fork,
spawn and forkserver). Prints one line per case: what the child did."""

import multiprocessing
import os
import sys

import torch

from stress_kernels import add_one


def launch_and_report(queue=None):
    x = torch.randn(333)
    y = torch.full((333,), float("nan"))
    try:
        add_one(x, y)
        result = "ran " + ("exact" if torch.equal(y, x + 1) else "WRONG")
    except RuntimeError as error:
        result = "RuntimeError: " + str(error)
    if queue is None:
        return result
    queue.put(result)


def main():
    x = torch.randn(10)
    y = torch.empty(10)
    add_one(x, y)  # the parent has started OpenCL
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, launch_and_report().encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        print("os.fork:", pipe.read())
    os.waitpid(pid, 0)
    for method in ("fork", "spawn", "forkserver"):
        context = multiprocessing.get_context(method)
        queue = context.Queue()
        process = context.Process(target=launch_and_report, args=(queue,))
        process.start()
        print(f"{method}:", queue.get(timeout=120))
        process.join(60)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
