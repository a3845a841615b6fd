"""The tutorial's symbolic examples ("The Basics"), run end to end.

Prints symbols and the shapes of symbolic tensors, then evaluates the
tutorial's arrangements (the 4x8 tiling and the matmul arrangement) into
source offsets, so each block's elements can be read off.
"""

import time

import ninetoothed
from ninetoothed import Symbol, Tensor


def symbols_and_tiles():
    BLOCK_SIZE_M = Symbol("BLOCK_SIZE_M")
    BLOCK_SIZE_N = Symbol("BLOCK_SIZE_N")
    print("BLOCK_SIZE_M * BLOCK_SIZE_N =", BLOCK_SIZE_M * BLOCK_SIZE_N)

    x = Tensor(2)
    print("x.shape =", x.shape)
    x_tiled = x.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))
    print("x_tiled.shape =", x_tiled.shape)
    print("x_tiled.dtype.shape =", x_tiled.dtype.shape)

    x = Tensor(shape=(4, 8))
    x_tiled = x.tile((2, 2))
    print("4x8 tiled by 2x2: outer", x_tiled.shape, "inner", x_tiled.dtype.shape)
    print("source offsets of block (1, 3):")
    print(x_tiled.eval()[1, 3])


def matmul_arrangement():
    BLOCK_SIZE_M = ninetoothed.block_size()
    BLOCK_SIZE_N = ninetoothed.block_size()
    BLOCK_SIZE_K = ninetoothed.block_size()

    def arrangement(input, other, output):
        output_arranged = output.tile((BLOCK_SIZE_M, BLOCK_SIZE_N))

        input_arranged = input.tile((BLOCK_SIZE_M, BLOCK_SIZE_K))
        input_arranged = input_arranged.tile((1, -1))
        input_arranged = input_arranged.expand((-1, output_arranged.shape[1]))
        input_arranged.dtype = input_arranged.dtype.squeeze(0)

        other_arranged = other.tile((BLOCK_SIZE_K, BLOCK_SIZE_N))
        other_arranged = other_arranged.tile((-1, 1))
        other_arranged = other_arranged.expand((output_arranged.shape[0], -1))
        other_arranged.dtype = other_arranged.dtype.squeeze(1)

        return input_arranged, other_arranged, output_arranged

    input, other, output = Tensor(2), Tensor(2), Tensor(2)
    arranged = arrangement(input, other, output)
    sizes = {BLOCK_SIZE_M: 2, BLOCK_SIZE_N: 2, BLOCK_SIZE_K: 2}
    subs = {input: {"shape": (5, 3)}, other: {"shape": (3, 4)}, output: {"shape": (5, 4)}, **sizes}
    names = ("input", "other", "output")
    for name, tensor in zip(names, arranged):
        offsets = tensor.eval(subs)
        print(f"matmul {name}: levels {offsets.shape}, program (2, 1) reads")
        print(offsets[2, 1])


def eval_speed():
    x = Tensor(2)
    x_tiled = x.tile((Symbol("B0"), Symbol("B1"))).tile((1, -1))
    subs = {x: {"shape": (1000, 1000)}, Symbol("B0"): 16, Symbol("B1"): 16}
    start = time.perf_counter()
    offsets = x_tiled.eval(subs)
    elapsed = time.perf_counter() - start
    print(f"eval of a {offsets.size}-element index map: {elapsed * 1e3:.1f} ms")


if __name__ == "__main__":
    symbols_and_tiles()
    matmul_arrangement()
    eval_speed()
