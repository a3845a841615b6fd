"""ninetoothed.naming: the prefixes and their queries, as upstream."""

import os
import pathlib
import subprocess
import sys

import pytest

import ninetoothed.naming as naming

NAME = "ninetoothed_name"

MAKERS = {
    "constexpr": naming.make_constexpr,
    "meta": naming.make_meta,
    "next_power_of_2": naming.make_next_power_of_2,
}


def test_an_attribute_of_the_package():
    # As upstream, `import ninetoothed` is enough to use `ninetoothed.naming` (fresh process).
    package_parent = str(pathlib.Path(naming.__file__).resolve().parents[1])
    code = "import ninetoothed; print(ninetoothed.naming.make_meta('x'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONPATH=package_parent))
    assert result.stdout.strip() == "ninetoothed_meta_prefix_x"


def test_auto_generate():
    assert naming.auto_generate("BLOCK_SIZE") == "ninetoothed_BLOCK_SIZE"
    assert naming.auto_generate("tensor_0") == "ninetoothed_tensor_0"
    assert naming.auto_generate("") == "ninetoothed_"


def test_make_strings():
    assert naming.make_constexpr(NAME) == "ninetoothed_constexpr_prefix_ninetoothed_name"
    assert naming.make_meta(NAME) == "ninetoothed_meta_prefix_ninetoothed_name"
    assert naming.make_next_power_of_2(NAME) == "ninetoothed_next_power_of_2_prefix_ninetoothed_name"
    assert (
        naming.make_next_power_of_2(naming.make_constexpr("n"))
        == "ninetoothed_next_power_of_2_prefix_ninetoothed_constexpr_prefix_n"
    )


@pytest.mark.parametrize("name", [NAME, "x", "BLOCK_SIZE_M", "ninetoothed_tensor_3_size_0"])
def test_queries_of_plain_names(name):
    assert not naming.is_constexpr(name)
    assert not naming.is_meta(name)
    assert not naming.is_next_power_of_2(name)
    assert naming.remove_prefixes(name) == name


def test_queries_of_one_prefix():
    assert naming.is_constexpr(naming.make_constexpr(NAME))
    assert not naming.is_meta(naming.make_constexpr(NAME))
    assert not naming.is_next_power_of_2(naming.make_constexpr(NAME))

    # A meta-parameter is constexpr too.
    assert naming.is_meta(naming.make_meta(NAME))
    assert naming.is_constexpr(naming.make_meta(NAME))
    assert not naming.is_next_power_of_2(naming.make_meta(NAME))

    assert naming.is_next_power_of_2(naming.make_next_power_of_2(NAME))
    assert not naming.is_constexpr(naming.make_next_power_of_2(NAME))
    assert not naming.is_meta(naming.make_next_power_of_2(NAME))


@pytest.mark.parametrize("order", [
    ("constexpr",), ("meta",), ("next_power_of_2",),
    ("constexpr", "next_power_of_2"), ("next_power_of_2", "constexpr"),
    ("meta", "next_power_of_2"), ("next_power_of_2", "meta"),
    ("constexpr", "meta", "next_power_of_2"), ("next_power_of_2", "meta", "constexpr"),
])
def test_round_trips_with_several_prefixes(order):
    name = NAME
    for prop in order:
        name = MAKERS[prop](name)
    assert name.endswith(NAME)
    assert naming.remove_prefixes(name) == NAME
    assert naming.is_meta(name) == ("meta" in order)
    assert naming.is_constexpr(name) == ("constexpr" in order or "meta" in order)
    assert naming.is_next_power_of_2(name) == ("next_power_of_2" in order)
    # Applying a prefix twice is harmless to the queries and to remove_prefixes.
    twice = MAKERS[order[0]](name)
    assert naming.remove_prefixes(twice) == NAME


def test_prefixes_inside_expressions():
    # Prefixes are found (and removed) anywhere, as in generated expressions.
    expr = f"{naming.make_meta('BLOCK_SIZE')} * {naming.make_constexpr('n')} + 1"
    assert naming.remove_prefixes(expr) == "BLOCK_SIZE * n + 1"
    assert naming.is_meta(expr)
    assert naming.is_constexpr(expr)
    assert not naming.is_next_power_of_2(expr)


def test_not_a_prefix():
    # "ninetoothed_" with "_prefix_" right after it (an empty or "_"-led property) is no prefix.
    assert naming.remove_prefixes("ninetoothed__prefix_x") == "ninetoothed__prefix_x"
    # Any other property is stripped, though none of the queries knows it.
    assert naming.remove_prefixes("ninetoothed_other_prefix_x") == "x"
    assert not naming.is_constexpr("ninetoothed_other_prefix_x")
    assert not naming.is_constexpr("constexpr_prefix_x")
    assert not naming.is_meta("ninetoothed_metaprefix_x")


@pytest.mark.parametrize("function", [
    naming.auto_generate, naming.make_constexpr, naming.make_meta, naming.make_next_power_of_2,
    naming.is_constexpr, naming.is_meta, naming.is_next_power_of_2, naming.remove_prefixes,
])
def test_names_must_be_strings(function):
    with pytest.raises(TypeError, match="must be a str"):
        function(3)
