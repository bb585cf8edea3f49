"""The default regressor's 90 % intervals on regression streams held out from ../shared/checks/timeseries.py,
under its protocol: ``OKLRiverRegressor(seed=0).predict_interval_one(x, alpha=0.1)`` before each
label from the 51st on, beside River's ``conf.RegressionJackknife`` around the same model (coverage
and mean width). The streams: River's SP500Stocks (1,257 days) and synthetic streams with drift
(FriedmanDrift: gradual, local-expanding abrupt, global-and-slow gradual; Planes2D; Mv; the first
5,000 of each, seed 42), none of them the check's.

usage: PYTHONPATH=src python docs/results/scripts/heldout_regressor_intervals.py [name,name,...]
(docs/results/timeseries.md, ninth round; about 10 s in all)
"""
from __future__ import annotations

import itertools
import sys


def streams() -> dict:
    from river import datasets
    from river.datasets import synth

    def first(stream, n=5000):
        return lambda: list(itertools.islice(stream, n))

    return {
        "SP500Stocks": lambda: list(datasets.SP500Stocks()),
        "FriedmanDrift-gra": first(synth.FriedmanDrift(drift_type="gra", position=(1500, 3500), seed=42)),
        "FriedmanDrift-lea": first(synth.FriedmanDrift(drift_type="lea", position=(1000, 2500, 4000), seed=42)),
        "FriedmanDrift-gsg": first(synth.FriedmanDrift(drift_type="gsg", position=(1500, 3500),
                                                       transition_window=500, seed=42)),
        "Planes2D": first(synth.Planes2D(seed=42)),
        "Mv": first(synth.Mv(seed=42)),
    }


def main(argv: list[str]) -> None:
    from river import conf

    from okl.river import OKLRiverRegressor

    table = streams()
    names = argv[0].split(",") if argv else list(table)
    for name in names:
        model = OKLRiverRegressor(seed=0)
        jackknife = conf.RegressionJackknife(OKLRiverRegressor(seed=0), confidence_level=0.9)
        inside = width = inside_j = width_j = n = 0
        for i, (x, y) in enumerate(table[name]()):
            if i >= 50:
                iv = model.predict_interval_one(x, alpha=0.1)
                ij = jackknife.predict_one(x, with_interval=True)
                inside += iv.lower <= y <= iv.upper
                width += iv.upper - iv.lower
                inside_j += ij.lower <= y <= ij.upper
                width_j += ij.upper - ij.lower
                n += 1
            model.learn_one(x, y)
            jackknife.learn_one(x, y)
        print(f"{name:18s} {n:5d} labels: okl {100 * inside / n:5.1f} %, mean width {width / n:8.4g} | "
              f"River Jackknife {100 * inside_j / n:5.1f} %, {width_j / n:8.4g}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
