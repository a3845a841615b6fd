"""A kernel's parameters inside the application being traced: a Parameter stands for its block
(loaded on use) and gives its levels (`p.shape`, `p.dtype`), its middle levels indexed (`p[i]`),
stores (`p[i] = ...`), and its whole source tensor (`p.source`) for pointer arithmetic and
gathers and scatters by coordinates."""

import operator

from ninetoothed import _core, _tracing
from ninetoothed._tracing import block_of as _block

class Parameter:
    """A kernel parameter inside the application: its block, loaded on use."""

    def __init__(self, builder, index, name, arranged, dtype):
        self._builder = builder
        self._index = index
        self._name = name
        self._arranged = arranged
        self._dtype = dtype

    def _ninetoothed_block(self):
        return self._builder.load(self._index, [])

    @property
    def shape(self):
        """The shape of the level under the outermost."""
        return self._builder.level_shapes(self._index)[0]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        """The next level (with `shape` and `dtype`), or the element dtype under the block."""
        levels = self._builder.level_shapes(self._index)
        return _Level(levels, 1, self._dtype) if len(levels) > 1 else self._dtype

    def __getitem__(self, key):
        indices = list(key) if isinstance(key, tuple) else [key]
        if all(i is None or i is Ellipsis or isinstance(i, slice) for i in indices):
            return self._ninetoothed_block()[key]  # x[:, None] on the block
        return _Indexed(self, [])[key]

    def _store(self, key, value):
        """`p[key] = value`: into a middle level's block, or at positions of the block."""
        indices = [_block(i) for i in (list(key) if isinstance(key, tuple) else [key])]
        middle = len(self._builder.middle_shape(self._index))
        block = len(self._builder.block_shape(self._index))
        if block and len(indices) == middle + block:
            self._builder.store_at(self._index, indices[:middle], indices[middle:], _block(value))
        else:
            self._builder.store(self._index, indices, _block(value))

    def to(self, dtype):
        return self._ninetoothed_block().to(element_dtype(dtype))

    def offsets(self, dim=None):
        """The source coordinates of the block's elements along source dim `dim` (flat offsets if None)."""
        return self._builder.offsets(self._ninetoothed_block(), dim)

    @property
    def source(self):
        """The whole tensor this parameter was arranged from."""
        return _Source(self)

    def __repr__(self):
        return f"<parameter {self._name}>"


class _Level:
    """A level of a parameter under the one it stands for, as upstream's `p.dtype`:
    its `shape`, and as `dtype` the level under it or the element dtype."""

    def __init__(self, levels, depth, element_dtype):
        self._levels = levels
        self._depth = depth
        self._element_dtype = element_dtype

    @property
    def shape(self):
        return self._levels[self._depth]

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        if self._depth + 1 < len(self._levels):
            return _Level(self._levels, self._depth + 1, self._element_dtype)
        return self._element_dtype

    @property
    def element_dtype(self):
        return self._element_dtype

    def __repr__(self):
        return f"<level of shape {self.shape}, element dtype {self._element_dtype}>"


def element_dtype(dtype):
    """A dtype argument as the core takes it: a level (`p.dtype` of a multi-level parameter)
    stands for its element dtype; a foreign dtype (Triton's `tl.int32`, torch's, a name) for ours."""
    if isinstance(dtype, _Level):
        return dtype.element_dtype
    if isinstance(dtype, _core.DType):
        return dtype
    return _core.as_dtype(dtype)


def _operator_method(op, reflected=False):
    def method(self, other):
        a, b = self._ninetoothed_block(), _block(other)
        return op(b, a) if reflected else op(a, b)

    return method


