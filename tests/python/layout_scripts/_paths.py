"""Imported first by the layout scripts (run as programs, this folder first on sys.path): puts the
package, the examples and the tests on sys.path, as pytest's run of the tests has them."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
for path in (ROOT / "python", ROOT / "examples", ROOT / "tests" / "python"):
    sys.path.insert(0, str(path))
