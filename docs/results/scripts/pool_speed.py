"""auto's run() on all of codrna (a fixed permutation) for variants of its pool, best of N interleaved
runs: the cost side of docs/results/auto-pool.md's measurements.

usage: OKL_DATA=../shared/datasets PYTHONPATH=$PWD/src python docs/results/scripts/pool_speed.py \\
           --variant "default;l1d800;l1d1200" [--runs 5]
Variants are auto_pool.py's (VARIANTS, or "params:<dict>").
"""
import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--variant", default="default")
ap.add_argument("--runs", type=int, default=5)
a = ap.parse_args()
here = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("auto_pool", here / "auto_pool.py")
pool = importlib.util.module_from_spec(spec)
sys.argv = sys.argv[:1]
spec.loader.exec_module(pool)

import okl  # noqa: E402

X, y = okl.load_dataset("codrna")
p = np.random.default_rng(0).permutation(len(y))
X, y = np.ascontiguousarray(np.asarray(X, float)[p]), np.asarray(y, float)[p]
variants = a.variant.split(";")
best = dict.fromkeys(variants, 0.0)
for _ in range(a.runs):
    for v in variants:
        m = okl.make("auto", random_state=0, **pool.variant_params(v, "classification"))
        t0 = time.perf_counter()
        m.run(X, y)
        best[v] = max(best[v], len(y) / (time.perf_counter() - t0))
for v in variants:
    print(f"{v:12s} auto run() on codrna {best[v]:,.0f} rounds/s ({best[v] / best[variants[0]] - 1:+.1%} against {variants[0]})")
