"""KLMS and QKLMS (okl.learners.klms, okl.learners.qklms) at the library defaults beside the linear learner, the majority rate /
the running-mean predictor, NOGD and auto on staged sets; per event against its own run().

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/klms.py
"""
import time

import numpy as np

import okl


def permuted(name, seed, rows=None):
    X, y = okl.load_dataset(name)
    p = np.random.default_rng(seed).permutation(len(y))[:rows]
    return np.ascontiguousarray(X[p]), np.asarray(y, float)[p]


def main():
    print("| set | rounds | task | klms | qklms | linear | nogd | auto | baseline |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rows in (("german", None), ("spambase", None), ("codrna", 20000), ("cpusmall", None), ("cadata", 10000)):
        cells = {k: [] for k in ("klms", "qklms", "linear", "nogd", "auto", "base")}
        for seed in range(3):
            X, y = permuted(name, seed, rows)
            reg = len(np.unique(y)) > 2
            for lrn in ("klms", "qklms", "linear", "nogd", "auto"):
                tr = okl.make(lrn, random_state=seed, **({"loss": "squared"} if reg else {})).run(X, y)
                cells[lrn].append(np.mean((tr.decisions - y) ** 2) if reg else tr.mistake_rate)
            if reg:  # the running mean of the targets seen before each round
                mean = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))])
                cells["base"].append(np.mean((mean - y) ** 2))
            else:
                cells["base"].append(100.0 * (1 - max(np.mean(y > 0), np.mean(y < 0))))
        fmt = "{:.4g}" if reg else "{:.2f}"
        print(f"| {name} | {len(y):,} | {'MSE' if reg else 'mistake %'} | " + " | ".join(
            fmt.format(np.mean(cells[k])) for k in ("klms", "qklms", "linear", "nogd", "auto", "base")) + " |")
    print()
    print("| learner | set | rounds | run() rounds/s | per event events/s | ratio |")
    print("|---|---|---|---|---|---|")
    for name, rows, lrn in (("german", None, "klms"), ("codrna", 20000, "klms"), ("codrna", 20000, "qklms")):
        X, y = permuted(name, 0, rows)
        okl.make(lrn).run(X[:300], y[:300])  # (loads the compiled code)
        best = [0.0, 0.0]
        for _ in range(3):
            t = time.perf_counter()
            okl.make(lrn).run(X, y)
            run = len(y) / (time.perf_counter() - t)
            m = okl.make(lrn)
            t = time.perf_counter()
            for i in range(len(y)):
                m.predict_one(X[i])
                m.learn_one(X[i], y[i])
            ev = len(y) / (time.perf_counter() - t)
            best = [max(best[0], run), max(best[1], ev)]
        print(f"| {lrn} | {name} | {len(y):,} | {best[0]:,.0f} | {best[1]:,.0f} | {best[1] / best[0]:.2f} |")


if __name__ == "__main__":
    main()
