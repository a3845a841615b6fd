"""`ninetoothed.Symbol`: printing, construction rules, equality, options."""

import ast
import operator
import random
import re

import pytest

import ninetoothed
from ninetoothed import Symbol

NAMES = ["a", "b", "BLOCK_SIZE", "x_1", "ninetoothed_tensor_0_size_0"]


# --- A reference for printing: the same tree as a Python `ast` -------------------
#
# Each random expression is built twice: once with Symbol arithmetic, once as a
# Python `ast` tree that applies the documented construction rules (integer
# constant folding; x+0, 0+x, x-0, 0-x -> -x, x*1, 1*x, x//1 -> x). `repr` of the
# Symbol must be exactly `ast.unparse` of that tree.


class Mirror:
    """A Python value (int, float, bool or Symbol) and its reference `ast`."""

    def __init__(self, value, node):
        self.value = value
        self.node = node

    @property
    def int_constant(self):
        """The value if this is an integer constant (not a bool), else None."""
        if isinstance(self.node, ast.Constant) and type(self.node.value) is int:
            return self.node.value
        return None


def constant(value):
    return Mirror(Symbol(value), ast.Constant(value))


def name(text):
    return Mirror(Symbol(text), ast.Name(text, ast.Load()))


ARITHMETIC = {
    "+": (operator.add, ast.Add),
    "-": (operator.sub, ast.Sub),
    "*": (operator.mul, ast.Mult),
    "//": (operator.floordiv, ast.FloorDiv),
    "%": (operator.mod, ast.Mod),
    "/": (operator.truediv, ast.Div),
    "&": (operator.and_, ast.BitAnd),
    "|": (operator.or_, ast.BitOr),
}

COMPARISONS = {
    "<": (operator.lt, ast.Lt),
    "<=": (operator.le, ast.LtE),
    ">": (operator.gt, ast.Gt),
    ">=": (operator.ge, ast.GtE),
}


def symbolic(value):
    """Plain numbers that folding produced, back as Symbols, so that the next
    operation is Symbol arithmetic and not Python's."""
    return value if isinstance(value, Symbol) else Symbol(value)


def negate(operand):
    value = -symbolic(operand.value)
    if isinstance(operand.node, ast.Constant) and type(operand.node.value) in (int, float):
        return Mirror(value, ast.Constant(-operand.node.value))
    return Mirror(value, ast.UnaryOp(ast.USub(), operand.node))


def binary(op, left, right):
    python_op, ast_op = ARITHMETIC[op]
    value = python_op(symbolic(left.value), right.value)
    a, b = left.int_constant, right.int_constant
    foldable = op not in ("/",) and not (op in ("//", "%") and b == 0)
    if a is not None and b is not None and foldable:
        return Mirror(value, ast.Constant(python_op(a, b)))
    if op == "+" and a == 0:
        return Mirror(value, right.node)
    if op in ("+", "-") and b == 0:
        return Mirror(value, left.node)
    if op == "-" and a == 0:
        return Mirror(value, negate(right).node)
    if op == "*" and a == 1:
        return Mirror(value, right.node)
    if op in ("*", "//") and b == 1:
        return Mirror(value, left.node)
    return Mirror(value, ast.BinOp(left.node, ast_op(), right.node))


def compare(op, left, right):
    python_op, ast_op = COMPARISONS[op]
    value = python_op(symbolic(left.value), right.value)
    a, b = left.int_constant, right.int_constant
    if a is not None and b is not None:
        return Mirror(value, ast.Constant(python_op(a, b)))
    return Mirror(value, ast.Compare(left.node, [ast_op()], [right.node]))


def random_leaf(rng, floats):
    roll = rng.random()
    if roll < 0.45:
        return name(rng.choice(NAMES))
    if floats and roll < 0.55:
        return constant(rng.choice([0.5, 2.5, 0.0, 1e-05, 1e16, 1234.5678, 3.0]))
    return constant(rng.choice([0, 1, 2, 3, 5, 7, 16, 1024, -1, -2, -3]))


def random_arithmetic(rng, depth, floats=False):
    if depth == 0 or rng.random() < 0.2:
        return random_leaf(rng, floats)
    if rng.random() < 0.1:
        return negate(random_arithmetic(rng, depth - 1, floats))
    ops = ["+", "-", "*", "//", "%"] + (["/"] if floats else [])
    op = rng.choice(ops)
    left = random_arithmetic(rng, depth - 1, floats)
    right = random_arithmetic(rng, depth - 1, floats)
    if op in ("//", "%") and right.int_constant == 0:
        right = constant(3)
    return binary(op, left, right)


