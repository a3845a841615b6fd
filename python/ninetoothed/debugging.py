"""Debugging arrangements: what each program's blocks read, without a kernel.

``simulate_arrangement`` answers, for every program and every arranged tensor,
which source element each element of the program's blocks reads. It returns
upstream NineToothed's form (``ninetoothed.debugging.simulate_arrangement``),
computed on the CPU with ``Tensor.eval`` instead of by launching a kernel.
"""

import inspect
import math
from dataclasses import dataclass

import numpy as np

from ninetoothed._core import Tensor

__all__ = ["simulate_arrangement"]


def simulate_arrangement(arrangement, tensors, device=None):
    """Simulates the arrangement of ``tensors``.

    :param arrangement: the arrangement, called as ``arrangement(*tensors)``;
        its block sizes must be numbers (bind meta symbols first, e.g. with
        ``functools.partial(arrangement, BLOCK_SIZE=4)``).
    :param tensors: one per parameter of the arrangement, with concrete
        sizes: ``Tensor(shape=(3, 4))``, a ``torch.Tensor`` or a
        ``numpy.ndarray`` (only the shape is used), or a number for a 0-dim
        tensor.
    :param device: where the returned tensors are made (default: the CPU).
    :return: ``(source_tensors, target_tensors)``, two tuples of int64 torch
        tensors in the order of ``tensors``. ``source_tensors[i]`` has the
        shape of ``tensors[i]`` and holds each element's index (its flat
        position in the row-major order). ``target_tensors[i]`` has the shape
        ``(num_programs, *shapes of the levels below the outermost)``: entry
        ``[p, ...]`` is the index of the source element that program ``p``
        reads there, ``-1`` where it reads nothing (masked). A 0-dim tensor
        gives ``tensor(0)`` for both.
    """
    import torch

    if device is None:
        device = "cpu"

    sources = []
    targets = []
    for record in _simulate(arrangement, tensors):
        if record.values is None:
            sources.append(torch.tensor(0, device=device))
            targets.append(torch.tensor(0, device=device))
            continue
        count = math.prod(record.source_shape)
        sources.append(torch.arange(count, dtype=torch.int64, device=device).view(record.source_shape))
        target = record.values.reshape(record.num_programs, *record.values.shape[record.level_ndims[0]:])
        targets.append(torch.from_numpy(np.ascontiguousarray(target, dtype=np.int64)).to(device))
    return tuple(sources), tuple(targets)


@dataclass
class _Simulated:
    """One arranged tensor, evaluated.

    ``values`` has all levels' shapes joined (outermost first; ``None`` for a
    0-dim tensor); ``level_ndims`` the number of dims of each level.
    """

    name: str
    source_shape: tuple
    values: object
    level_ndims: tuple

    @property
    def outer_shape(self):
        return tuple(self.values.shape[: self.level_ndims[0]])

    @property
    def num_programs(self):
        return math.prod(self.outer_shape)


def _simulate(arrangement, tensors):
    """Arranges concrete tensors and evaluates each arranged tensor."""
    if not callable(arrangement):
        raise TypeError(f"the arrangement must be callable, got {type(arrangement).__name__}")
    if isinstance(tensors, (Tensor, str, bytes)) or not hasattr(tensors, "__iter__"):
        raise TypeError(f"tensors must be a tuple or a list of tensors, got {type(tensors).__name__}")
    tensors = tuple(tensors)
    names = _parameter_names(arrangement, len(tensors))
    concrete = tuple(_concrete_tensor(name, tensor) for name, tensor in zip(names, tensors))

    arranged = arrangement(*concrete)
    if not isinstance(arranged, (tuple, list)):
        arranged = (arranged,)
    if len(arranged) != len(concrete):
        raise ValueError(f"the arrangement gives {len(arranged)} tensors for {len(concrete)} arguments")

    records = []
    for name, given, result in zip(names, concrete, arranged):
        if not isinstance(result, Tensor):
            raise TypeError(f"the arrangement must give Tensors, got {type(result).__name__} for '{name}'")
        if given.ndim == 0:
            records.append(_Simulated(name, (), None, (0,)))
            continue
        try:
            values = result.eval()
        except ValueError as error:
            raise ValueError(
                f"cannot simulate '{name}': {error}. Only the sizes of the given tensors are known: "
                "give the arrangement's block sizes and other symbols values first, e.g. "
                "functools.partial(arrangement, BLOCK_SIZE=4)"
            ) from None
        records.append(_Simulated(name, tuple(given.shape), values, _level_ndims(result)))

    _check_programs(records, arranged)
    return records


def _parameter_names(arrangement, count):
    """The arrangement's parameter names for the first ``count`` arguments."""
    try:
        params = list(inspect.signature(arrangement).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(count):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY, params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"tensors[{i}]")
    return names


def _concrete_tensor(name, tensor):
    """A ``Tensor`` with numeric sizes for one argument."""
    if isinstance(tensor, Tensor):
        symbolic = [size for size in tensor.shape if not isinstance(size, int)]
        if symbolic:
            raise ValueError(
                f"'{name}' has the symbolic shape {tuple(tensor.shape)}: give its sizes, "
                f"e.g. Tensor(shape=(...)) or a torch tensor"
            )
        return tensor
    if isinstance(tensor, (bool, int, float, complex, np.generic)):
        return Tensor(0)
    shape = getattr(tensor, "shape", None)
    if shape is None or not hasattr(tensor, "dtype"):
        raise TypeError(
            f"'{name}' must be a Tensor with numeric sizes, a torch tensor, a numpy array or a number, "
            f"got {type(tensor).__name__}"
        )
    shape = tuple(int(size) for size in shape)
    if not shape:
        return Tensor(0)
    try:
        return Tensor(shape=shape, dtype=tensor.dtype)
    except (TypeError, ValueError):  # a dtype NineToothed does not have: the shape is what matters
        return Tensor(shape=shape)


def _level_ndims(tensor):
    ndims = []
    level = tensor
    while isinstance(level, Tensor):
        ndims.append(level.ndim)
        level = level.dtype
    return tuple(ndims)


def _check_programs(records, arranged):
    """The arranged tensors with dims share one outermost shape, as in a kernel."""
    first = None
    for record, result in zip(records, arranged):
        if record.values is None or result.ndim == 0:
            continue
        if first is None:
            first = record
        elif record.outer_shape != first.outer_shape:
            raise ValueError(
                f"the arranged tensors' outermost shapes differ: '{first.name}' has {first.outer_shape} "
                f"but '{record.name}' has {record.outer_shape}"
            )
