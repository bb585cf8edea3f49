"""One gross error in a clean series: how long it weighs on the Forecaster's answers.

The series is sin(t / 3), t = 0 .. 399, with the value at t = 150 replaced by 1e6 (a sensor's glitch).
River's protocol as in the check (origin t forecasts from y[0 .. t - 1], ``forecast(12)`` at every
origin from 12); the MAE at +1 and +6 over windows of origins, beside the last value's (the naive
forecast). The forecasts of the value 1e6 itself (as wrong for every forecaster) are left out.

usage: PYTHONPATH=src python docs/results/scripts/single_outlier.py   (about 20 s; docs/results/timeseries.md, ninth round)
"""
from __future__ import annotations

import numpy as np

WINDOWS = ((12, 149), (150, 174), (175, 199), (200, 249), (250, 299), (300, 349), (350, 394))


def main() -> None:
    from okl.timeseries import Forecaster

    y = np.sin(np.arange(400) / 3.0)
    y[150] = 1e6
    model = Forecaster()
    rows = []  # (origin, |error| at +1, at +6, last value's at +1, at +6)
    for t in range(len(y)):
        if t >= 12:
            f = model.forecast(12)
            if t + 5 < len(y):
                rows.append((t, abs(f[0] - y[t]), abs(f[5] - y[t + 5]), abs(y[t - 1] - y[t]), abs(y[t - 1] - y[t + 5])))
        model.learn_one(float(y[t]))
    a = np.array(rows)
    print("origins    okl MAE +1      +6   last value +1      +6")
    for lo, hi in WINDOWS:
        m = (a[:, 0] >= lo) & (a[:, 0] <= hi)
        m1, m6 = m & (a[:, 0] != 150), m & (a[:, 0] + 5 != 150)
        print(f"{lo:3d}-{hi:3d} {a[m1, 1].mean():12.4g} {a[m6, 2].mean():9.4g} {a[m1, 3].mean():14.4g} {a[m6, 4].mean():9.4g}")


if __name__ == "__main__":
    main()
