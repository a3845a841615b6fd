"""GUARD PAGES: every tensor of masked kernels lies right after, then right before, an
inaccessible page; a read or write past its ends kills the process. Prints 'ok <case>' per case
checked against torch, and exits with status 1 on a wrong result."""

import ctypes
import mmap
import sys

import numpy as np
import torch
import torch.nn.functional as F

from stress_kernels import add_one, conv2d_padded, matmul_kernel, softmax_kernel

PAGE = mmap.PAGESIZE
PROT_NONE = 0
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_keep = []


def guarded(shape, dtype, at_end):
    """A tensor whose first byte follows a guard page, or whose last byte precedes one."""
    item = torch.empty((), dtype=dtype).element_size()
    nbytes = int(np.prod(shape)) * item
    pages = (nbytes + PAGE - 1) // PAGE
    total = (pages + 2) * PAGE
    base = libc.mmap(None, total, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert base not in (None, ctypes.c_void_p(-1).value)
    assert libc.mprotect(base, PAGE, PROT_NONE) == 0
    assert libc.mprotect(base + (pages + 1) * PAGE, PAGE, PROT_NONE) == 0
    start = base + (pages + 1) * PAGE - nbytes if at_end else base + PAGE
    buffer = (ctypes.c_char * nbytes).from_address(start)
    _keep.append(buffer)
    array = np.frombuffer(buffer, dtype=torch.empty((), dtype=dtype).numpy().dtype).reshape(shape)
    return torch.from_numpy(array)


def like(tensor, at_end, fill=None):
    out = guarded(tuple(tensor.shape), tensor.dtype, at_end)
    out.copy_(tensor if fill is None else torch.full_like(tensor, fill))
    return out


def check(name, actual, expected, rtol, atol):
    if not torch.allclose(actual.float(), expected.float(), rtol=rtol, atol=atol):
        print(f"WRONG {name}")
        sys.exit(1)
    print(f"ok {name}")


def main():
    for at_end in (False, True):
        where = "end" if at_end else "start"
        for dtype in (torch.float32, torch.float16):
            x = like(torch.randn(1001).to(dtype), at_end)
            y = like(x, at_end, float("nan"))
            add_one(x, y)
            check(f"add_one {dtype} {where}", y, x.float() + 1, 1e-3, 1e-3)
        x = like(torch.randn(7, 37), at_end)
        y = like(x, at_end, float("nan"))
        softmax_kernel(x, y, BLOCK_SIZE=64)
        check(f"softmax 7x37 {where}", y, torch.softmax(x, 1), 1e-5, 1e-6)
        a, b = like(torch.randn(33, 65), at_end), like(torch.randn(65, 17), at_end)
        c = like(torch.empty(33, 17), at_end, float("nan"))
        matmul_kernel(a, b, c)
        check(f"matmul 33x65@65x17 {where}", c, a @ b, 1e-4, 1e-4)
        image, filter = like(torch.randn(2, 3, 9, 11), at_end), like(torch.randn(4, 3, 3, 3), at_end)
        out = like(torch.empty(2, 4, 9, 11), at_end, float("nan"))
        conv2d_padded(image, filter, out, padding_h=1, padding_w=1)
        check(f"conv2d padding 1 {where}", out, F.conv2d(image, filter, padding=1), 1e-4, 1e-4)


if __name__ == "__main__":
    main()
