"""Per-event speed (issue 17): predict_one + learn_one for every registered learner beside River's
``LogisticRegression`` (predict_proba_one + learn_one), in the same process on the same rows of
codrna (permutation 0); then ``okl stream`` end to end (process start included) on a svmlight file
of codrna rows. Not a timed test: the machine's load moves every rate, compare the ratios.

    python benchmarks/events.py --data-dir ../shared/datasets [--rows 20000] [--stream-lines 500000]
        [--learners forks,nogd,skegd,fogd] [--budget 200] [--sigma 1.0]

Printed per learner: per-event events/s, the ratio to River's rate, the learner's own ``run()``
rounds/s on the same rows (the compiled loop: what the per-event path can approach, as the
features of a row cost what they cost), and the largest |per-event decision - run() decision|.
``--budget`` / ``--sigma`` default to those of ``../shared/checks/events.py`` (B = 200, sigma = 1;
every other hyperparameter is the library default); pass ``--budget 0`` for the learners' own
default budgets and ``--sigma 0`` for the width chosen from the stream.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import okl
from okl.data import permutation


def river_rate(X, y) -> float:
    try:
        from river import linear_model
    except ImportError:  # pragma: no cover
        return float("nan")
    dicts = [dict(enumerate(r)) for r in X]
    lr = linear_model.LogisticRegression()
    t0 = time.perf_counter()
    for d, t in zip(dicts, y):
        lr.predict_proba_one(d)
        lr.learn_one(d, bool(t > 0))
    return len(y) / (time.perf_counter() - t0)


def learner_params(name: str, budget: int, sigma: float) -> dict:
    from okl.learners.base import accepts

    params = {"random_state": 0}

    if budget and accepts(name, "budget"):
        params["budget"] = budget
    if sigma and accepts(name, "kernel"):
        params["kernel"] = okl.RBF(sigma=sigma)
    return params


def per_event(name: str, params: dict, X, y) -> tuple[float, float, float]:
    okl.make(name, **params).run(X[:500], y[:500])  # compile
    t0 = time.perf_counter()
    ref = np.asarray(okl.make(name, **params).run(X, y).decisions, float)
    run_rate = len(y) / (time.perf_counter() - t0)
    m = okl.make(name, **params)
    f = np.empty(len(y))
    t0 = time.perf_counter()
    for i in range(len(y)):
        f[i] = m.predict_one(X[i])
        m.learn_one(X[i], y[i])
    rate = len(y) / (time.perf_counter() - t0)
    return rate, run_rate, float(np.max(np.abs(f - ref)))


def stream_rate(X, y, lines: int, learner: str = "nogd") -> tuple[float, float, int]:
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "events.svm")
    idx = np.resize(np.arange(len(y)), lines)
    with open(path, "w") as fh:
        for i in idx:
            fh.write(("+1" if y[i] > 0 else "-1") + " "
                     + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(X[i])) + "\n")
    t0 = time.perf_counter()
    exe = shutil.which("okl", path=os.path.dirname(sys.executable)) or shutil.which("okl")
    r = subprocess.run([exe, "stream", "--learner", learner, "--input", path,
                        "--format", "svmlight", "--dim", str(X.shape[1]), "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp)
    wall = time.perf_counter() - t0
    os.unlink(path)
    return lines / wall, wall, r.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--learners", default=None, help="comma-separated (default: every registered learner)")
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--stream-lines", type=int, default=500_000)
    args = ap.parse_args(argv)
    X, y = okl.load_dataset("codrna", args.data_dir)
    p = permutation(len(y), 0)[:args.rows]
    X, y = np.ascontiguousarray(np.asarray(X, float)[p]), np.asarray(y, float)[p]
    if args.learners:
        names = args.learners.split(",")
    else:  # every streaming learner (not the feature-evolvable ones; auto runs a pool of them)
        names = []
        for n in okl.learners():
            try:
                if isinstance(okl.make(n), okl.Learner) and n != "auto":
                    names.append(n)
            except (ValueError, TypeError):
                pass
    river = river_rate(X, y)
    print(f"{'learner':<14}{'events/s':>12}{'x River':>9}{'run() rounds/s':>16}{'|event - run|':>15}")
    print(f"{'river LR':<14}{river:>12,.0f}{1.0:>9.2f}")
    for name in names:
        try:
            rate, run_rate, diff = per_event(name, learner_params(name, args.budget, args.sigma), X, y)
        except Exception as exc:  # a learner that does not fit these rows: say so, go on
            print(f"{name:<14} failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{name:<14}{rate:>12,.0f}{rate / river:>9.2f}{run_rate:>16,.0f}{diff:>15.1e}")
    if args.stream_lines:
        rate, wall, rc = stream_rate(X, y, args.stream_lines)
        print(f"okl stream nogd: {args.stream_lines} events in {wall:.2f} s = {rate:,.0f} events/s "
              f"(whole process, library defaults), exit status {rc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
