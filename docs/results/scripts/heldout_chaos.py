"""Chaotic series held out from ../shared/checks/timeseries.py, under the same protocol (KAFBOX's
``demo_prediction_kstep``): okl's Forecaster at its defaults against the best of okl's KRLS-T over
KAFBOX's 8 settings (lambda 1, M 100, sn2 1e-6 / 1e-3, Gaussian widths 4.2 std x 1/4, 1/2, 1, 2,
embedding 7), MSE (dB) over values 1,000..3,000 of 3,000, one and ten steps ahead; bar: within 3 dB.

usage: PYTHONPATH=src python docs/results/scripts/heldout_chaos.py [mg17,henon,rossler,chua]
(docs/results/timeseries.md, fifth round; about 70 s a series on one core)
"""
from __future__ import annotations

import sys
import time

import numpy as np

from okl.data.series import mse_db

N, SKIP, SETTLE = 3000, 1000, 500


def _rk4(f, x, dt: float, n: int, every: int) -> np.ndarray:
    out = []
    for i in range(n * every):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if i % every == 0:
            out.append(x[0])
    return np.array(out[SETTLE:SETTLE + N])


def mackey_glass(tau: float = 17.0, dt: float = 0.1, every: int = 10) -> np.ndarray:
    """Mackey-Glass, dx/dt = 0.2 x(t - tau) / (1 + x(t - tau)^10) - 0.1 x (Euler), every 10th of dt 0.1."""
    lag = int(tau / dt)
    x = [1.2] * (lag + 1)
    out = []
    for i in range((N + SETTLE) * every):
        x.append(x[-1] + dt * (0.2 * x[-lag - 1] / (1 + x[-lag - 1] ** 10) - 0.1 * x[-1]))
        if i % every == 0:
            out.append(x[-1])
    return np.array(out[SETTLE:SETTLE + N])


def henon() -> np.ndarray:
    """The Henon map's x (a 1.4, b 0.3)."""
    x, y, out = 0.1, 0.1, []
    for _ in range(N + SETTLE):
        x, y = 1 - 1.4 * x * x + y, 0.3 * x
        out.append(x)
    return np.array(out[SETTLE:])


def rossler() -> np.ndarray:
    """Rossler's x (a 0.2, b 0.2, c 5.7), RK4 at dt 0.01, every 50th."""
    return _rk4(lambda v: np.array([-v[1] - v[2], v[0] + 0.2 * v[1], 0.2 + v[2] * (v[0] - 5.7)]),
                np.array([1.0, 1.0, 1.0]), 0.01, N + SETTLE, 50)


def chua() -> np.ndarray:
    """Chua's circuit x (alpha 15.6, beta 28, m0 -1.143, m1 -0.714), RK4 at dt 0.005, every 20th."""
    def f(v):
        g = -0.714 * v[0] + 0.5 * (-1.143 + 0.714) * (abs(v[0] + 1) - abs(v[0] - 1))
        return np.array([15.6 * (v[1] - v[0] - g), v[0] - v[1] + v[2], -28.0 * v[1]])
    return _rk4(f, np.array([0.7, 0.0, 0.0]), 0.005, N + SETTLE, 20)


SERIES = {"mg17": mackey_glass, "henon": henon, "rossler": rossler, "chua": chua}


def krlst_best(s: np.ndarray, k: int, order: int = 7) -> tuple[float, float, float]:
    """(dB, sn2, width) of the best KRLS-T setting, k steps ahead: the pair (embedding at t, s[t + k])
    learned when s[t + k] arrives, after its prediction (:func:`okl.timeseries.embed`, from the first
    full embedding)."""
    from okl.kernels import RBF
    from okl.runtime.base import make
    from okl.timeseries import embed

    X, y = embed(s, order, horizon=k)
    X, y = X[order - 1:], y[order - 1:]  # (KAFBOX's rows: a full embedding, no zeros before the start)
    cells = []
    for sn2 in (1e-6, 1e-3):
        for mult in (0.25, 0.5, 1.0, 2.0):
            width = 4.2 * float(np.std(s)) * mult
            m = make("krls-t", loss="squared", kernel=RBF(sigma=width), forgetting=1.0, budget=100, noise=sn2,
                     center_targets=False, scale=None)
            pred = np.zeros(N)  # pred[t]: the forecast of s[t]
            for i in range(len(X)):
                pred[order - 1 + i + k] = m.predict_one(X[i]) if m.n_seen_ else 0.0
                m.learn_one(X[i], y[i])
            cells.append((mse_db(pred[:N], s[:N], SKIP), sn2, width))
    return min(cells)


def forecaster(s: np.ndarray) -> dict[int, float]:
    """The Forecaster's MSE (dB) 1 and 10 steps ahead: each forecast made before its value arrived."""
    from okl.timeseries import Forecaster, forecasts_along

    paths = forecasts_along(Forecaster(), s[:N], 10)
    return {k: mse_db(paths.made_earlier(k), s, SKIP) for k in (1, 10)}


def main(names: list[str]) -> None:
    for name in names:
        s = SERIES[name]()
        t0 = time.perf_counter()
        ours = forecaster(s)
        secs = time.perf_counter() - t0
        for k in (1, 10):
            ref, sn2, width = krlst_best(s, k)
            print(f"{name:8s} {k:2d} step{'s' if k > 1 else ' '} ahead: okl {ours[k]:7.2f} dB   KRLS-T best {ref:7.2f} "
                  f"(sn2 {sn2:g}, width {width:.4g})   {'holds' if ours[k] <= ref + 3.0 else 'short'}   [{secs:.0f} s]",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1].split(",") if len(sys.argv) > 1 else list(SERIES))