for _name, _op in [
    ("add", operator.add),
    ("sub", operator.sub),
    ("mul", operator.mul),
    ("truediv", operator.truediv),
    ("floordiv", operator.floordiv),
    ("mod", operator.mod),
    ("pow", operator.pow),
    ("and", operator.and_),
    ("or", operator.or_),
    ("xor", operator.xor),
    ("lshift", operator.lshift),
    ("rshift", operator.rshift),
]:
    setattr(Parameter, f"__{_name}__", _operator_method(_op))
    setattr(Parameter, f"__r{_name}__", _operator_method(_op, reflected=True))
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(Parameter, f"__{_name}__", _operator_method(_op))
Parameter.__neg__ = lambda self: -self._ninetoothed_block()
Parameter.__invert__ = lambda self: ~self._ninetoothed_block()


class _Indexed:
    """A parameter with some of its middle levels indexed (`p[i]` of four levels or more)."""

    def __init__(self, parameter, indices):
        self._parameter = parameter
        self._indices = indices

    @property
    def _levels(self):
        return self._parameter._builder.level_shapes(self._parameter._index)

    @property
    def shape(self):
        """The shape of the next level to index."""
        consumed, levels = len(self._indices), self._levels
        for shape in levels:
            if consumed == 0:
                return shape
            consumed -= len(shape)
        return levels[-1]

    def __getitem__(self, key):
        indices = self._indices + (list(key) if isinstance(key, tuple) else [key])
        levels = self._levels
        total = sum(len(shape) for shape in levels[:-1])
        level_start = 0
        for shape in levels[:-1]:  # an index may not stop inside a level
            if level_start < len(indices) < level_start + len(shape):
                raise IndexError(f"a level of shape {shape} needs {len(shape)} indices")
            level_start += len(shape)
        builder = self._parameter._builder
        block = len(builder.block_shape(self._parameter._index))
        if block and len(indices) == total + block:  # positions in the block: a gather
            indices = [_block(i) for i in indices]
            return builder.load_at(self._parameter._index, indices[:total], indices[total:])
        if len(indices) < total:
            return _Indexed(self._parameter, indices)
        return builder.load(self._parameter._index, [_block(i) for i in indices])


class _Source:
    """A parameter's whole source tensor inside an application.

    `shape`, `stride(d)` and `data_ptr()` (a pointer to element (0, ..., 0))
    for pointer arithmetic with `ntl.load`/`ntl.store`/`ntl.atomic_add`, and
    indexing with blocks of coordinates: `p.source[rows[:, None], cols[None, :]]`
    loads (coordinates outside the tensor read its `other`), and assigning to
    it stores (outside the tensor nothing is written).
    """

    def __init__(self, parameter):
        self._parameter = parameter
        self._tensor = parameter._arranged.source

    @property
    def shape(self):
        return self._tensor.shape

    @property
    def ndim(self):
        return self._tensor.ndim

    def stride(self, dim):
        return _core.block_typed_constant(self._tensor.strides[dim], _core.DType.int64)

    def data_ptr(self):
        return self._parameter._builder.pointer_base(self._parameter._index)

    def _pointers_and_mask(self, key):
        coordinates = list(key) if isinstance(key, tuple) else [key]
        if len(coordinates) != self.ndim:
            raise IndexError(f"the source has {self.ndim} dimensions; index it with {self.ndim} coordinate blocks")
        pointers = self.data_ptr()
        mask = True
        for dim, coordinate in enumerate(coordinates):
            coordinate = _block(coordinate)
            pointers = pointers + coordinate * self.stride(dim)
            inside = (coordinate >= 0) & (coordinate < self.shape[dim])
            mask = inside if mask is True else mask & inside
        return pointers, mask

    def __getitem__(self, key):
        pointers, mask = self._pointers_and_mask(key)
        other = self._tensor.other
        return self._parameter._builder.load_pointer(pointers, mask, 0 if other is None else other)

    def __setitem__(self, key, value):
        pointers, mask = self._pointers_and_mask(key)
        self._parameter._builder.store_pointer(pointers, _block(value), mask, False)


def _block_offsets(block, dim=None):
    """`p[k].offsets(dim)`: the source coordinates of a loaded block's elements."""
    return _tracing.current_builder().offsets(block, dim)


_core.Block.offsets = _block_offsets
