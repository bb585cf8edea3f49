"""The default regressor's 90 % intervals (``OKLRiverRegressor(seed=0).predict_interval_one``, the
check's protocol: prequential, from the 50th example) under every setting of the conformal head
around its defaults: the average beta 0.9 / 0.95 / 0.98, the step lr 0.05 / 0.1 / 0.2 and the window
50 / 100 / 200 (27 settings). The model's predictions do not depend on the head: each stream is run
once, recording its predictions, and each setting replays a head over them
(``okl.intervals.replay_intervals``).

    PYTHONPATH=src python docs/results/scripts/interval_settings.py     (about 10 seconds)
"""
from __future__ import annotations

import itertools

from okl.intervals import ConformalHead, replay_intervals

#: River's Jackknife around the same model (../shared/checks/timeseries.py, measured 2026-12-06):
#: (coverage, width); its width is a bar only where it covers at least 90 %
JACKKNIFE = {"TrumpApproval": (0.938, 1.28), "ChickWeights": (0.710, 53.31), "Friedman": (0.966, 0.2939)}


def streams():
    from river import datasets

    from okl.checks import friedman_regression

    def friedman():
        X, y = friedman_regression(5000)
        return [({f"x{j}": float(v) for j, v in enumerate(row)}, float(t)) for row, t in zip(X, y)]

    return {"TrumpApproval": lambda: list(datasets.TrumpApproval()),
            "ChickWeights": lambda: list(datasets.ChickWeights()), "Friedman": friedman}


def predictions(data) -> list[float]:
    """OKLRiverRegressor(seed=0)'s prediction of each example before learning it (its default
    learner has no predictive variance: its head works on the local scale, as the replay does)."""
    from okl.river import OKLRiverRegressor

    model, out = OKLRiverRegressor(seed=0), []
    for x, y in data:
        out.append(model.predict_one(x))
        model.learn_one(x, y)
    return out


def main() -> None:
    settings = list(itertools.product((0.9, 0.95, 0.98), (0.05, 0.1, 0.2), (50, 100, 200)))
    held = 0
    for name, get in streams().items():
        data = get()
        f, y = predictions(data), [target for _, target in data]
        cells = {(beta, lr, window): replay_intervals(f, y, head=ConformalHead(lr=lr, window=window, beta=beta),
                                                      count_from=50)
                 for beta, lr, window in settings}
        jk_cov, jk_width = JACKKNIFE[name]
        ok = {s: abs(c - 0.9) <= 0.015 and (jk_cov < 0.9 or w <= jk_width) for s, (c, w) in cells.items()}
        held += sum(ok.values())
        cov = [c for c, _ in cells.values()]
        wid = [w for _, w in cells.values()]
        default = cells[(0.95, 0.1, 100)]
        print(f"{name:14s} defaults {100 * default[0]:.1f} % at {default[1]:.4g}; over the 27 settings "
              f"{100 * min(cov):.1f}-{100 * max(cov):.1f} %, widths {min(wid):.4g}-{max(wid):.4g}; "
              f"{sum(ok.values())} of 27 hold the check's bars", flush=True)
        for s, good in ok.items():
            if not good:
                print(f"  beta {s[0]}, lr {s[1]}, window {s[2]}: {100 * cells[s][0]:.1f} % at {cells[s][1]:.4g}")
    print(f"{held} of {27 * 3} (stream, setting) cells hold")


if __name__ == "__main__":
    main()
