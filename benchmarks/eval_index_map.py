"""Benchmark: evaluating index maps of about a million elements.

Compares `Tensor.eval` with numpy computing the same offsets by hand
(broadcast arithmetic over index grids), in one process. Prints a table of
times and the ratio ours / numpy.
"""

import time

import numpy as np

from ninetoothed import Symbol, Tensor


def best_of(function, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def numpy_tile_of_tile(m, n, bm, bn):
    """Offsets of x.tile((bm, bn)).tile((1, -1)) for a C-contiguous m x n source."""
    pm, pn = -(-m // bm), -(-n // bn)
    o0 = np.arange(pm).reshape(pm, 1, 1, 1, 1, 1)
    j1 = np.arange(pn).reshape(1, 1, 1, pn, 1, 1)
    t0 = np.arange(bm).reshape(1, 1, 1, 1, bm, 1)
    t1 = np.arange(bn).reshape(1, 1, 1, 1, 1, bn)
    row = o0 * bm + t0
    col = j1 * bn + t1
    offsets = np.where((row < m) & (col < n), row * n + col, -1)
    return np.broadcast_to(offsets, (pm, 1, 1, pn, bm, bn))


def numpy_conv_input(n, c, h, w, r, s):
    """Offsets of the implicit-GEMM input arrangement (N*P*Q, C*R*S)."""
    p, q = h - r + 1, w - s + 1
    ni = np.arange(n).reshape(n, 1, 1, 1, 1, 1)
    pi = np.arange(p).reshape(1, p, 1, 1, 1, 1)
    qi = np.arange(q).reshape(1, 1, q, 1, 1, 1)
    ci = np.arange(c).reshape(1, 1, 1, c, 1, 1)
    ri = np.arange(r).reshape(1, 1, 1, 1, r, 1)
    si = np.arange(s).reshape(1, 1, 1, 1, 1, s)
    offsets = ((ni * c + ci) * h + pi + ri) * w + qi + si
    return offsets.reshape(n * p * q, c * r * s)


def main():
    rows = []

    x = Tensor(2)
    bm, bn = Symbol("BM"), Symbol("BN")
    arranged = x.tile((bm, bn)).tile((1, -1))
    subs = {x: {"shape": (1000, 1000)}, bm: 16, bn: 16}
    ours, result = best_of(lambda: arranged.eval(subs))
    theirs, expected = best_of(lambda: np.ascontiguousarray(numpy_tile_of_tile(1000, 1000, 16, 16)))
    assert np.array_equal(result, expected)
    rows.append(("tile of tile, 1000x1000 (16x16 blocks)", result.size, ours, theirs))

    image = Tensor(4)
    tiled = image.tile((1, -1, 3, 3), strides=(-1, -1, 1, 1)).squeeze(1)
    tiled.dtype = tiled.dtype.squeeze(0)
    arranged = tiled.ravel().flatten(end_dim=3).flatten(start_dim=1)
    subs = {image: {"shape": (4, 16, 34, 34)}}
    ours, result = best_of(lambda: arranged.eval(subs))
    theirs, expected = best_of(lambda: np.ascontiguousarray(numpy_conv_input(4, 16, 34, 34, 3, 3)))
    assert np.array_equal(result, expected)
    rows.append(("conv2d implicit-GEMM input, 4x16x34x34, 3x3", result.size, ours, theirs))

    print(f"{'index map':48} {'elements':>9} {'ours ms':>9} {'numpy ms':>9} {'ours/numpy':>10}")
    for name, elements, ours, theirs in rows:
        print(f"{name:48} {elements:>9} {ours * 1e3:>9.1f} {theirs * 1e3:>9.1f} {ours / theirs:>10.2f}")


if __name__ == "__main__":
    main()
