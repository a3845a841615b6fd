"""`Tensor` as upstream NineToothed's users write it.

Constructor keywords as upstream's `Tensor.__init__` takes them, `copy.deepcopy`
and pickling of Tensors and Symbols (also through spawned processes), and
Tensors as the values of `subs` / `eval`.

Nothing at module level makes a Tensor or a Symbol: the spawned processes
below import this module, and must start with no index variables made.
"""

import copy
import multiprocessing
import pickle

import numpy as np
import pytest
import torch

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Symbol, Tensor

# --- Constructor keywords -------------------------------------------------------


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (int, ninetoothed.int64),
        (float, ninetoothed.float32),
        (bool, getattr(ninetoothed.DType, "bool")),
        (np.float16, ninetoothed.float16),
        (np.int32, ninetoothed.int32),
        (np.bool_, getattr(ninetoothed.DType, "bool")),
        (np.dtype("uint8"), ninetoothed.uint8),
        ("bfloat16", ninetoothed.bfloat16),
        (ninetoothed.float64, ninetoothed.float64),
    ],
)
def test_dtype_given_as_upstream_takes_it(dtype, expected):
    assert Tensor(2, dtype=dtype).dtype == expected
    assert Tensor(2, dtype=dtype).tile((2, 2)).dtype.dtype == expected


def test_a_dtype_that_is_not_one_is_kept_as_upstream_keeps_it():
    # Upstream stores any `dtype`; it matters only where a declared dtype is used (ahead of time).
    for value in (complex, "float8", 256):
        assert Tensor(1, dtype=value).dtype == value


def test_one_shape_options_dict_applies_to_every_dim():
    x = Tensor(3, shape_options={"constexpr": True, "upper_bound": 64})
    for size in x.shape:
        assert size.constexpr and not size.meta
        assert (size.lower_bound, size.upper_bound) == (1, 64)


@pytest.mark.parametrize("container", (tuple, list))
def test_shape_options_per_dim_with_none_for_plain_sizes(container):
    x = Tensor(3, shape_options=container([None, {"meta": True, "upper_bound": 128}, {"lower_bound": 4}]))
    plain, meta, bounded = x.shape
    assert not plain.constexpr and plain.lower_bound == 1 and plain.upper_bound is None
    assert meta.meta and meta.constexpr and (meta.lower_bound, meta.upper_bound, meta.power_of_two) == (32, 128, True)
    assert not bounded.constexpr and bounded.lower_bound == 4


def test_shape_options_apply_to_the_sizes_shape_leaves_symbolic():
    x = Tensor(shape=(4, None), shape_options={"constexpr": True})
    assert x.shape[0] == 4
    assert x.shape[1].constexpr and x.shape[1].name == f"{x.name}_size_1"


def test_constexpr_shape_of_older_upstream_versions():
    x = Tensor(2, constexpr_shape=True)
    assert all(size.constexpr for size in x.shape)
    y = Tensor(2, constexpr_shape=True, shape_options=({"upper_bound": 8}, None))
    assert y.shape[0].constexpr and y.shape[0].upper_bound == 8 and y.shape[1].constexpr
    assert not any(size.constexpr for size in Tensor(2, constexpr_shape=False).shape)


def test_shape_options_errors_name_the_keyword():
    with pytest.raises(ValueError, match="shape_options"):
        Tensor(2, shape_options={"upper": 4})
    with pytest.raises(ValueError, match="shape_options"):
        Tensor(2, shape_options=({}, {}, {}))
    with pytest.raises(TypeError, match="shape_options"):
        Tensor(2, shape_options=("constexpr", None))
    with pytest.raises(TypeError, match="shape_options"):
        Tensor(2, shape_options="constexpr")


def test_keywords_in_upstreams_order():
    x = Tensor(2, None, ninetoothed.float16, None, float("-inf"), {"constexpr": True}, None, None, "x")
    assert x.name == "x" and x.dtype == ninetoothed.float16 and x.other == float("-inf")
    assert x.shape[0].constexpr
    assert Tensor(0, constexpr=True, value=3).value == 3


