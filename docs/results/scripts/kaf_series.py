"""One-step prediction on the kernel adaptive filtering series (../shared/datasets/kaf, KAFBOX's data
files), in time order: input = the last p values (zero-padded at the start), target = the next
value; predict-then-learn over every sample, MSE in dB over samples 1001..end (the KAFBOX demo's
protocol for Lorenz). okl's learners at their defaults (regression: squared loss), and KLMS / QKLMS
with the published kernel form (a Gaussian of width 32 on the raw values, scale=None) for Lorenz.

    PYTHONPATH=$PWD/src python docs/results/scripts/kaf_series.py [--data ../shared/datasets]
"""
import argparse
import gzip
import os
import time

import numpy as np

import okl


def series(path):
    with gzip.open(path, "rt") as fh:
        return np.array([float(line.split(",")[0]) for line in fh if line.strip()])


def embed(s, p):
    X = np.zeros((len(s) - 1, p))
    for lag in range(p):
        X[lag:, lag] = s[: len(s) - 1 - lag]  # column lag: the value lag + 1 steps back
    return np.ascontiguousarray(X), s[1:].copy()


def mse_db(pred, y, skip=1000):
    return 10 * np.log10(np.mean((pred[skip:] - y[skip:]) ** 2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("OKL_DATA", "../shared/datasets"))
    args = ap.parse_args()
    rows = []
    for name, p in (("lorenz", 6), ("mg30", 7), ("santafe", 6)):
        X, y = embed(series(os.path.join(args.data, "kaf", f"{name}.dat.gz")), p)
        var_db = 10 * np.log10(np.var(y[1000:]))
        cells = {}
        for lrn in ("klms", "qklms", "linear", "nogd", "fogd", "auto"):
            t0 = time.perf_counter()
            tr = okl.make(lrn, loss="squared", random_state=0).run(X, y)
            cells[lrn] = (mse_db(tr.decisions, y), len(y) / (time.perf_counter() - t0))
        if name == "lorenz":
            for lrn in ("klms", "qklms"):
                tr = okl.make(lrn, loss="squared", kernel=okl.RBF(sigma=32.0), scale=None, center_targets=False,
                              budget=1000).run(X, y)
                cells[f"{lrn} (sigma 32, raw, B 1000)"] = (mse_db(tr.decisions, y), float("nan"))
        rows.append((name, p, len(y), var_db, cells))
    for name, p, n, var_db, cells in rows:
        print(f"\n{name}: embedding {p}, {n:,} samples; the series' variance after sample 1000: {var_db:.2f} dB")
        print("| learner | MSE dB (samples 1001..) | rounds/s |")
        print("|---|---|---|")
        for lrn, (db, rate) in cells.items():
            print(f"| {lrn} | {db:.2f} | {'' if rate != rate else f'{rate:,.0f}'} |")


if __name__ == "__main__":
    main()
