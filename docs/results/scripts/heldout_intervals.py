"""The Forecaster's own 90 % intervals on the series held out from ../shared/checks/timeseries.py
(``heldout_series.py``'s 15, statsmodels' data, not a dependency) and River's AirlinePassengers:
coverage, mean width of the finite intervals and MAE at horizons 1, 6 and 12, origins from 12 on,
each forecast made from the values up to its origin (``okl.timeseries.forecasts_along``).

usage: PYTHONPATH=src python docs/results/scripts/heldout_intervals.py [name,name,...] [--json OUT]
(docs/results/timeseries.md, eighth round; about 5 minutes on one core)
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout_series import NAMES, series  # noqa: E402

HORIZONS = (1, 6, 12)


def load(name: str) -> np.ndarray:
    if name == "airline":
        from river import datasets

        return np.array([v for _, v in datasets.AirlinePassengers()], dtype=float)
    return series(name)


def measure(s: np.ndarray) -> dict[int, tuple[float, float, float]]:
    """{h: (coverage, mean width of the finite intervals, MAE)} over origins 12 .. n - 1 - h."""
    from okl.timeseries import Forecaster, forecasts_along

    paths = forecasts_along(Forecaster(), s, max(HORIZONS), alpha=0.1)
    out = {}
    for h in HORIZONS:
        t = np.arange(12, len(s) - h)
        y, lo, hi = s[t + h], paths.lower[t, h - 1], paths.upper[t, h - 1]
        finite = np.isfinite(lo) & np.isfinite(hi)
        out[h] = (float(np.mean((lo <= y) & (y <= hi))), float(np.mean((hi - lo)[finite])),
                  float(np.mean(np.abs(paths.center[t, h - 1] - y))))
    return out


def main() -> None:
    names = sys.argv[1].split(",") if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else NAMES + ["airline"]
    results = {}
    for name in names:
        r = results[name] = measure(load(name))
        print(f"{name:15s} " + "   ".join(f"+{h}: {100 * c:5.1f} % width {w:.4g} MAE {m:.4g}"
                                           for h, (c, w, m) in r.items()), flush=True)
    cov = [c for r in results.values() for c, _, _ in r.values()]
    print(f"mean coverage {100 * np.mean(cov):.1f} %; within 5 points of 90 %: "
          f"{sum(abs(c - 0.9) <= 0.05 for c in cov)} of {len(cov)}; below 85 %: {sum(c < 0.85 for c in cov)}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(results, f)


if __name__ == "__main__":
    main()