def test_jagged_dim_is_kept_and_checked():
    assert Tensor(2, jagged_dim=None).jagged_dim is None
    assert Tensor(3, jagged_dim=2).jagged_dim == 2
    with pytest.raises(ValueError, match="jagged_dim"):
        Tensor(2, jagged_dim=0)  # dimension 0 indexes the sequences
    with pytest.raises(ValueError, match="jagged_dim"):
        Tensor(2, jagged_dim=2)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        Tensor(1, jagged_dim=1)


@pytest.mark.parametrize(
    "keyword",
    ("source", "source_dims", "target", "target_dims", "unflattened", "unflattened_dims", "_offsets", "_outputs"),
)
def test_upstreams_internal_keywords_are_accepted_only_as_their_default(keyword):
    assert Tensor(1, **{keyword: None}).ndim == 1
    with pytest.raises(ValueError, match=keyword):
        Tensor(1, **{keyword: (0,)})


def test_strides_cannot_be_given():
    assert Tensor(shape=(2, 3), strides=None).shape == (2, 3)
    with pytest.raises(ValueError, match="strides"):
        Tensor(shape=(2, 3), strides=(3, 1))


def test_bad_keywords_and_values_are_clear_errors():
    with pytest.raises(TypeError, match="'colour'"):
        Tensor(1, colour="red")
    with pytest.raises(TypeError, match="name"):
        Tensor(1, name=3)
    with pytest.raises(ValueError, match="name"):
        Tensor(1, name="not a name")
    with pytest.raises(ValueError, match="value"):
        Tensor(0, value=3)
    with pytest.raises(TypeError, match="constexpr"):
        Tensor(0, constexpr="yes")
    with pytest.raises(TypeError, match="shape"):
        Tensor(shape=(2.5, 3))
    with pytest.raises(TypeError, match="ndim"):
        Tensor(2.0)


def _row_kernel(x, y):
    def arrangement(x, y):
        return x.tile((1, -1)), y.tile((1, -1))

    def application(x, y):
        y = x * 2 + 1  # noqa: F841 - assigning to a parameter stores

    return ninetoothed.make(arrangement, application, (x, y))


def test_constexpr_sizes_take_their_values_from_the_tensors_and_keep_their_lower_bounds():
    torch = pytest.importorskip("torch")
    # An upper bound is a hint (upstream prunes tuning candidates with it): 65 and 200 run.
    options = (None, {"constexpr": True, "upper_bound": 64, "lower_bound": 2})
    kernel = _row_kernel(Tensor(2, shape_options=options), Tensor(2, shape_options=options))
    for rows, cols in ((3, 10), (5, 64), (1, 2), (2, 65), (4, 200)):
        x = torch.randn(rows, cols)
        y = torch.full_like(x, float("nan"))
        kernel(x, y)
        torch.testing.assert_close(y, x * 2 + 1)
    x = torch.randn(2, 1)
    y = torch.full_like(x, float("nan"))
    with pytest.raises(ValueError, match="bounds"):
        kernel(x, y)
    assert y.isnan().all()


# --- Tensors as values of subs and eval ----------------------------------------


def test_eval_without_subs_uses_a_concrete_source_shape():
    assert (Tensor(shape=(2, 3)).eval() == np.array([[0, 1, 2], [3, 4, 5]])).all()


@pytest.mark.parametrize("subs_first", (False, True))
def test_a_tensor_value_stands_for_its_shape(subs_first):
    x = Tensor(2)
    block_m, block_n = ninetoothed.block_size(), ninetoothed.block_size()
    arranged = x.tile((block_m, block_n))
    arranged.dtype = arranged.dtype.flatten()
    with_dict = arranged.eval({x: {"shape": (5, 6)}, block_m: 2, block_n: 3})
    subs = {x: Tensor(shape=(5, 6)), block_m: 2, block_n: 3}
    with_tensor = arranged.subs(subs).eval() if subs_first else arranged.eval(subs)
    assert with_tensor.shape == (3, 2, 6)
    assert (with_tensor == with_dict).all()
    assert (with_tensor[2, 0] == [24, 25, 26, -1, -1, -1]).all()


def test_tile_eval_with_a_tensor_value():
    x = Tensor(1)
    block = Symbol("B", constexpr=True)
    result = x.tile((block,)).eval({x: Tensor(shape=(5,)), block: 2})
    assert (result == np.array([[0, 1], [2, 3], [4, -1]])).all()


