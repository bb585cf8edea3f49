"""Speed of ``auto`` beside its members, in the same run (same process, same rows).

    python benchmarks/auto.py --data-dir ../shared/datasets [--dataset codrna] [--rows N] [--seed 0]

Runs ``auto`` with library defaults (``okl.make("auto")``, as ``okl run`` does: no horizon) on the
dataset's permutation ``seed``, then every member alone with exactly the hyperparameters auto gave
it (its kernel at the chosen width, its seed), on the same rows. Prints, per learner, the metric
over every round, the seconds and the rounds per second, then the sum over the members and auto's
own overhead (aggregation, copying the decisions): auto's time minus the members' sum. Each learner
first runs once on a 300-row prefix so that compiling its Numba loops is not timed.
Targets: issue 15 asked 100,000 rounds/s for auto on codrna, issue 24 150,000 (not reached: the
floor is written in docs/results/per-event-speed.md). auto runs its members in one compiled engine
(``okl.engine.core``) and shares work between them (NOGD's two steps at one width read one
map's features; the FOGD members share one draw of directions), so its time can be below the sum
of its members run alone (each alone draws its own FOGD directions).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import okl
from okl.data import permutation


def timed(learner, X, y):
    t0 = time.perf_counter()
    trace = learner.run(X, y)
    return trace, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--dataset", default="codrna")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    X, y = okl.load_dataset(args.dataset, args.data_dir)
    X, y = np.asarray(X, float), np.asarray(y, float)
    p = permutation(len(y), args.seed)[: args.rows]
    X, y = X[p], y[p]
    regression = not set(np.unique(y)) <= {-1.0, 1.0}
    params = {"loss": "squared"} if regression else {}

    okl.make("auto", random_state=args.seed, **params).run(X[:300], y[:300])  # compile
    auto = okl.make("auto", random_state=args.seed, **params)
    trace, seconds = timed(auto, X, y)
    rows = [("auto", trace.metric, seconds)]
    total = 0.0
    labels = [auto.member_labels()[i] for i in auto.member_index_]
    for label, member in zip(labels, auto.pool_):
        member.clone().run(X[:300], y[:300])  # compile
        mtrace, msec = timed(member.clone(), X, y)
        total += msec
        rows.append((label, mtrace.metric, msec))
    metric = "MSE" if regression else "mistakes %"
    print(f"{args.dataset}: {len(y)} rounds, d = {X.shape[1]}, permutation {args.seed}; auto with "
          f"{len(labels)} members, sigma_0 = {auto.kernel_.sigma:.4g}")
    print(f"{'learner':34s} {metric:>11s} {'seconds':>9s} {'rounds/s':>12s}")
    for name, value, sec in rows:
        print(f"{name:34s} {value:11.4f} {sec:9.3f} {len(y) / sec:12,.0f}")
    print(f"{'sum of the members':34s} {'':11s} {total:9.3f} {len(y) / total:12,.0f}")
    print(f"auto overhead (aggregation): {seconds - total:.3f} s = {1e6 * (seconds - total) / len(y):.2f} "
          f"us/round; auto / members = {seconds / total:.3f}")
    w = {k[len('weight['):-1]: v for k, v in trace.diagnostics.items() if k.startswith("weight[")}
    top = sorted(w.items(), key=lambda kv: -kv[1])[:3]
    print("final weights (top 3): " + ", ".join(f"{k} {v:.3f}" for k, v in top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
