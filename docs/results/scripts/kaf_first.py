"""KNLMS, KAP and BSGD (okl.learners.knlms, okl.learners.bsgd) at the library defaults beside KLMS, BOGD, NOGD
and the linear learner on staged sets (mean over permutations 0-2, every round counted, predict-then-learn),
BSGD's lambda validation, the KAF series in time order, and per-event speed against run().

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/kaf_first.py [--part NAME]
"""
import argparse
import os
import time

import numpy as np

import okl

from okl.data.series import embed, load_series, mse_db

LEARNERS = (("knlms", {}), ("kap", {}), ("bsgd", {}), ("bsgd", {"maintenance": "remove"}),
            ("bsgd", {"maintenance": "project"}), ("klms", {}), ("bogd", {}), ("nogd", {}), ("linear", {}))
SETS = (("german", None), ("codrna", 20000), ("cpusmall", None), ("cadata", None))


def permuted(name, seed, rows=None):
    X, y = okl.load_dataset(name)
    p = np.random.default_rng(seed).permutation(len(y))[:rows]
    return np.ascontiguousarray(X[p]), np.asarray(y, float)[p]


def label(name, params):
    return name + "".join(f" {v}" for v in params.values())


def staged():
    print("| set | rounds | metric | " + " | ".join(label(n, p) for n, p in LEARNERS) + " | baseline |")
    print("|---|---|---|" + "---|" * (len(LEARNERS) + 1))
    speeds = {}
    for name, rows in SETS:
        cells = {label(n, p): [] for n, p in LEARNERS}
        rates = {label(n, p): [] for n, p in LEARNERS}
        base = []
        for seed in range(3):
            X, y = permuted(name, seed, rows)
            reg = len(np.unique(y)) > 2
            for lrn, params in LEARNERS:
                kw = {"loss": "squared"} if reg else {}
                tr = okl.make(lrn, random_state=seed, **kw, **params).run(X, y)
                cells[label(lrn, params)].append(np.mean((tr.decisions - y) ** 2) if reg else tr.mistake_rate)
                rates[label(lrn, params)].append(len(y) / tr.seconds)
            if reg:  # the running mean of the targets seen before each round
                mean = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))])
                base.append(np.mean((mean - y) ** 2))
            else:
                base.append(100.0 * (1 - max(np.mean(y > 0), np.mean(y < 0))))
        fmt = "{:.4g}" if reg else "{:.2f}"
        print(f"| {name} | {len(y):,} | {'MSE' if reg else 'mistake %'} | "
              + " | ".join(fmt.format(np.mean(v)) for v in cells.values()) + f" | {fmt.format(np.mean(base))} |",
              flush=True)
        speeds[name] = {k: np.median(v) for k, v in rates.items()}
    print("\nrun() rounds/s (median of the three runs; the first run of a learner loads its compiled code):\n")
    print("| set | " + " | ".join(label(n, p) for n, p in LEARNERS) + " |")
    print("|---|" + "---|" * len(LEARNERS))
    for name, row in speeds.items():
        print(f"| {name} | " + " | ".join(f"{v:,.0f}" for v in row.values()) + " |")


def lambda_sweep():
    lams = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
    print("| set | " + " | ".join(f"lambda {v:g}" for v in lams) + " |")
    print("|---|" + "---|" * len(lams))
    for name in ("german", "svmguide3", "spambase", "codrna", "ijcnn1", "splice", "cpusmall", "cadata", "parkinson"):
        cells = {v: [] for v in lams}
        for seed in (0, 1):
            X, y = permuted(name, seed, 20000)
            reg = len(np.unique(y)) > 2
            for v in lams:
                tr = okl.make("bsgd", regularization=v, **({"loss": "squared"} if reg else {})).run(X, y)
                cells[v].append(np.mean((tr.decisions - y) ** 2) if reg else tr.mistake_rate)
        fmt = "{:.4g}" if reg else "{:.2f}"
        print(f"| {name} | " + " | ".join(fmt.format(np.mean(c)) for c in cells.values()) + " |", flush=True)


