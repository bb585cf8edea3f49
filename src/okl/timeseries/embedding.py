"""Time embedding: a series as the rows and targets of a regression (Takens' delay coordinates).

Row t of ``embed(s, order, horizon)`` holds the last ``order`` values up to time t,
s[t], s[t-1], ..., s[t-order+1] (zeros before the first value, KAFBOX's convention), followed by
the exogenous values at the target's time t + horizon when ``exog`` is given; its target is
s[t + horizon]. Rows t = 0 .. n - 1 - horizon, in time order (a learner must meet them in this
order: a permutation hands it the future). Cost O(n (order + k)) for n values and k exogenous
columns.

>>> import numpy as np
>>> X, y = embed(np.arange(1.0, 6.0), 2)
>>> X.tolist(), y.tolist()
([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0], [4.0, 3.0]], [2.0, 3.0, 4.0, 5.0])
>>> X, y = embed(np.arange(1.0, 6.0), 2, horizon=3, exog=np.arange(10.0, 15.0))
>>> X.tolist(), y.tolist()
([[1.0, 0.0, 13.0], [2.0, 1.0, 14.0]], [4.0, 5.0])
"""

from __future__ import annotations

import numpy as np


def lags(s: np.ndarray, t: int, order: int) -> np.ndarray:
    """s[t], s[t-1], ..., s[t-order+1], zeros before s[0] (one row of :func:`embed`)."""
    row = np.zeros(order)
    k = min(order, t + 1)
    if k > 0:
        row[:k] = s[t - k + 1:t + 1][::-1]
    return row


def embed(series, order: int, horizon: int = 1, exog=None) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of ``horizon``-step prediction with a time embedding of order ``order``
    (module docstring). ``series``: 1-D values; ``exog``: None, or one row of k exogenous values
    per value of the series (shape (n,) or (n, k)), the row at the target's time appended to each
    input. Returns (X of shape (n - horizon, order + k), y of shape (n - horizon,))."""
    s = np.asarray(series, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"embed: the series must be one-dimensional, got shape {s.shape}")
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ValueError(f"embed: order must be an integer >= 1, got {order!r}")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"embed: horizon must be an integer >= 1, got {horizon!r}")
    n = len(s)
    if n <= horizon:
        raise ValueError(f"embed: needs more than horizon = {horizon} values, got {n}")
    if not np.all(np.isfinite(s)):
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(f"embed: value {bad} of the series is not finite ({s[bad]!r})")
    X = np.zeros((n - horizon, order))
    for lag in range(order):
        X[lag:, lag] = s[:n - horizon - lag]
    if exog is not None:
        E = np.asarray(exog, dtype=np.float64)
        E = E[:, None] if E.ndim == 1 else E
        if E.ndim != 2 or E.shape[0] != n:
            raise ValueError(f"embed: exog must hold one row per value of the series ({n}), got shape {E.shape}")
        X = np.hstack([X, E[horizon:]])
    return X, s[horizon:].copy()


__all__ = ["embed", "lags"]
