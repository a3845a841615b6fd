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


def test_a_dtype_that_is_not_one_is_a_type_error():
    with pytest.raises(TypeError, match="dtype"):
        Tensor(1, dtype=complex)
    with pytest.raises(TypeError, match="dtype"):
        Tensor(1, dtype="float8")


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


def test_jagged_tensors_are_rejected_by_name():
    assert Tensor(2, jagged_dim=None).ndim == 2
    with pytest.raises(ValueError, match="jagged_dim"):
        Tensor(2, jagged_dim=1)


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


def test_constexpr_sizes_take_their_values_from_the_tensors_and_keep_their_bounds():
    torch = pytest.importorskip("torch")
    options = (None, {"constexpr": True, "upper_bound": 64})
    kernel = _row_kernel(Tensor(2, shape_options=options), Tensor(2, shape_options=options))
    for rows, cols in ((3, 10), (5, 64), (1, 1)):
        x = torch.randn(rows, cols)
        y = torch.empty_like(x)
        kernel(x, y)
        torch.testing.assert_close(y, x * 2 + 1)
    x = torch.randn(2, 65)
    with pytest.raises(ValueError, match="bounds"):
        kernel(x, torch.empty_like(x))


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