def eps_sweep(data):
    """KNLMS's and KAP's regulariser eps: KAFBOX's (1e-4, 1e-2) and larger ones."""
    for lrn, epss in (("knlms", (1e-4, 1e-3, 1e-2, 1e-1, 1.0)), ("kap", (1e-2, 1e-1, 1.0, 10.0))):
        print(f"\n{lrn}:\n\n| set | " + " | ".join(f"eps {e:g}" for e in epss) + " |")
        print("|---|" + "---|" * len(epss))
        for name in ("german", "spambase", "codrna", "cpusmall", "cadata", "parkinson"):
            cells = {e: [] for e in epss}
            for seed in range(3):
                X, y = permuted(name, seed, 20000)
                reg = len(np.unique(y)) > 2
                for e in epss:
                    tr = okl.make(lrn, regularization=e, **({"loss": "squared"} if reg else {})).run(X, y)
                    cells[e].append(np.mean((tr.decisions - y) ** 2) if reg else tr.mistake_rate)
            fmt = "{:.4g}" if reg else "{:.2f}"
            print(f"| {name} | " + " | ".join(fmt.format(np.mean(c)) for c in cells.values()) + " |", flush=True)
        for name, p in (("lorenz", 6), ("mg30", 7), ("santafe", 6)):
            X, y = embed(load_series(name, data), p)
            cells = [mse_db(okl.make(lrn, loss="squared", regularization=e).run(X, y).decisions, y) for e in epss]
            print(f"| {name} (dB) | " + " | ".join(f"{c:.2f}" for c in cells) + " |", flush=True)


def kaf_series(data):
    names = (("knlms", {}), ("kap", {}), ("knlms", "paper"), ("kap", "paper"), ("bsgd", {}),
             ("bsgd", {"maintenance": "remove"}), ("klms", {}), ("nogd", {}), ("linear", {}))
    names = [(n, {"regularization": okl.learner_class(n).paper_params(100)["regularization"]} if p == "paper" else p)
             for n, p in names]
    print("| series | embedding | variance (dB) | " + " | ".join(label(n, p) for n, p in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for name, p in (("lorenz", 6), ("mg30", 7), ("santafe", 6)):
        X, y = embed(load_series(name, data), p)
        cells = [mse_db(okl.make(n, loss="squared", random_state=0, **kw).run(X, y).decisions, y) for n, kw in names]
        print(f"| {name} | {p} | {10 * np.log10(np.var(y[1000:])):.2f} | " + " | ".join(f"{c:.2f}" for c in cells)
              + " |", flush=True)
    X, y = embed(load_series("lorenz", data), 6)
    kw = dict(loss="squared", kernel=okl.RBF(sigma=32.0), scale=None, center_targets=False)
    print("\nLorenz with KAFBOX's kernel (width 32, raw values, no target centring), 1,000 centres:")
    for n, extra in (("knlms", {}), ("kap", {}), ("knlms", "paper"), ("kap", "paper"), ("klms", {})):
        if extra == "paper":  # KAFBOX's eps
            extra = {"regularization": okl.learner_class(n).paper_params(1000)["regularization"]}
        tr = okl.make(n, budget=1000, **kw, **extra).run(X, y)
        print(f"  {label(n, extra)}: {mse_db(tr.decisions, y):.2f} dB")


def events_per_second(model, X, y):
    """predict_one then learn_one on each row, timed."""
    start = time.perf_counter()
    for x, target in zip(X, y):
        model.predict_one(x)
        model.learn_one(x, target)
    return len(y) / (time.perf_counter() - start)


def per_event():
    print("| learner | set | rounds | run() rounds/s | per event events/s | ratio |")
    print("|---|---|---|---|---|---|")
    for lrn, params in (("knlms", {}), ("kap", {}), ("bsgd", {}), ("bsgd", {"maintenance": "project"})):
        X, y = permuted("codrna", 0, 20000)
        okl.make(lrn, **params).run(X[:300], y[:300])  # (loads the compiled code)
        run_rates, event_rates = [], []
        for _ in range(2):  # (best of two)
            run_rates.append(len(y) / okl.make(lrn, **params).run(X, y).seconds)
            event_rates.append(events_per_second(okl.make(lrn, **params), X, y))
        best = [max(run_rates), max(event_rates)]
        print(f"| {label(lrn, params)} | codrna | {len(y):,} | {best[0]:,.0f} | {best[1]:,.0f} | "
              f"{best[1] / best[0]:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("OKL_DATA", "../shared/datasets"))
    ap.add_argument("--part", choices=("staged", "lambda", "eps", "series", "events", "all"), default="all")
    args = ap.parse_args()
    if args.part in ("staged", "all"):
        staged()
    if args.part in ("lambda", "all"):
        print()
        lambda_sweep()
    if args.part in ("eps", "all"):
        eps_sweep(args.data)
    if args.part in ("series", "all"):
        print()
        kaf_series(args.data)
    if args.part in ("events", "all"):
        print()
        per_event()


if __name__ == "__main__":
    main()
