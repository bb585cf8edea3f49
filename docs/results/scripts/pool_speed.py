"""auto's run() on all of codrna (a fixed permutation) for variants of its pool, best of N interleaved
runs: the cost side of docs/results/auto-pool.md's measurements.

usage: OKL_DATA=../shared/datasets PYTHONPATH=$PWD/src python docs/results/scripts/pool_speed.py \\
           --variant "default;l1d800;l1d1200" [--runs 5]
Variants are auto_pool.py's (VARIANTS, or "params:<dict>"). --groups: instead, auto with only one
family of the default pool's members at a time (and all of them), us per round.
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
ap.add_argument("--groups", action="store_true")
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
if a.groups:
    members = [list(m) for m in pool.default_pool("classification")]
    family = {"nogd": "NOGD", "forks": "FORKS", "linear": "linear", "window": "window"}
    groups: dict = {}
    for m in members:
        name = "FOGD, L1" if m[2].get("kernel") == "laplacian" else family.get(m[0], "FOGD")
        groups.setdefault(name, []).append(m)
    groups["all"] = members
    fastest = dict.fromkeys(groups, np.inf)
    for _ in range(a.runs):
        for g, mem in groups.items():
            m = okl.make("auto", random_state=0, members=mem)
            t0 = time.perf_counter()
            m.run(X, y)
            fastest[g] = min(fastest[g], 1e6 * (time.perf_counter() - t0) / len(y))
    for g, us in fastest.items():
        print(f"{g:9s} {len(groups[g]):2d} members  {us:6.2f} us a round ({us / fastest['all']:.0%} of all)")
    raise SystemExit
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
