"""A forecaster run along a series: every forecast it would have answered, at every origin and
horizon (:func:`forecasts_along`), the one loop behind ``okl forecast``, ``okl reproduce
kaf-series``' k-step table and the held-out scripts of docs/results."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Forecasts(NamedTuple):
    """Row t, column h - 1: the forecast of y[t + h] made from y[0 .. t] (``center``) and its
    interval (``lower``, ``upper``; None when no ``alpha`` was asked)."""

    center: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None

    def made_earlier(self, h: int) -> np.ndarray:
        """p[j] = the forecast of y[j] made h values earlier (from y[0 .. j - h]); NaN for j < h and
        j beyond the series' last value."""
        n, H = self.center.shape
        if not 1 <= h <= H:
            raise ValueError(f"h must be in 1 .. {H}, got {h!r}")
        p = np.full(n, np.nan)
        p[h:] = self.center[:n - h, h - 1]
        return p


def forecasts_along(model, y, horizon: int, alpha: float | None = None, progress: bool = False) -> Forecasts:
    """Learn ``y`` one value at a time with ``model`` (River's forecaster protocol: ``learn_one(y)``,
    ``forecast(horizon)``; with ``alpha``, okl's ``forecast_interval(horizon, alpha)``) and keep
    what it forecast after each value: a forecast never sees the value it forecasts (it is made
    before that value is learned). ``progress``: a progress line on stderr (a long series: ``okl
    forecast --series lorenz`` ran 31 values a second). Cost: n forecasts and n updates.

    >>> from okl.timeseries import Forecaster
    >>> y = [float(t % 4) for t in range(40)]
    >>> F = forecasts_along(Forecaster(), y, horizon=2)
    >>> F.center.shape
    (40, 2)
    >>> p = F.made_earlier(1)  # p[j]: the forecast of y[j] made one value earlier
    >>> bool(np.isnan(p[0])), round(float(np.mean(np.abs(p[-8:] - y[-8:]))), 3)
    (True, 0.0)
    """
    from okl.eval.progress import Progress

    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    values = np.asarray(y, dtype=np.float64).ravel()
    n, H = len(values), int(horizon)
    center = np.full((n, H), np.nan)
    lower = upper = None
    if alpha is not None:
        lower, upper = np.full((n, H), np.nan), np.full((n, H), np.nan)
    with Progress(n, "forecast", enabled=progress, unit="values") as bar:
        for t in range(n):
            model.learn_one(float(values[t]))
            if alpha is None:
                center[t] = model.forecast(H)
            else:
                for h, iv in enumerate(model.forecast_interval(H, alpha=alpha)):
                    center[t, h], lower[t, h], upper[t, h] = iv.center, iv.lower, iv.upper
            bar.advance()
    return Forecasts(center, lower, upper)


__all__ = ["Forecasts", "forecasts_along"]