def random_condition(rng, depth):
    if depth == 0 or rng.random() < 0.4:
        return compare(
            rng.choice(list(COMPARISONS)),
            random_arithmetic(rng, 2),
            random_arithmetic(rng, 2),
        )
    return binary(rng.choice(["&", "|"]), random_condition(rng, depth - 1), random_condition(rng, depth - 1))


def as_text(value):
    return repr(value)


@pytest.mark.parametrize("seed", range(8))
def test_printing_matches_ast_unparse_for_random_arithmetic(seed):
    rng = random.Random(seed)
    for _ in range(300):
        mirror = random_arithmetic(rng, rng.randint(1, 5))
        assert as_text(mirror.value) == ast.unparse(mirror.node)


@pytest.mark.parametrize("seed", range(4))
def test_printing_matches_ast_unparse_with_floats_and_true_division(seed):
    rng = random.Random(100 + seed)
    for _ in range(300):
        mirror = random_arithmetic(rng, rng.randint(1, 4), floats=True)
        assert as_text(mirror.value) == ast.unparse(mirror.node)


@pytest.mark.parametrize("seed", range(4))
def test_printing_matches_ast_unparse_for_conditions(seed):
    rng = random.Random(200 + seed)
    for _ in range(200):
        mirror = random_condition(rng, rng.randint(0, 3))
        assert as_text(mirror.value) == ast.unparse(mirror.node)


@pytest.mark.parametrize(
    "text",
    [
        "a - (b - 1) - 1",
        "(a + b) // c + 1",
        "a - (b + c)",
        "a * (b * c)",
        "a // (b // c)",
        "a % (b * c)",
        "-(a + b)",
        "-a * b",
        "--a",
        "a - -1",
        "-1 * a",
        "(a < b) < c",
        "a < (b < c)",
        "not a",
        "not a == b",
        "(not a) == b",
        "a and (b and c)",
        "a and (not b)",
        "not a and b",
        "a or (b and c)",
        "(a or b) and c",
        "a | b & c",
        "(a | b) & c",
        "a & b & c",
        "a & (b & c)",
        "a if b else c",
        "a if b else c if d else e",
        "(a if b else c) if d else e",
        "min(a, b) + max(a if b else c, 1)",
        "a / b / c",
        "a / (b / c)",
        "(a + 1) * (b - 2) // (c % 4)",
        "a == b",
        "a != b",
    ],
)
def test_parsed_expressions_print_like_ast_unparse(text):
    symbol = Symbol(text)
    expected = ast.unparse(ast.parse(text, mode="eval"))
    assert repr(symbol) == expected
    assert str(symbol) == expected


@pytest.mark.parametrize("seed", range(4))
def test_printed_expressions_parse_back_to_the_same_expression(seed):
    rng = random.Random(300 + seed)
    for _ in range(200):
        value = random_arithmetic(rng, rng.randint(1, 5), floats=rng.random() < 0.3).value
        if not isinstance(value, Symbol):
            continue
        text = repr(value)
        reparsed = Symbol(text)
        assert repr(reparsed) == text
        assert reparsed == value


@pytest.mark.parametrize(
    "value",
    [0.1, 1.5, 100.0, 1e15, 1e16, 123456789012345680.0, 1e-05, 0.0001, 2.5e-07, 1e22, 12345.678, 0.0],
)
def test_float_constants_print_as_python_repr(value):
    assert repr(Symbol(value)) == repr(value)
    assert repr(Symbol(repr(value))) == repr(value)
    assert repr(Symbol("a") + value) == f"a + {value!r}"


def test_tutorial_product_prints_as_source():
    assert repr(Symbol("BLOCK_SIZE_M") * Symbol("BLOCK_SIZE_N")) == "BLOCK_SIZE_M * BLOCK_SIZE_N"


# --- Identities and folding ---------------------------------------------------


