"""AirlinePassengers under ../shared/checks/timeseries.py's protocol (River's ``time_series.evaluate``:
before each value ``forecast(12)``, MAE at horizons 1 / 6 / 12), scored from origin 26 on (two full
years seen, what a model fitted by maximum likelihood needs): River's HoltWinters at its docstring
constants (told the period) and SNARIMAX, okl's Forecaster at its defaults, and the field's standard
automatic methods refitted by maximum likelihood on all values up to each origin (statsmodels,
told the period): exponential smoothing of log y with an additive trend and season (damped or
not), and Box and Jenkins' airline model SARIMA(0, 1, 1)(0, 1, 1)_12 of log y, which they built on
this very series. A reference for how far the check's bar is from what a method that is not told
the period, its constants or its model can reach (docs/results/timeseries.md, seventh round).

usage: PYTHONPATH=src python docs/results/scripts/airline_refits.py  (statsmodels needed, not an okl
dependency: ``pip install statsmodels``; about a minute)
"""
from __future__ import annotations

import warnings

import numpy as np

HORIZONS, START = (1, 6, 12), 26


def river_protocol(model, y: np.ndarray) -> dict[int, list[float]]:
    """Absolute errors per horizon of a River-protocol forecaster from origin START on."""
    err: dict[int, list[float]] = {h: [] for h in HORIZONS}
    for t in range(len(y)):
        if t >= START:
            f = model.forecast(12)
            for h in HORIZONS:
                if t + h - 1 < len(y):
                    err[h].append(abs(f[h - 1] - y[t + h - 1]))
        model.learn_one(float(y[t]))
    return err


def refitted(fit, y: np.ndarray) -> dict[int, list[float]]:
    """Absolute errors per horizon of ``fit(values up to the origin) -> 12 forecasts``."""
    err: dict[int, list[float]] = {h: [] for h in HORIZONS}
    for t in range(START, len(y)):
        with warnings.catch_warnings():  # (statsmodels' notes on the shortest histories' fits)
            warnings.simplefilter("ignore")
            f = fit(y[:t])
        for h in HORIZONS:
            if t + h - 1 < len(y):
                err[h].append(abs(f[h - 1] - y[t + h - 1]))
    return err


def ets(z: np.ndarray, damped: bool) -> np.ndarray:
    from statsmodels.tsa.holtwinters import ExponentialSmoothing

    fit = ExponentialSmoothing(np.log(z), trend="add", seasonal="add", seasonal_periods=12, damped_trend=damped,
                               initialization_method="estimated").fit()
    return np.exp(fit.forecast(12))


def airline(z: np.ndarray) -> np.ndarray:
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    fit = SARIMAX(np.log(z), order=(0, 1, 1), seasonal_order=(0, 1, 1, 12)).fit(disp=False)
    return np.exp(fit.forecast(12))


def main() -> None:
    from river import datasets, time_series

    from okl.timeseries import Forecaster

    y = np.array([v for _, v in datasets.AirlinePassengers()], dtype=float)
    runs = {
        "River HoltWinters (0.3, 0.1, 0.6, 12, multiplicative)": lambda: river_protocol(
            time_series.HoltWinters(alpha=0.3, beta=0.1, gamma=0.6, seasonality=12, multiplicative=True), y),
        "River SNARIMAX(1, 1, 1, m=12, sp=1, sq=1)": lambda: river_protocol(
            time_series.SNARIMAX(p=1, d=1, q=1, m=12, sp=1, sq=1), y),
        "okl Forecaster()": lambda: river_protocol(Forecaster(), y),
        "ETS(A, A, A) of log y, refitted": lambda: refitted(lambda z: ets(z, False), y),
        "ETS(A, Ad, A) of log y, refitted": lambda: refitted(lambda z: ets(z, True), y),
        "airline model SARIMA(0,1,1)(0,1,1)_12 of log y, refitted": lambda: refitted(airline, y),
    }
    for name, run in runs.items():
        err = run()
        print(f"{name:58s} " + " / ".join(f"{np.mean(err[h]):.2f}" for h in HORIZONS), flush=True)


if __name__ == "__main__":
    main()
