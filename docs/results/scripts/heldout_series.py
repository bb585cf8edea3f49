"""Series held out from ../shared/checks/timeseries.py, under its AirlinePassengers protocol (River's
``time_series.evaluate``: grace 12, before each value ``forecast(12)``, MAE at horizons 1 / 6 / 12):
okl's Forecaster at its defaults beside River's HoltWinters (its docstring setting, additive where a
value is <= 0) and SNARIMAX(1, 1, 1, m=12, sp=1, sq=1), the check's peers.

The data are statsmodels' data sets, read from its wheel (not an okl dependency: ``pip install
statsmodels``): CO2 (weekly, monthly means, 521 values), El Nino (monthly sea temperatures, 732),
euro-area electrical equipment (monthly, 257), sunspots (yearly, 309), the Nile (yearly, 100), and
the quarterly US macro series (203 each: real GDP, real investment, CPI, M1, T-bill rate,
unemployment, inflation, real interest rate) and German inflation and interest rates (107 each).
``--river`` adds the two univariate series River's own package ships (RIVER_SERIES: WaterFlow, hourly
flow with a few outages, 1,268 values; TrumpApproval's approval rate, daily, 1,001); ``--peers``
prints River's two peers and the last value (the naive forecast every forecaster is held against).

usage: PYTHONPATH=src python docs/results/scripts/heldout_series.py [name,name,...] [--peers] [--river]
(docs/results/timeseries.md, sixth and ninth rounds; 3-110 s a series on one core)
"""
from __future__ import annotations

import sys
import time

import numpy as np

SEASONAL = ["co2", "elnino", "elec", "sunspots", "nile"]
MACRO = ["realgdp", "realinv", "cpi", "m1", "tbilrate", "unemp", "infl", "realint"]
NAMES = SEASONAL + [f"macro:{m}" for m in MACRO] + ["ii:Dp", "ii:R"]
RIVER_SERIES = ["river:WaterFlow", "river:TrumpApproval"]
HORIZONS = (1, 6, 12)


def series(name: str) -> np.ndarray:
    import os

    import pandas as pd
    import statsmodels
    import statsmodels.datasets as d

    if name == "co2":
        return d.co2.load_pandas().data.resample("MS").mean().dropna()["co2"].to_numpy(float)
    if name == "elnino":
        return d.elnino.load_pandas().data.iloc[:, 1:].to_numpy(float).ravel()
    if name == "elec":
        path = os.path.join(statsmodels.__path__[0], "datasets", "elec_equip", "elec_equip.csv")
        return pd.read_csv(path).iloc[:, -1].to_numpy(float)
    if name == "sunspots":
        return d.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(float)
    if name == "nile":
        return d.nile.load_pandas().data["volume"].to_numpy(float)
    if name.startswith("macro:"):
        return d.macrodata.load_pandas().data[name[6:]].to_numpy(float)
    if name.startswith("ii:"):
        return d.interest_inflation.load_pandas().data[name[3:]].to_numpy(float)
    if name in RIVER_SERIES:
        from river import datasets

        return np.array([y for _, y in getattr(datasets, name[6:])()], dtype=float)
    raise ValueError(f"unknown series {name!r}; one of {', '.join(NAMES + RIVER_SERIES)}")


def mae(model, y: np.ndarray) -> list[float]:
    err: dict[int, list[float]] = {h: [] for h in HORIZONS}
    for t in range(len(y)):
        if t >= 12:
            f = model.forecast(horizon=12)
            for h in HORIZONS:
                if t + h - 1 < len(y):
                    err[h].append(abs(f[h - 1] - y[t + h - 1]))
        model.learn_one(float(y[t]))
    return [float(np.mean(err[h])) for h in HORIZONS]


def main(argv: list[str]) -> None:
    from okl.timeseries import Forecaster

    names = next((a.split(",") for a in argv if not a.startswith("--")), NAMES + (RIVER_SERIES if "--river" in argv else []))
    for name in names:
        y = series(name)
        start = time.perf_counter()
        row = mae(Forecaster(), y)
        print(f"{name:15s} n={len(y):4d} okl " + " / ".join(f"{v:.4g}" for v in row)
              + f"   [{time.perf_counter() - start:.0f} s]", flush=True)
        if "--peers" in argv:
            from river import time_series

            hw = mae(time_series.HoltWinters(alpha=0.3, beta=0.1, gamma=0.6, seasonality=12,
                                             multiplicative=bool((y > 0).all())), y)
            sn = mae(time_series.SNARIMAX(p=1, d=1, q=1, m=12, sp=1, sq=1), y)
            last = [float(np.mean(np.abs(y[11 + h:] - y[11:len(y) - h]))) for h in HORIZONS]
            print(f"{'':15s}        HoltWinters " + " / ".join(f"{v:.4g}" for v in hw)
                  + "   SNARIMAX " + " / ".join(f"{v:.4g}" for v in sn)
                  + "   last value " + " / ".join(f"{v:.4g}" for v in last), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
