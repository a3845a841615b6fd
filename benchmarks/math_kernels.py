"""Elementwise exp, exp2 and log kernels over float32 arrays, and their error in ulp.

Shared by benchmarks/exp_accuracy.py and tests/python/test_kernels_math.py.
"""

import numpy as np

import ninetoothed
import ninetoothed.language as ntl
from ninetoothed import Tensor

BLOCK_SIZE = 4096


def arrangement(x, y):
    return x.tile((BLOCK_SIZE,)), y.tile((BLOCK_SIZE,))


def exp_application(x, y):
    y = ntl.exp(x)  # noqa: F841


def exp2_application(x, y):
    y = ntl.exp2(x)  # noqa: F841


def log_application(x, y):
    y = ntl.log(x)  # noqa: F841


def _make(application):
    return ninetoothed.make(arrangement, application, (Tensor(1), Tensor(1)), caller="torch")


KERNELS = {"exp": _make(exp_application), "exp2": _make(exp2_application), "log": _make(log_application)}


def _log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def _exp(x):
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(x)


def _exp2(x):
    with np.errstate(over="ignore", under="ignore"):
        return np.exp2(x)


REFERENCES = {"exp": _exp, "exp2": _exp2, "log": _log}


def ulp_errors(y, exact):
    """(errors, specials_ok) of float32 results `y` against float64 `exact` values.

    errors: |y - exact| over the float32 spacing at |exact| (2^-149 below the
    normal range), 0 where the result is special and right, inf where it is
    wrong. Special: exact NaN (y must be NaN), a result that rounds to an
    infinity (y must be that infinity), exact zero (y must be zero)."""
    y = np.asarray(y)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = exact.astype(np.float32)
    nan = np.isnan(exact)
    inf = np.isinf(rounded)
    zero = exact == 0
    special = nan | inf | zero
    specials_ok = np.ones(y.shape, dtype=bool)
    specials_ok[nan] = np.isnan(y[nan])
    specials_ok[inf] = y[inf] == rounded[inf]
    specials_ok[zero] = y[zero] == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.maximum(np.floor(np.log2(np.abs(exact))), -126.0)
        errors = np.abs(y.astype(np.float64) - exact) / np.exp2(exponent - 23)
    errors[~np.isfinite(errors)] = np.inf  # an infinite or NaN result where a finite one is due
    errors[special] = np.where(specials_ok[special], 0.0, np.inf)
    return errors, specials_ok
