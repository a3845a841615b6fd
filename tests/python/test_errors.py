"""Bad input to the symbolic core raises a Python exception a user can act on."""

import re

import numpy as np
import pytest

import ninetoothed
from ninetoothed import Symbol, Tensor


@pytest.fixture
def x():
    return Tensor(shape=(4, 6))


# --- Symbols --------------------------------------------------------------------------


@pytest.mark.parametrize("expr", ["a + b", "a * 2", "f(x)", "2", 3])
def test_meta_or_constexpr_on_a_non_name(expr):
    with pytest.raises(ValueError, match="name"):
        Symbol(expr, meta=True)
    with pytest.raises(ValueError, match="name"):
        Symbol(expr, constexpr=True)


def test_meta_with_constexpr_false():
    with pytest.raises(ValueError, match="constexpr"):
        Symbol("BLOCK", meta=True, constexpr=False)


@pytest.mark.parametrize("text", ["a b", "", "a +", "(a", "a ** 2", "lambda: 1", "a[0]"])
def test_unparsable_expression(text):
    with pytest.raises(ValueError):
        Symbol(text)


def test_bounds_out_of_order():
    with pytest.raises(ValueError, match="lower_bound"):
        Symbol("a", lower_bound=8, upper_bound=4)
    with pytest.raises(ValueError):
        ninetoothed.block_size(lower_bound=256, upper_bound=128)


def test_bad_bound_types():
    with pytest.raises(TypeError):
        Symbol("a", lower_bound="1")
    with pytest.raises(TypeError):
        ninetoothed.block_size(upper_bound=2.5)


def test_symbol_of_an_unsupported_object():
    with pytest.raises(TypeError):
        Symbol([1, 2])
    with pytest.raises(TypeError):
        Symbol("a") + "b"
    with pytest.raises(TypeError):
        Symbol("a") * [1]


def test_integer_overflow_is_reported():
    with pytest.raises(OverflowError):
        Symbol(2**63 - 1) + 1
    with pytest.raises(OverflowError):
        Symbol(2**64)


def test_truth_value_of_a_symbolic_comparison():
    with pytest.raises(TypeError, match="truth value"):
        if Symbol("a") < 3:
            pass


# --- Tensor construction --------------------------------------------------------------


def test_tensor_needs_ndim_or_shape():
    with pytest.raises(ValueError, match="ndim"):
        Tensor()


def test_tensor_construction_errors():
    with pytest.raises(ValueError):
        Tensor(-1)
    with pytest.raises(ValueError):
        Tensor(2, shape=(1, 2, 3))
    with pytest.raises(ValueError):
        Tensor(shape=(2, -3))
    with pytest.raises(TypeError):
        Tensor(2.5)
    with pytest.raises(TypeError):
        Tensor("2")
    with pytest.raises(TypeError):
        Tensor(shape=5)
    with pytest.raises(TypeError):
        Tensor(shape=("a", 2))
    # A declared dtype that is not one is kept, as upstream keeps it (tests/python/test_lenient_declarations.py).
    assert Tensor(2, dtype="not a dtype").dtype == "not a dtype"


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_constexpr_on_a_tensor_with_dims(ndim):
    with pytest.raises(ValueError, match="0-dim"):
        Tensor(ndim, constexpr=True)
    with pytest.raises(ValueError, match="0-dim"):
        Tensor(shape=(2,) * ndim, constexpr=True)
    assert Tensor(0, constexpr=True).constexpr is True


def test_shape_options_errors():
    with pytest.raises(ValueError, match="unknown"):
        Tensor(2, shape_options={"upper": 4})
    with pytest.raises(ValueError):
        Tensor(2, shape_options=({},))
    with pytest.raises(TypeError):
        Tensor(2, shape_options=5)
    with pytest.raises(ValueError):
        Tensor(2, shape_options={"meta": True, "constexpr": False})
    tensor = Tensor(2, shape_options=({"constexpr": True, "upper_bound": 128}, None))
    assert tensor.shape[0].constexpr is True and tensor.shape[0].upper_bound == 128
    assert tensor.shape[1].constexpr is False


