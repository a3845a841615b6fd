"""`copy.copy`, `copy.deepcopy` and `pickle` for `Tensor`, `Symbol` and dtypes.

The core (`ninetoothed._core`) gives the pieces: a Symbol's state, a level's
state and a blank level to restore it into, index-map nodes that pickle by
their state, and a copier that copies a hierarchy once per `deepcopy` call.
This module puts them behind Python's protocols, for every pickle protocol.
Pickles name the functions below, so they keep their names. (Symbols are
immutable: the core makes a copy of one the Symbol itself.)
"""

import copy

from ninetoothed import _core

# Where one `copy.deepcopy` call keeps its copier, so that tensors sharing a
# source or a level, deep-copied together, share their copies of them too.
_COPIER_KEY = "ninetoothed.Tensor copier"


def _blank_tensor():
    """A level to be filled by `Tensor.__setstate__` (pickle's first step)."""
    return _core.Tensor._blank()


def _index_map(state):
    return _core._IndexMap._from_state(state)


def _symbol(state):
    return _core.Symbol._from_state(state)


def _dtype(name):
    return getattr(_core.DType, name)


def _reduce_symbol(self):
    return _symbol, (self._state(),)


def _reduce_dtype(self):
    return _dtype, (str(self).rpartition(".")[2],)


def _reduce_tensor(self):
    attributes = self.__dict__
    return _blank_tensor, (), (self._getstate(), dict(attributes) if attributes else None)


def _setstate_tensor(self, state):
    core_state, attributes = state
    self._setstate(core_state)
    if attributes:
        self.__dict__.update(attributes)


def _reduce_index_map(self):
    return _index_map, (self._state(),)


def _deepcopy_tensor(self, memo):
    copier = memo.get(_COPIER_KEY)
    if copier is None:
        copier = memo[_COPIER_KEY] = _core._HierarchyCopier()
    result = copier.copy(self)
    # Attributes set from Python live on the Python objects: copy them too.
    for original, copied in copier.take_new_copies():
        if original.__dict__:
            copied.__dict__.update(copy.deepcopy(original.__dict__, memo))
    return result


_core.Symbol.__reduce__ = _reduce_symbol
_core.DType.__reduce__ = _reduce_dtype
_core.Tensor.__reduce__ = _reduce_tensor
_core.Tensor.__setstate__ = _setstate_tensor
_core.Tensor.__deepcopy__ = _deepcopy_tensor
_core._IndexMap.__reduce__ = _reduce_index_map
