"""Names NineToothed generates, and the prefixes that mark what a name is.

A marked name carries one prefix per property, outermost first:
``make_next_power_of_2(make_constexpr("n"))`` is
``"ninetoothed_next_power_of_2_prefix_ninetoothed_constexpr_prefix_n"``.
The ``is_*`` functions look for a prefix anywhere in the name, and
``remove_prefixes`` strips them all. Same strings and results as upstream
NineToothed's ``ninetoothed.naming``.
"""

import re

__all__ = [
    "auto_generate",
    "make_constexpr",
    "make_meta",
    "make_next_power_of_2",
    "is_constexpr",
    "is_meta",
    "is_next_power_of_2",
    "remove_prefixes",
]

_NAMESPACE = "ninetoothed_"
_PREFIX_END = "_prefix_"

_CONSTEXPR = "constexpr"
_META = "meta"
_NEXT_POWER_OF_2 = "next_power_of_2"

# "ninetoothed_<property>_prefix_": the property is the shortest text after the
# namespace that is followed by "_prefix_" and does not start with "_".
_PREFIX = re.compile(re.escape(_NAMESPACE) + r"(?!_)(.*?)" + re.escape(_PREFIX_END))


def _check(name):
    if not isinstance(name, str):
        raise TypeError(f"a name must be a str, got {type(name).__name__}")
    return name


def _marked(name, prop):
    return f"{_NAMESPACE}{prop}{_PREFIX_END}{_check(name)}"


def _properties(name):
    return set(_PREFIX.findall(_check(name)))


def auto_generate(name):
    """The name NineToothed gives something it generates: ``ninetoothed_<name>``."""
    return _NAMESPACE + _check(name)


def make_constexpr(name):
    """``name`` marked as a compile-time constant."""
    return _marked(name, _CONSTEXPR)


def make_meta(name):
    """``name`` marked as a meta-parameter (chosen by the compiler; also constexpr)."""
    return _marked(name, _META)


def make_next_power_of_2(name):
    """``name`` marked as to be rounded up to the next power of two."""
    return _marked(name, _NEXT_POWER_OF_2)


def is_constexpr(name):
    """Whether ``name`` carries the constexpr or the meta prefix."""
    return _CONSTEXPR in _properties(name) or is_meta(name)


def is_meta(name):
    """Whether ``name`` carries the meta prefix."""
    return _META in _properties(name)


def is_next_power_of_2(name):
    """Whether ``name`` carries the next-power-of-2 prefix."""
    return _NEXT_POWER_OF_2 in _properties(name)


def remove_prefixes(name):
    """``name`` without any of the prefixes above."""
    return _PREFIX.sub("", _check(name))
