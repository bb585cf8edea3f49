"""Per-event speed (issues 17, 24): predict_one + learn_one for every registered learner (``auto``
included) beside River's ``LogisticRegression`` (alone and after a ``StandardScaler``),
``HoeffdingAdaptiveTreeClassifier`` and ``ARFClassifier(n_models=10)``, in the same process on
the same rows of codrna (permutation 0); then ``okl stream`` end to end (process start included,
its default learner, ``auto``, unless ``--stream-learner``) on a svmlight file of codrna rows.
Not a timed test: the machine's load moves every rate, compare the ratios.

    python benchmarks/events.py --data-dir ../shared/datasets [--rows 20000] [--stream-lines 500000]
        [--learners auto,forks,nogd,skegd,fogd] [--budget 200] [--sigma 1.0] [--stream-learner NAME]

The issue-24 table (library defaults, the rows of ``../shared/checks/live.py``)::

    python benchmarks/events.py --data-dir ../shared/datasets --rows 4000 --budget 0 --sigma 0 \
        --learners auto,nogd,forks,skegd,fogd

Printed per learner (each rate the best of 3, after both paths ran once on the first 500 rows so
that loading compiled code, a one-time cost of the process, is not timed): per-event events/s,
the ratio to River's LogisticRegression, the learner's
own ``run()`` rounds/s on the same rows and their ratio (per event / run), the largest
|per-event decision - run() decision| and the mistake rate of the per-event decisions; per River
model its events/s and mistake rate (predict_one before learn_one).
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


def river_models() -> list[tuple[str, object]]:
    """(label, factory) of the River classifiers the issue-24 table compares with."""
    try:
        from river import forest, linear_model, preprocessing, tree
    except ImportError:  # pragma: no cover
        return []
    return [("river Scaler|LR", lambda: preprocessing.StandardScaler() | linear_model.LogisticRegression()),
            ("river HAT", lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=0)),
            ("river ARF(10)", lambda: forest.ARFClassifier(n_models=10, seed=0))]


def river_model_rate(make, X, y) -> tuple[float, float]:
    """(events/s, mistakes %) of predict_one then learn_one per event."""
    dicts = [dict(enumerate(r)) for r in X]
    labels = [bool(t > 0) for t in y]
    m = make()
    wrong = 0
    t0 = time.perf_counter()
    for d, t in zip(dicts, labels):
        wrong += m.predict_one(d) != t
        m.learn_one(d, t)
    return len(y) / (time.perf_counter() - t0), 100.0 * wrong / len(y)


def learner_params(name: str, budget: int, sigma: float) -> dict:
    from okl.runtime.base import accepts

    params = {"random_state": 0}

    if budget and accepts(name, "budget"):
        params["budget"] = budget
    if sigma and accepts(name, "kernel"):
        params["kernel"] = okl.RBF(sigma=sigma)
    return params


def per_event(name: str, params: dict, X, y, repeats: int = 3) -> tuple[float, float, float, float]:
    """(per-event events/s, run() rounds/s, max |per-event - run()| decision, mistakes %): each the
    best of ``repeats`` on fresh learners, after both paths ran once on the first 500 rows (their
    compiled code loaded: a one-time cost of the process, not of an event)."""
    warm = okl.make(name, **params)
    warm.run(X[:500], y[:500])
    warm = okl.make(name, **params)
    for i in range(min(500, len(y))):
        warm.predict_one(X[i])
        warm.learn_one(X[i], y[i])
    run_rate = rate = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        ref = np.asarray(okl.make(name, **params).run(X, y).decisions, float)
        run_rate = max(run_rate, len(y) / (time.perf_counter() - t0))
        m = okl.make(name, **params)
        f = np.empty(len(y))
        t0 = time.perf_counter()
        for i in range(len(y)):
            f[i] = m.predict_one(X[i])
            m.learn_one(X[i], y[i])
        rate = max(rate, len(y) / (time.perf_counter() - t0))
    return rate, run_rate, float(np.max(np.abs(f - ref))), 100.0 * float(np.mean(np.where(f >= 0, 1.0, -1.0) != y))


def stream_rate(X, y, lines: int, learner: str | None = None) -> tuple[float, float, int]:
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "events.svm")
    idx = np.resize(np.arange(len(y)), lines)
    with open(path, "w") as fh:
        for i in idx:
            fh.write(("+1" if y[i] > 0 else "-1") + " "
                     + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(X[i])) + "\n")
    t0 = time.perf_counter()
    exe = shutil.which("okl", path=os.path.dirname(sys.executable)) or shutil.which("okl")
    r = subprocess.run([exe, "stream", *(["--learner", learner] if learner else []), "--input", path,
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
    ap.add_argument("--stream-learner", default=None, help="okl stream's --learner (default: its default, auto)")
    args = ap.parse_args(argv)
    X, y = okl.load_dataset("codrna", args.data_dir)
    p = permutation(len(y), 0)[:args.rows]
    X, y = np.ascontiguousarray(np.asarray(X, float)[p]), np.asarray(y, float)[p]
    if args.learners:
        names = args.learners.split(",")
    else:  # every streaming learner (not the feature-evolvable ones)
        names = []
        for n in okl.learners():
            try:
                if isinstance(okl.make(n), okl.Learner):
                    names.append(n)
            except (ValueError, TypeError):
                pass
    river = river_rate(X, y)
    print(f"{'learner':<16}{'events/s':>12}{'x River':>9}{'run() rounds/s':>16}{'event/run':>10}"
          f"{'|event - run|':>15}{'mistakes %':>12}")
    print(f"{'river LR':<16}{river:>12,.0f}{1.0:>9.2f}")
    for label, make in river_models():
        rate, err = river_model_rate(make, X, y)
        print(f"{label:<16}{rate:>12,.0f}{rate / river:>9.2f}{'':>16}{'':>10}{'':>15}{err:>12.2f}")
    for name in names:
        try:
            rate, run_rate, diff, err = per_event(name, learner_params(name, args.budget, args.sigma), X, y)
        except Exception as exc:  # a learner that does not fit these rows: say so, go on
            print(f"{name:<16} failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{name:<16}{rate:>12,.0f}{rate / river:>9.2f}{run_rate:>16,.0f}{rate / run_rate:>10.3f}"
              f"{diff:>15.1e}{err:>12.2f}")
    if args.stream_lines:
        rate, wall, rc = stream_rate(X, y, args.stream_lines, args.stream_learner)
        print(f"okl stream {args.stream_learner or '(default: auto)'}: {args.stream_lines} events in {wall:.2f} s = "
              f"{rate:,.0f} events/s "
              f"(whole process, library defaults), exit status {rc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
