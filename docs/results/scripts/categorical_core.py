"""ChickWeights with the chick id and diet declared categorical: through the core API (a numeric
array, ``okl.make("auto", categorical=[...])``) against the River adapter
(``OKLRiverRegressor(categorical=["chick", "diet"])``), both predict-then-learn over the whole
stream at the library defaults, seed 0 (docs/results/categorical.md, "The core API").

usage: PYTHONPATH=$PWD/src python docs/results/scripts/categorical_core.py [--seeds 0,1,2]
"""
import argparse
import time
import warnings

import numpy as np
from river import datasets

import okl
from okl.river import OKLRiverRegressor

ap = argparse.ArgumentParser()
ap.add_argument("--seeds", default="0")
args = ap.parse_args()
warnings.simplefilter("ignore", RuntimeWarning)

rows = list(datasets.ChickWeights())
KEYS = ["time", "diet", "chick"]
X = np.array([[float(x[k]) for k in KEYS] for x, _ in rows])
y = np.array([float(t) for _, t in rows])


def core_mae(seed: int, cats=(1, 2)) -> float:
    m = okl.make("auto", loss="squared", random_state=seed, categorical=list(cats) if cats else None)
    errors = []
    for x, t in zip(X, y):
        errors.append(abs(t - m.predict_one(x)))
        m.learn_one(x, t)
    return float(np.mean(errors))


def adapter_mae(seed: int, cats=("chick", "diet")) -> float:
    m = OKLRiverRegressor(seed=seed, categorical=list(cats) if cats else None)
    errors = []
    for x, t in rows:
        p = m.predict_one(x)
        errors.append(abs(t - (0.0 if p is None else p)))
        m.learn_one(x, t)
    return float(np.mean(errors))


print(f"ChickWeights: {len(rows)} events, features {KEYS}; MAE, predict-then-learn")
print("| seed | adapter, chick+diet declared | core, chick+diet declared | core, none declared |")
print("|---|---|---|---|")
for seed in [int(s) for s in args.seeds.split(",")]:
    t0 = time.perf_counter()
    a, c, plain = adapter_mae(seed), core_mae(seed), core_mae(seed, None)
    print(f"| {seed} | {a:.4f} | {c:.4f} | {plain:.4f} |  ({time.perf_counter() - t0:.1f} s)")