def test_dtype_assignment_errors(x):
    with pytest.raises(ValueError, match="own dtype"):
        x.dtype = x
    tiled = x.tile((2, 2))
    with pytest.raises(ValueError):
        tiled.dtype.dtype = tiled
    x.dtype = 5  # kept as upstream keeps it, and ignored at JIT time (test_lenient_declarations.py)
    assert x.dtype == 5


# --- Meta-operations ------------------------------------------------------------------


@pytest.mark.parametrize("tile_shape", [(2,), (2, 2, 2), ()])
def test_tile_shape_of_wrong_length(x, tile_shape):
    with pytest.raises(ValueError, match="tile_shape"):
        x.tile(tile_shape)


def test_tile_argument_errors(x):
    with pytest.raises(ValueError, match="strides"):
        x.tile((2, 2), strides=(1,))
    with pytest.raises(ValueError, match="dilation"):
        x.tile((2, 2), dilation=(1, 1, 1))
    with pytest.raises(ValueError):
        x.tile((0, 2))
    with pytest.raises(ValueError):
        x.tile((-2, 2))
    with pytest.raises(ValueError):
        x.tile((2, 2), strides=(0, 1))
    with pytest.raises(ValueError):
        x.tile((2, 2), dilation=(1, 0))
    with pytest.raises(TypeError):
        x.tile(5)
    with pytest.raises(TypeError):
        x.tile(("a", 2))


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1)])
def test_squeeze_of_a_dim_that_is_not_1(x, dim):
    with pytest.raises(ValueError, match="squeeze"):
        x.squeeze(dim)


def test_squeeze_out_of_range(x):
    with pytest.raises(IndexError):
        Tensor(shape=(1, 1)).squeeze(2)
    with pytest.raises(IndexError):
        Tensor(shape=(1, 1)).squeeze(-3)
    with pytest.raises(TypeError):
        x.squeeze("0")


@pytest.mark.parametrize("dims", [(0, 0), (0,), (0, 1, 2), (0, 2), (1, -1), (-3, 0), ()])
def test_permute_that_is_not_a_permutation(x, dims):
    with pytest.raises(ValueError, match="permutation"):
        x.permute(dims)


@pytest.mark.parametrize("shape", [(8, 6), (4, 12), (8, -1), (2, 3)])
def test_expand_of_a_non_singleton_dim(x, shape):
    with pytest.raises(ValueError, match="expand"):
        x.expand(shape)


def test_expand_argument_errors(x):
    with pytest.raises(ValueError):
        x.expand((-1,))
    with pytest.raises(ValueError):
        Tensor(shape=(1, 6)).expand((-2, -1))
    with pytest.raises(TypeError):
        x.expand(3)
    assert Tensor(shape=(1, 6)).expand((5, -1)).shape == (5, 6)


def test_unsqueeze_out_of_range(x):
    with pytest.raises(IndexError):
        x.unsqueeze(3)
    with pytest.raises(IndexError):
        x.unsqueeze(-4)


def test_flatten_errors(x):
    with pytest.raises(IndexError):
        x.flatten(2)
    with pytest.raises(IndexError):
        x.flatten(0, 3)
    with pytest.raises(ValueError):
        x.flatten(1, 1)
    with pytest.raises(ValueError):
        x.flatten(1, 0)
    with pytest.raises(ValueError):
        Tensor(0).flatten()


def test_pad_errors(x):
    with pytest.raises(ValueError):
        x.pad(((1, 1),))
    with pytest.raises(ValueError):
        x.pad(((1,), (1, 1)))
    with pytest.raises(ValueError):
        x.pad(((-5, 0), (0, 0)))
    with pytest.raises(TypeError):
        x.pad(5)


@pytest.mark.parametrize("key", [(0, 0, 0), (0, 1, 2, 3), (slice(None),) * 3, (Ellipsis, 0, 0, 0), (None, 0, 0, 0)])
def test_more_indices_than_dims(x, key):
    with pytest.raises(IndexError, match="too many indices"):
        x[key]


@pytest.mark.parametrize("key", [(Ellipsis, Ellipsis), (Ellipsis, 0, Ellipsis), (None, Ellipsis, None, Ellipsis)])
def test_two_ellipses(x, key):
    with pytest.raises(IndexError, match="ellipsis"):
        x[key]


