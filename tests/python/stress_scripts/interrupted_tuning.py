"""INTERRUPT: tunes a kernel with many slow candidates; the parent sends SIGINT meanwhile.
Prints 'tuning' when it starts and 'interrupted' when KeyboardInterrupt arrives."""

import sys
import time

import torch

from stress_kernels import busy

x = torch.randn(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 18)
y = torch.empty_like(x)
print("tuning", flush=True)
start = time.monotonic()
try:
    busy(x, y)
    print("finished", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.2f} s", flush=True)
    sys.exit(3)
