"""Per-event speed of okl's KRLS-T and SW-KRLS beside the ``krls`` package on PyPI (issue 47), in
the same process on the same rows: the Lorenz series (embedding 6, time order, ``okl.data.series``),
a Gaussian kernel on the raw values, a budget / window of M = 50, the published regularisation
(KRLS-T: lambda 0.999, sn2 1e-2; SW-KRLS: c 1e-2). Not a timed test: compare the ratios.

The width is 3 by default, not the Lorenz demo's 32: the package's KRLS-T skips a new basis when
its novelty gamma^2 <= lambda / 10 (KAFBOX's test is gamma^2 < jitter), so at width 32 its
dictionary stops at 11 elements and at 10 at 41, and the comparison would not be at M = 50; at
width 3 both dictionaries hold 50 (printed).

    pip install -e '.[kaf-bench]'     # the krls package (and the torch it imports); not a dependency
    python benchmarks/kaf_speed.py [--data-dir ../shared/datasets] [--events 5000] [--budget 50]

Per model: its events/s per event (okl: ``predict_one`` + ``learn_one`` on float64 rows; the
package: ``predict`` + ``evolve`` per row after ``fit`` on the first, its streaming API), okl's own
``run()`` rounds/s on the same rows, the ratios, and the MSE (dB) over the rows after the first
1000 of each model's a-priori predictions (the package's ``predict`` before ``evolve``). Each rate
is the best of ``--repeats`` passes, alternating the models, after one untimed pass of okl on the
first 200 rows (loading compiled code is a one-time cost of the process).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import okl
from okl.data.series import embed, load_series, mse_db

SETUPS = {
    "KRLS-T": ("krls-t", {"forgetting": 0.999, "noise": 1e-2}, "KRLS_T", {"gamma": 0.999, "sn2": 1e-2, "c": 1e-6}),
    "SW-KRLS": ("sw-krls", {"regularization": 1e-2}, "SW_KRLS", {"c": 1e-2}),
}


SIGMA = 3.0


def okl_model(name, params, budget, sigma=SIGMA):
    return okl.make(name, loss="squared", kernel=okl.RBF(sigma=sigma), scale=None, center_targets=False,
                    budget=budget, **params)


def okl_per_event(name, params, budget, X, y):
    m = okl_model(name, params, budget)
    out = np.empty(len(y))
    t0 = time.perf_counter()
    for i in range(len(y)):
        x = X[i]
        out[i] = m.predict_one(x)
        m.learn_one(x, y[i])
    return len(y) / (time.perf_counter() - t0), out, m


def okl_run(name, params, budget, X, y):
    m = okl_model(name, params, budget)
    t0 = time.perf_counter()
    out = m.run(X, y).decisions
    return len(y) / (time.perf_counter() - t0), out


def package_per_event(cls_name, params, budget, X, y):
    from krls import krls as package  # (the package's module of the same name; no __init__)

    m = getattr(package, cls_name)(N=budget, kernel_type="Gaussian", sigma=SIGMA, **params)
    out = np.zeros(len(y))
    t0 = time.perf_counter()
    m.fit(X[:1], y[:1])
    for i in range(1, len(y)):
        x = X[i:i + 1]
        out[i] = float(m.predict(x)[0])
        m.evolve(x, y[i:i + 1])
    return len(y) / (time.perf_counter() - t0), out, m.parameters_dict["Dict"].shape[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--budget", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    try:
        from krls import krls as _package  # noqa: F401
        have_package = True
    except ImportError:
        have_package = False
        print("the krls package is not installed (pip install -e '.[kaf-bench]'): okl's rates only")
    X, y = embed(load_series("lorenz", args.data_dir), 6)
    X, y = np.ascontiguousarray(X[:args.events]), y[:args.events].copy()
    rows = []
    for label, (name, params, cls_name, pkg_params) in SETUPS.items():
        okl_per_event(name, params, args.budget, X[:200], y[:200])
        okl_run(name, params, args.budget, X[:200], y[:200])
        best = {"event": 0.0, "run": 0.0, "package": 0.0}
        out = {}
        for _ in range(args.repeats):
            r, out["event"], model = okl_per_event(name, params, args.budget, X, y)
            best["event"] = max(best["event"], r)
            r, out["run"] = okl_run(name, params, args.budget, X, y)
            best["run"] = max(best["run"], r)
            if have_package:
                r, out["package"], pkg_size = package_per_event(cls_name, pkg_params, args.budget, X, y)
                best["package"] = max(best["package"], r)
        print(f"{label}: okl {model.diagnostics()}"
              + (f"; the package's dictionary: {pkg_size} elements" if have_package else ""))
        same = float(np.max(np.abs(out["event"] - out["run"])))
        pkg_rate = best["package"] if have_package else float("nan")
        rows.append((label, best["event"], best["run"], pkg_rate, best["event"] / best["run"],
                     best["event"] / pkg_rate if have_package else float("nan"), mse_db(out["event"], y),
                     mse_db(out["package"], y) if have_package else float("nan"), same))
    print(f"Lorenz, embedding 6, {len(y):,} events in time order, Gaussian width {SIGMA} on raw values, "
          f"M = {args.budget}; best of {args.repeats}")
    print("| model | okl per event (events/s) | okl run() (rounds/s) | krls package per event (events/s) | "
          "okl per event / run() | okl / package per event | okl MSE dB | package MSE dB | max abs(event - run) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, ev, run, pkg, r1, r2, db, pdb, same in rows:
        print(f"| {label} | {ev:,.0f} | {run:,.0f} | {pkg:,.0f} | {r1:.2f}x | {r2:.1f}x | {db:.2f} | {pdb:.2f} | "
              f"{same:.1e} |")


if __name__ == "__main__":
    main()
