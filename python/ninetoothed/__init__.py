"""NineToothed: a tensor-oriented kernel DSL compiled to OpenCL C.

The names here mirror upstream NineToothed's documented API. `Symbol` and
`Tensor` live in the C++ core (`ninetoothed._core`).
"""

from ninetoothed import _copying  # noqa: F401 - copy and pickle support for Tensor
from ninetoothed._core import DType, Symbol, Tensor, block_size, eval, subs
from ninetoothed._core import current_device, list_devices, select_device
from ninetoothed._make import jit, make
from ninetoothed.build import build
from ninetoothed import naming  # noqa: F401 - an attribute after `import ninetoothed`, as upstream

bfloat16 = DType.bfloat16
float16 = DType.float16
float32 = DType.float32
float64 = DType.float64
int8 = DType.int8
int16 = DType.int16
int32 = DType.int32
int64 = DType.int64
uint8 = DType.uint8
uint16 = DType.uint16
uint32 = DType.uint32
uint64 = DType.uint64
float8_e5m2 = DType.float8_e5m2
float8_e4m3fn = DType.float8_e4m3fn

__all__ = [
    "Symbol",
    "Tensor",
    "make",
    "jit",
    "build",
    "current_device",
    "list_devices",
    "select_device",
    "block_size",
    "eval",
    "subs",
    "bfloat16",
    "float8_e5m2",
    "float8_e4m3fn",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
