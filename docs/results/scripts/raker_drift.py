"""Raker and AdaRaker on streams that change: the KAF series in time order (one-step prediction, the
protocol of docs/results/kaf-series.md: embedding p, MSE in dB over samples 1001..end) and the adversarial
streams german-1 / codrna-1 (SkeGD 6.4: blocks of 10 repeats of one row, labels flipped every other
block; mean over seeds 0..2), beside fogd, auto and linear at their defaults; AdaRaker also with
SAOL's restart share min(1/2, 1/sqrt|I|) (restart_share="interval"), at the default shortest interval 8
and at 64.

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/raker_drift.py
"""
import os

import numpy as np

import okl
from okl.data.adversarial import resolve_dataset

from okl.data.series import embed, load_series, mse_db

LEARNERS = (("raker", {}), ("adaraker", {}), ("adaraker", {"restart_share": "interval"}),
            ("adaraker", {"restart_share": "interval", "shortest": 64}), ("fogd", {}), ("auto", {}), ("linear", {}))


def label(name, params):
    return name + "".join(f" {k}={v}" for k, v in params.items())


def main():
    data = os.environ.get("OKL_DATA", "../shared/datasets")
    print("| stream | measure | " + " | ".join(label(*lp) for lp in LEARNERS) + " |")
    print("|---" * (len(LEARNERS) + 2) + "|")
    for name, p in (("lorenz", 6), ("mg30", 7), ("santafe", 6)):
        X, y = embed(load_series(name, data), p)
        cells = [mse_db(okl.make(n, loss="squared", random_state=0, **kw).run(X, y).decisions, y) for n, kw in LEARNERS]
        print(f"| {name} (time order) | MSE dB | " + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)
    for preset in ("german-1", "codrna-1"):
        base, stream = resolve_dataset(preset)
        X, y = okl.load_dataset(base)
        cells = []
        for n, kw in LEARNERS:
            rates = []
            for seed in range(3):
                Xs, ys = stream(X, y, seed)
                rates.append(okl.make(n, random_state=seed, **kw).run(np.ascontiguousarray(Xs), ys).mistake_rate)
            cells.append(np.mean(rates))
        print(f"| {preset} | mistake % | " + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