def test_subs_of_the_source_with_a_tensor_value():
    x = Tensor(2)
    arranged = x.tile((2, 4))
    substituted = arranged.subs({arranged.source: Tensor(shape=(4, 6))})
    assert substituted.shape == (2, 2) and substituted.dtype.shape == (2, 4)
    assert substituted.source.shape == (4, 6)
    assert (substituted.eval() == arranged.eval({x: {"shape": (4, 6)}})).all()


def test_a_symbolic_tensor_value_renames_the_sizes():
    x, y = Tensor(2), Tensor(2)
    renamed = x.tile((2, 2)).subs({x: y})
    assert renamed.source.shape == y.shape
    assert (renamed.eval({y: {"shape": (3, 4)}}) == x.tile((2, 2)).eval({x: {"shape": (3, 4)}})).all()


def test_tensor_values_of_the_wrong_kind_or_rank():
    x = Tensor(2)
    with pytest.raises(ValueError, match="sizes"):
        x.eval({x: Tensor(shape=(5,))})
    with pytest.raises(TypeError, match="Tensor or a dict"):
        x.eval({x: (5, 6)})


# --- copy.deepcopy --------------------------------------------------------------


def _levels(tensor):
    levels = [tensor]
    while isinstance(levels[-1].dtype, Tensor):
        levels.append(levels[-1].dtype)
    return levels


def _describe(tensor, subs):
    """What a copy or an unpickled tensor must keep."""
    return (
        repr(tensor),
        [level.shape for level in _levels(tensor)],
        [level.name for level in _levels(tensor)],
        tensor.source.name,
        tensor.eval(subs).tolist(),
    )


def _arranged():
    x = Tensor(2, dtype=ninetoothed.float16, other=0.5)
    block = ninetoothed.block_size(upper_bound=64)
    tiled = x.tile((block, 3)).tile((2, 1))
    tiled.dtype.dtype = tiled.dtype.dtype.flatten()
    return tiled, {x: {"shape": (7, 8)}, block: 2}


def test_a_deep_copy_evaluates_like_the_original_and_is_independent():
    original, subs = _arranged()
    before = _describe(original, subs)
    copied = copy.deepcopy(original)
    assert _describe(copied, subs) == before
    for a, b in zip(_levels(original), _levels(copied)):
        assert a is not b
    assert copied.source is not original.source and copied.source.name == original.source.name
    copied.dtype = copied.dtype.squeeze(1)
    copied.dtype.dtype = copied.dtype.dtype.unsqueeze(0)
    assert _describe(original, subs) == before
    expected = np.asarray(before[-1])
    assert (copied.eval(subs) == expected.reshape(copied.eval(subs).shape)).all()


def test_tensors_deep_copied_together_share_their_copies():
    x = Tensor(2)
    a, b = x.tile((2, 2)), x.tile((1, 2))
    a2, b2 = copy.deepcopy((a, b))
    assert a2.source is b2.source and a2.source is not x
    inner, level = copy.deepcopy([a.dtype, a])
    assert level.dtype is inner


def test_a_copys_levels_combine_with_the_originals():
    x = Tensor(2)
    tiled = x.tile((2, 3))
    copied = copy.deepcopy(tiled)
    copied.dtype = copied.dtype.permute((1, 0))
    tiled.dtype = copied.dtype
    subs = {x: {"shape": (4, 6)}}
    assert (tiled.eval(subs) == copied.eval(subs)).all()


def test_deep_copy_copies_python_attributes_and_shallow_copy_shares_levels():
    tiled = Tensor(1).tile((4,))
    tiled.note = ["arranged"]
    copied = copy.deepcopy(tiled)
    assert copied.note == ["arranged"] and copied.note is not tiled.note
    shallow = copy.copy(tiled)
    assert shallow is not tiled and shallow.dtype is tiled.dtype and shallow.source is tiled.source
    assert shallow.note is tiled.note


def test_symbols_are_their_own_copies():
    a = Symbol("a", constexpr=True) + 1
    assert copy.copy(a) is a and copy.deepcopy(a) is a
    assert copy.deepcopy({"k": a})["k"] is a


