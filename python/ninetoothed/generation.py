"""Upstream's `ninetoothed.generation` names that code written for upstream uses.

`CACHE_DIR` is upstream's directory for generated files, `~/.ninetoothed`: its tests and
examples write ahead-of-time libraries under it (`make(..., output_dir=CACHE_DIR / name)`) and the
auto-tuner keeps its timings there (`ninetoothed.auto_tuner`). It is created on import where the
home directory allows it. Compiled kernels are cached elsewhere (NINETOOTHED_CACHE_DIR, by default
`~/.cache/ninetoothed`).
"""

import pathlib

CACHE_DIR = pathlib.Path.home() / ".ninetoothed"

try:
    CACHE_DIR.mkdir(exist_ok=True)
except OSError:  # a read-only or missing home: made when something is written there
    pass