def test_indexing_errors(x):
    with pytest.raises(IndexError):
        x[4]
    with pytest.raises(IndexError):
        x[-5]
    with pytest.raises(IndexError):
        x[0, 6]
    with pytest.raises(ValueError):
        x[::0]
    with pytest.raises(ValueError):
        x[:: Symbol("k")]
    with pytest.raises(TypeError):
        x["a"]
    with pytest.raises(TypeError):
        x[1.5]
    with pytest.raises(TypeError):
        x[[0, 1]]


# --- subs and eval --------------------------------------------------------------------


@pytest.mark.parametrize(
    "subs",
    [
        [1, 2],
        "abc",
        5,
        {1.5: 2},
        {(1, 2): 3},
        {Symbol("a") + 1: 2},
        {"TENSOR": {"shape": (4, 6)}},
        {Symbol("a"): None},
        {Symbol("a"): "3"},
    ],
    ids=repr,
)
def test_bad_subs_types(x, subs):
    with pytest.raises(TypeError):
        x.eval(subs)
    with pytest.raises(TypeError):
        x.subs(subs)


@pytest.mark.parametrize(
    "value",
    [(4, 6), [4, 6], 4, {"sizes": (4, 6)}, {"shape": 5}, {"shape": ("a", 6)}, {"shape": (4, 6), "strides": 3},
     {"shape": (4, 6), "strides": (1, "a")}],
    ids=repr,
)
def test_bad_subs_for_a_tensor(value):
    y = Tensor(2)
    with pytest.raises(TypeError):
        y.eval({y: value})


def test_subs_with_the_wrong_number_of_sizes():
    y = Tensor(2)
    with pytest.raises(ValueError, match="2 dims"):
        y.eval({y: {"shape": (4,)}})
    with pytest.raises(ValueError, match="strides"):
        y.eval({y: {"shape": (4, 6), "strides": (1,)}})


def test_eval_with_unknown_sizes_names_the_symbol():
    y = Tensor(2)
    with pytest.raises(ValueError, match=re.escape(f"{y.name}_size_0")):
        y.eval()
    with pytest.raises(ValueError, match=re.escape(f"{y.name}_size_1")):
        y.eval({y.shape[0]: 3})
    block = Symbol("BLOCK_SIZE_X", meta=True)
    tiled = Tensor(shape=(8,)).tile((block,))
    with pytest.raises(ValueError, match="BLOCK_SIZE_X"):
        tiled.eval()
    with pytest.raises(ValueError, match="BLOCK_SIZE_X"):
        ninetoothed.eval(tiled, {})
    row = Tensor(shape=(4, 4))[Symbol("i")]
    with pytest.raises(ValueError, match=r"\bi\b"):
        row.eval()