def test_a_kernel_whose_arrangement_deep_copies_a_tiled_tensor():
    torch = pytest.importorskip("torch")
    block = ninetoothed.block_size(lower_bound=4, upper_bound=16)

    def arrangement(x, out):
        rows = x.tile((1, block))
        rows_again = copy.deepcopy(rows)
        rows_again.dtype = rows_again.dtype.squeeze(0)
        return rows, rows_again, out.tile((1, block))

    def application(a, b, out):
        out = a + 2 * b  # noqa: F841 - assigning to a parameter stores

    kernel = ninetoothed.make(arrangement, application, (Tensor(2), Tensor(2)))
    for shape in ((3, 17), (1, 8)):
        x = torch.randn(shape)
        out = torch.empty_like(x)
        kernel(x, x, out)
        torch.testing.assert_close(out, 3 * x)


# --- pickle -----------------------------------------------------------------------


def _symbols():
    return [
        Symbol("n"),
        Symbol("n", constexpr=True),
        Symbol("BLOCK", meta=True),
        Symbol("k", constexpr=True, lower_bound=2, upper_bound=96, power_of_two=True),
        ninetoothed.block_size(lower_bound=16),
        Symbol("a + b"),
        Symbol("(a + b) * -c // 3 % d - e / 2.5"),
        (Symbol("i") < Symbol("n")) & (Symbol("j") >= 0),
        Symbol("m", upper_bound=7) * 2 + 1,
    ]


def _symbol_facts(symbol, with_hash=True):
    names = ("name", "constexpr", "meta", "lower_bound", "upper_bound", "power_of_two")
    facts = repr(symbol), str(symbol), tuple(getattr(symbol, name) for name in names)
    return facts + (hash(symbol),) if with_hash else facts


@pytest.mark.parametrize("protocol", (0, 2, pickle.HIGHEST_PROTOCOL))
def test_symbols_pickle(protocol):
    for symbol in _symbols():
        loaded = pickle.loads(pickle.dumps(symbol, protocol))
        assert loaded == symbol and _symbol_facts(loaded) == _symbol_facts(symbol)
    meta = pickle.loads(pickle.dumps(Symbol("a", meta=True) + Symbol("b", constexpr=True)))
    assert meta.subs({"a": 32, "b": 1}) == 33


def _tensors():
    x = Tensor(2, dtype=int, other=-1, name="x", shape_options=(None, {"constexpr": True, "upper_bound": 32}))
    y = Tensor(shape=(6, 5), dtype=ninetoothed.float16)
    scalar = Tensor(0, constexpr=True, value=4)
    arranged, subs = _arranged()
    subs.update({x: {"shape": (5, 9)}})
    padded = y.pad(((1, 0), (0, 2))).tile((4, 4))
    padded.dtype = padded.dtype[1:, ::2]
    raveled = y.tile((2, 1)).ravel().flatten(end_dim=3)
    return [x, x.tile((2, 4)), y, scalar, arranged, padded, raveled], subs


@pytest.mark.parametrize("protocol", (0, 2, pickle.HIGHEST_PROTOCOL))
def test_tensors_pickle(protocol):
    tensors, subs = _tensors()
    for tensor in tensors:
        loaded = pickle.loads(pickle.dumps(tensor, protocol))
        # `subs` names the originals: a Tensor key stands for its source's name.
        assert _describe(loaded, subs) == _describe(tensor, subs)
        assert loaded.other == tensor.other and loaded.constexpr == tensor.constexpr and loaded.value == tensor.value
        assert [_symbol_facts(size) for size in loaded.source.shape if isinstance(size, Symbol)] == [
            _symbol_facts(size) for size in tensor.source.shape if isinstance(size, Symbol)
        ]


def test_tensors_pickled_together_share_what_they_shared():
    x = Tensor(2)
    a, b = x.tile((2, 2)), x.tile((1, 2))
    a2, b2 = pickle.loads(pickle.dumps((a, b)))
    assert a2.source is b2.source and a2.source.name == x.name
    inner, level = pickle.loads(pickle.dumps([a.dtype, a]))
    assert level.dtype is inner


def test_a_tensor_whose_dtype_reaches_back_to_it_pickles():
    x = Tensor(1)
    tiled = x.tile((2,))
    x.dtype = tiled
    loaded = pickle.loads(pickle.dumps(x))
    assert repr(loaded) == repr(x) and loaded.dtype.source is loaded