def test_identities_return_the_operand_itself():
    x = Symbol("x")
    y = Symbol("y") * 3
    for operand in (x, y):
        for result in (operand + 0, 0 + operand, operand - 0, operand * 1, 1 * operand, operand // 1):
            assert isinstance(result, Symbol)
            assert repr(result) == repr(operand)
            assert result == operand
        assert repr(0 - operand) == ast.unparse(ast.UnaryOp(ast.USub(), ast.parse(repr(operand), mode="eval").body))
    assert repr(x + Symbol(0)) == "x"
    assert repr(Symbol(1) * x) == "x"


def test_non_identities_keep_their_operation():
    x = Symbol("x")
    assert repr(x * 0) == "x * 0"
    assert repr(x // 2) == "x // 2"
    assert repr(1 // x) == "1 // x"
    assert repr(x % 1) == "x % 1"
    assert repr(x - 1) == "x - 1"
    assert repr(1 - x) == "1 - x"
    assert repr(x / 1) == "x / 1"


@pytest.mark.parametrize("seed", range(4))
def test_integer_constants_fold_to_plain_int_with_python_semantics(seed):
    rng = random.Random(400 + seed)
    operations = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.and_, operator.or_]
    for _ in range(300):
        a = rng.randint(-1000, 1000)
        b = rng.choice([rng.randint(-1000, 1000), rng.randint(-9, 9)])
        op = rng.choice(operations)
        if op in (operator.floordiv, operator.mod) and b == 0:
            continue
        expected = op(a, b)
        for result in (op(Symbol(a), b), op(a, Symbol(b)), op(Symbol(a), Symbol(b))):
            assert type(result) is int
            assert result == expected


@pytest.mark.parametrize("seed", range(2))
def test_integer_comparisons_fold_to_plain_bool(seed):
    rng = random.Random(500 + seed)
    for _ in range(200):
        a, b = rng.randint(-20, 20), rng.randint(-20, 20)
        for op in (operator.lt, operator.le, operator.gt, operator.ge):
            result = op(Symbol(a), b)
            assert type(result) is bool
            assert result == op(a, b)


def test_folding_happens_inside_larger_expressions():
    x = Symbol("x")
    assert repr(x + (Symbol(2) * 3)) == "x + 6"
    assert repr(x * (Symbol(10) - 9)) == "x"
    assert repr((Symbol(4) - 4) + x) == "x"
    assert repr(-Symbol(3) + x) == "-3 + x"
    assert type(-Symbol(3)) is int and -Symbol(3) == -3


def test_substituting_every_symbol_gives_a_plain_int():
    a, b = Symbol("a"), Symbol("b")
    expression = (a + b * 2) // 3 - a % 4
    result = expression.subs({a: 7, "b": 5})
    assert type(result) is int
    assert result == (7 + 5 * 2) // 3 - 7 % 4
    partial = expression.subs({b: 5})
    assert isinstance(partial, Symbol)
    assert repr(partial) == "(a + 10) // 3 - a % 4"


# --- Comparisons and `&` build expressions -----------------------------------


def test_comparisons_and_bitwise_and_build_expressions():
    a, b = Symbol("a"), Symbol("b")
    cases = {
        a < 3: "a < 3",
        a <= b: "a <= b",
        a > b + 1: "a > b + 1",
        a >= 0: "a >= 0",
        3 < a: "a > 3",  # Python reflects the comparison
        (a < 3) & (b >= 2): "(a < 3) & (b >= 2)",
        (a < 3) & (b >= 2) & (a < b): "(a < 3) & (b >= 2) & (a < b)",
        (a < 3) & ((b >= 2) & (a < b)): "(a < 3) & ((b >= 2) & (a < b))",
        a & 1: "a & 1",
        1 & a: "1 & a",
    }
    for expression, text in cases.items():
        assert isinstance(expression, Symbol)
        assert repr(expression) == text
        assert repr(expression) == ast.unparse(ast.parse(text, mode="eval"))


def test_truth_value_of_a_symbolic_expression_is_an_error():
    with pytest.raises(TypeError):
        bool(Symbol("a") < 3)
    assert bool(Symbol(3)) is True
    assert bool(Symbol(0)) is False


# --- Equality and hashing -----------------------------------------------------


def test_equal_symbols_are_interchangeable_dict_keys():
    table = {Symbol("a"): 1, Symbol("b"): 2, Symbol("a") + 1: 3}
    assert table[Symbol("a")] == 1
    assert table[Symbol("b")] == 2
    assert table[Symbol("a") + 1] == 3
    assert table[Symbol("a + 1")] == 3
    assert Symbol("c") not in table
    assert len({Symbol("a"), Symbol("a"), Symbol("a ")}) == 1


def test_equality_is_structural():
    a, b = Symbol("a"), Symbol("b")
    assert a == Symbol("a")
    assert not (a != Symbol("a"))
    assert a != b
    assert a + b == Symbol("a + b")
    assert a + b != b + a
    assert (a + b) * 2 == Symbol("(a + b) * 2")
    assert hash(a + b) == hash(Symbol("a+b"))
    assert Symbol(3) == 3
    assert Symbol(3) != 4
    assert a != "a"
    assert a != None  # noqa: E711
    for x in (a, a + 1, Symbol(3)):
        assert x == x
        assert hash(x) == hash(Symbol(repr(x)))


# --- Parsing ------------------------------------------------------------------


def test_expression_strings_are_parsed():
    a, b = Symbol("a"), Symbol("b")
    parsed = Symbol("a + b * 2")
    assert repr(parsed) == "a + b * 2"
    assert parsed == a + b * 2
    assert Symbol("a+b*2") == parsed
    assert Symbol("(a + b) * 2") == (a + b) * 2
    assert Symbol("a - b - 1") == (a - b) - 1
    assert Symbol("a - (b - 1)") == a - (b - 1)
    assert Symbol("a // 2 % 3") == (a // 2) % 3
    assert Symbol("-a + 3") == -a + 3
    assert Symbol("2 * 3 + a") == 6 + a
    assert Symbol("a < b") == (a < b)
    assert parsed.name is None
    assert Symbol("a").name == "a"


def test_numbers_become_constants():
    assert repr(Symbol(5)) == "5"
    assert Symbol(5) + 1 == 6
    assert repr(Symbol("5")) == "5"
    assert repr(Symbol(2.5)) == "2.5"


# --- Options ------------------------------------------------------------------


def test_plain_symbol_has_no_options():
    x = Symbol("x")
    assert x.name == "x"
    assert x.constexpr is False
    assert x.meta is False
    assert x.lower_bound is None
    assert x.upper_bound is None
    assert x.power_of_two is False


def test_meta_symbol_defaults():
    x = Symbol("x", meta=True)
    assert x.meta is True
    assert x.constexpr is True
    assert x.lower_bound == 32
    assert x.upper_bound == 1024
    assert x.power_of_two is True
    assert repr(x) == "x"
    both = Symbol("y", meta=True, constexpr=True)
    assert both.meta is True and both.constexpr is True


def test_constexpr_symbol_defaults():
    x = Symbol("x", constexpr=True)
    assert x.constexpr is True
    assert x.meta is False
    # Constexpr values are any integer the caller passes (0 and negative ones too, as upstream).
    assert x.lower_bound is None
    assert x.upper_bound is None
    assert x.power_of_two is False


def test_given_options_override_the_defaults():
    x = Symbol("x", meta=True, lower_bound=16, upper_bound=64, power_of_two=False)
    assert (x.lower_bound, x.upper_bound, x.power_of_two) == (16, 64, False)
    y = Symbol("y", constexpr=True, upper_bound=128)
    assert (y.lower_bound, y.upper_bound) == (None, 128)
    z = Symbol("z", lower_bound=2, upper_bound=8, power_of_two=True)
    assert (z.constexpr, z.meta, z.lower_bound, z.upper_bound, z.power_of_two) == (False, False, 2, 8, True)


def test_options_survive_arithmetic_on_the_name():
    x = Symbol("x", meta=True)
    expression = x * 2 + 1
    assert repr(expression) == "x * 2 + 1"
    assert expression.meta is False  # options belong to names, not expressions
    assert x.meta is True


def test_block_size_is_a_fresh_meta_symbol():
    sizes = [ninetoothed.block_size() for _ in range(5)]
    names = [size.name for size in sizes]
    assert len(set(names)) == 5
    for size, text in zip(sizes, names):
        assert re.fullmatch(r"ninetoothed_BLOCK_SIZE_\d+", text)
        assert repr(size) == text
        assert size.meta is True
        assert size.constexpr is True
        assert size.lower_bound == 32
        assert size.upper_bound == 1024
        assert size.power_of_two is True
    numbers = [int(text.rsplit("_", 1)[1]) for text in names]
    assert numbers == sorted(numbers)


def test_block_size_bounds():
    size = ninetoothed.block_size(lower_bound=64, upper_bound=256)
    assert (size.lower_bound, size.upper_bound) == (64, 256)
    assert size.meta is True
    assert ninetoothed.block_size(upper_bound=128).lower_bound == 32
    assert ninetoothed.block_size(lower_bound=128).upper_bound == 1024


@pytest.mark.parametrize("expr", ["a + b", "a * 2", "(a)(b)", "2", 3, 2.5])
@pytest.mark.parametrize("option", ["meta", "constexpr"])
def test_options_on_a_non_name_are_rejected(expr, option):
    with pytest.raises(ValueError):
        Symbol(expr, **{option: True})


def test_meta_cannot_be_non_constexpr():
    with pytest.raises(ValueError):
        Symbol("x", meta=True, constexpr=False)
