"""Helpers the operator-corpus tests share: poisoned outputs, fresh inputs, tolerances."""

import torch

DTYPES = (torch.float32, torch.float16)


def poisoned(shape, dtype):
    """An output full of values no correct kernel writes (NaN; a sentinel for integers)."""
    fill = float("nan") if dtype.is_floating_point else -12345
    return torch.full(shape, fill, dtype=dtype)


def tolerance(dtype):
    """rtol, atol for a float32-computed reference rounded to `dtype`."""
    return {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3)}[dtype]


def assert_matches(actual, expected, dtype=None, rtol=None, atol=None):
    """Every element of `actual` against a float32 (or float64) reference cast to its dtype."""
    dtype = actual.dtype if dtype is None else dtype
    default_rtol, default_atol = tolerance(dtype) if dtype.is_floating_point else (0, 0)
    torch.testing.assert_close(
        actual,
        expected.to(actual.dtype),
        rtol=default_rtol if rtol is None else rtol,
        atol=default_atol if atol is None else atol,
        equal_nan=True,
    )