def test_a_kernel_from_an_unpickled_arrangement():
    torch = pytest.importorskip("torch")
    block = ninetoothed.block_size(lower_bound=4, upper_bound=16)
    x, out = Tensor(2), Tensor(2)
    arranged = pickle.loads(pickle.dumps((x.tile((1, block)), out.tile((1, block)))))

    def application(x, out):
        out = x * x  # noqa: F841 - assigning to a parameter stores

    kernel = ninetoothed.make(lambda *tensors: arranged, application, (x, out))
    source = torch.randn(3, 21)
    result = torch.empty_like(source)
    kernel(source, result)
    torch.testing.assert_close(result, source * source)


# --- Through spawned processes ------------------------------------------------------


def _in_a_new_process(function, *args):
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def _facts_there(symbols, tensors, subs):
    """Runs in a spawned process: what the objects it was sent say there, and the objects."""
    symbol_facts = [_symbol_facts(symbol, with_hash=False) for symbol in symbols]
    return symbol_facts, [_describe(tensor, subs) for tensor in tensors], symbols, tensors


def test_symbols_and_tensors_cross_processes():
    symbols = _symbols()
    tensors, subs = _tensors()
    symbol_facts = [_symbol_facts(symbol, with_hash=False) for symbol in symbols]
    tensor_facts = [_describe(tensor, subs) for tensor in tensors]
    facts_there, described_there, symbols_back, tensors_back = _in_a_new_process(_facts_there, symbols, tensors, subs)
    assert facts_there == symbol_facts and described_there == tensor_facts
    assert [_symbol_facts(symbol, with_hash=False) for symbol in symbols_back] == symbol_facts
    assert [_describe(tensor, subs) for tensor in tensors_back] == tensor_facts


def _pickled_arrangement():
    """Runs in a new process, whose first index variables the arrangement takes."""
    return pickle.dumps(Tensor(2, name="x").tile((2, 3)))


def _extended_and_evaluated(data):
    """Runs in another new process: loads the arrangement, then makes index variables of its own."""
    tiled = pickle.loads(data)
    tiled.dtype = tiled.dtype.unsqueeze(0)
    other = Tensor(2, name="y").tile((3, 2))
    other.dtype = other.dtype.permute((1, 0))
    subs = {"x_size_0": 5, "x_size_1": 6, "y_size_0": 5, "y_size_1": 6}
    return tiled.eval(subs), other.eval(subs)


def test_index_variables_of_another_process_do_not_collide_with_this_ones():
    data = _in_a_new_process(_pickled_arrangement)
    tiled_there, other_there = _in_a_new_process(_extended_and_evaluated, data)
    x, y = Tensor(2), Tensor(2)
    tiled, other = x.tile((2, 3)), y.tile((3, 2))
    tiled.dtype = tiled.dtype.unsqueeze(0)
    other.dtype = other.dtype.permute((1, 0))
    assert (tiled_there == tiled.eval({x: {"shape": (5, 6)}})).all()
    assert (other_there == other.eval({y: {"shape": (5, 6)}})).all()


def shape_setter_arrangement(input, output, block_size=ninetoothed.block_size()):
    return input.tile((block_size, -1)), output.tile((block_size, -1))


def shape_setter_application(input, output):
    output = input * 2  # noqa: F841


def test_the_shape_of_a_source_tensor_can_be_set_as_upstream_premakes_do():
    tensors = [Tensor(2, shape_options=(None, {"constexpr": True})) for _ in range(2)]
    for tensor in tensors:
        tensor.shape = tensor.shape[:-1] + (16,)
    assert tensors[0].shape[1] == 16 and isinstance(tensors[0].shape[0], Symbol)
    kernel = ninetoothed.make(shape_setter_arrangement, shape_setter_application, tensors)
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(37, 16).to(dtype)
        y = torch.full_like(x, float("nan"))
        kernel(x, y)
        assert torch.equal(y, x * 2)
    with pytest.raises(ValueError):
        kernel(torch.randn(37, 15), torch.empty(37, 15))


def test_the_shape_of_an_arranged_level_or_of_another_rank_is_refused():
    x = Tensor(2)
    with pytest.raises(ValueError, match="only a source tensor's shape"):
        x.tile((2, 2)).shape = (1, 1)
    with pytest.raises(ValueError, match="2 dimensions"):
        x.shape = (3,)
    with pytest.raises(ValueError, match="negative"):
        x.shape = (3, -2)