def test_division_by_zero_in_eval():
    block = Symbol("B")
    tiled = Tensor(shape=(8, 4)).tile((block, 2))
    with pytest.raises(ZeroDivisionError):
        tiled.eval({block: 0})
    a, b = Symbol("a"), Symbol("b")
    y = Tensor(shape=(4, a // b))
    with pytest.raises(ZeroDivisionError):
        y.eval({a: 3, b: 0})
    # Division by zero in an index, not a size.
    picked = Tensor(shape=(4, 3))[a // b]
    np.testing.assert_array_equal(picked.eval({a: 5, b: 2}), np.arange(12).reshape(4, 3)[5 // 2])
    with pytest.raises(ZeroDivisionError):
        picked.eval({a: 2, b: 0})
    strided = Tensor(shape=(6,)).tile((2,), strides=(b,))
    with pytest.raises(ZeroDivisionError):
        strided.eval({b: 0})


def test_float_sizes_are_refused_where_given():
    for bad in (
        lambda: Tensor(shape=(4,)).tile((2.5,)),
        lambda: Tensor(shape=(4,)).tile((2,), strides=(1.5,)),
        lambda: Tensor(shape=(4,)).expand((2.0,)),
    ):
        with pytest.raises(TypeError):
            bad()


def test_a_window_larger_than_the_size_gives_no_tiles():
    tiled = Tensor(shape=(3,)).tile((5,), strides=(1,))
    assert tiled.shape == (0,)
    assert tiled.eval().shape == (0, 5)


def test_eval_of_more_elements_than_can_be_counted():
    with pytest.raises(ValueError):
        Tensor(shape=(2**32 + 1, 2**32)).eval()
    with pytest.raises(ValueError):
        Tensor(shape=(2**62, 2**62)).eval()


def test_a_failed_call_leaves_the_tensor_usable(x):
    for bad in (lambda: x.tile((2,)), lambda: x.squeeze(0), lambda: x[0, 0, 0], lambda: x.eval([1])):
        with pytest.raises((ValueError, IndexError, TypeError)):
            bad()
    assert x.shape == (4, 6)
    np.testing.assert_array_equal(x.eval(), np.arange(24).reshape(4, 6))


# --- Random bad arguments -------------------------------------------------------------

ALLOWED = (ValueError, TypeError, IndexError, OverflowError, ZeroDivisionError)


def _random_scalar(rng):
    return rng.choice(
        [0, 1, 2, 3, -1, -2, -5, 7, 2**31, 2**62, -(2**63), 2**63 - 1, None, "a", 1.5,
         Symbol("s"), Symbol("s") + 1, Ellipsis, True, (), (1,), [2, 3], slice(None, None, -1)]
    )


def _random_argument(rng):
    roll = rng.random()
    if roll < 0.5:
        return tuple(_random_scalar(rng) for _ in range(rng.randint(0, 4)))
    if roll < 0.7:
        return tuple(tuple(_random_scalar(rng) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(0, 3)))
    return _random_scalar(rng)


def _has_few_elements(tensor):
    total, level = 1, tensor
    while isinstance(level, Tensor):
        for size in level.shape:
            if type(size) is not int or size < 0:
                return False
            total *= size
        level = level.dtype
    return total < 10_000


@pytest.mark.parametrize("seed", range(4))
def test_random_bad_arguments_raise_python_exceptions(seed):
    import random

    rng = random.Random(seed)
    succeeded = failed = 0
    for _ in range(400):
        if rng.random() < 0.7:
            tensor = Tensor(shape=tuple(rng.randint(0, 6) for _ in range(rng.randint(0, 3))))
        else:
            tensor = Tensor(rng.randint(0, 3))
        for _ in range(5):
            name = rng.choice(
                ["tile", "expand", "squeeze", "unsqueeze", "permute", "flatten", "ravel", "pad", "index", "eval", "subs"]
            )
            try:
                if name == "tile":
                    kwargs = {}
                    if rng.random() < 0.5:
                        kwargs["strides"] = _random_argument(rng)
                    if rng.random() < 0.5:
                        kwargs["dilation"] = _random_argument(rng)
                    tensor = tensor.tile(_random_argument(rng), **kwargs)
                elif name == "index":
                    tensor = tensor[_random_argument(rng)]
                elif name == "flatten":
                    tensor = tensor.flatten(_random_scalar(rng), _random_scalar(rng))
                elif name == "ravel":
                    tensor = tensor.ravel()
                elif name == "eval":
                    if _has_few_elements(tensor):
                        result = tensor.eval({Symbol("s"): rng.randint(-3, 4)})
                        assert result.dtype == np.intp
                elif name == "subs":
                    sizes = tuple(rng.randint(0, 5) for _ in range(tensor.source.ndim))
                    tensor = tensor.subs({tensor.source: {"shape": sizes}, Symbol("s"): rng.randint(-3, 4)})
                else:
                    tensor = getattr(tensor, name)(_random_argument(rng))
                succeeded += 1
            except ALLOWED:
                failed += 1
    assert succeeded > 0 and failed > 0


def test_squeeze_and_expand_refuse_sizes_provably_not_one():
    padded = Tensor(1).pad(((1, 0),))  # size `n + 1` with n >= 1
    with pytest.raises(ValueError):
        padded.squeeze(0)
    with pytest.raises(ValueError):
        padded.expand((4,))
    whole = Tensor(1).tile((-1,))  # one tile: size `(n - (n - 1) - 1 + n - 1) // n + 1`, which is 1
    assert whole.expand((3,)).shape == (3,)
    assert whole.squeeze(0).shape == ()
