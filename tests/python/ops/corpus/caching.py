"""Kernels built once per configuration, as operator libraries cache `ninetoothed.make`.

`cached_make(premake, *args, **keywords)` calls `premake(*args, **keywords)` and builds the
kernel; the same arguments give the same kernel. `set_default_max_num_configs` caps the
auto-tuning of every kernel built afterwards (the tests keep it small to stay quick).
"""

import functools

import ninetoothed


class _Defaults:
    max_num_configs = None


def set_default_max_num_configs(max_num_configs):
    _Defaults.max_num_configs = max_num_configs


@functools.cache
def _make(premake, args, keywords, max_num_configs):
    return ninetoothed.make(*premake(*args, **dict(keywords)), max_num_configs=max_num_configs)


def cached_make(premake, *args, max_num_configs=None, **keywords):
    if max_num_configs is None:
        max_num_configs = _Defaults.max_num_configs

    return _make(premake, args, tuple(sorted(keywords.items())), max_num_configs)
