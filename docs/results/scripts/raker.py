"""Raker and AdaRaker (okl.learners.raker) beside fogd, auto and linear on german, codrna (first 20,000
rows of each permutation), cpusmall and cadata: okl's default permuted run (permutations 0..4, every round
counted, library defaults; loss squared on the regression sets), plus Raker / AdaRaker with the published
protocol's parameters (paper_params). Mistake % or MSE (mean over the runs) and run() rounds/s (median).
Then per event (predict_one + learn_one) against run() on codrna.

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/raker.py
"""
import time

import numpy as np

import okl
from okl.data.registry import permutation

SETS = (("german", None), ("codrna", 20000), ("cpusmall", None), ("cadata", None))
LEARNERS = ("raker", "adaraker", "fogd", "auto", "linear", "raker paper", "adaraker paper")
RUNS = 5


def learner(label, reg, seed):
    name, _, paper = label.partition(" ")
    params = okl.learner_class(name).paper_params(100) if paper else {}
    return okl.make(name, random_state=seed, **({"loss": "squared"} if reg else {}), **params)


def main():
    print("| set | rounds | measure | " + " | ".join(LEARNERS) + " | baseline |")
    print("|---" * (len(LEARNERS) + 4) + "|")
    for name, rows in SETS:
        X, y = okl.load_dataset(name)
        reg = len(np.unique(y)) > 2
        score = {k: [] for k in LEARNERS}
        speed = {k: [] for k in LEARNERS}
        base = []
        for seed in range(RUNS):
            p = permutation(len(y), seed)[:rows]
            Xp, yp = np.ascontiguousarray(X[p]), np.asarray(y, float)[p]
            for label in LEARNERS:
                m = learner(label, reg, seed)
                t = time.perf_counter()
                tr = m.run(Xp, yp)
                speed[label].append(len(yp) / (time.perf_counter() - t))
                score[label].append(np.mean((tr.decisions - yp) ** 2) if reg else tr.mistake_rate)
            if reg:
                mean = np.concatenate([[0.0], np.cumsum(yp)[:-1] / np.arange(1, len(yp))])
                base.append(np.mean((mean - yp) ** 2))
            else:
                base.append(100.0 * (1 - max(np.mean(yp > 0), np.mean(yp < 0))))
        fmt = "{:.4g}" if reg else "{:.2f}"
        print(f"| {name} | {len(yp):,} | {'MSE' if reg else 'mistake %'} | "
              + " | ".join(fmt.format(np.mean(score[k])) + " ± " + fmt.format(np.std(score[k])) for k in LEARNERS)
              + f" | {fmt.format(np.mean(base))} |")
        print(f"| {name} | | rounds/s | " + " | ".join(f"{np.median(speed[k]):,.0f}" for k in LEARNERS) + " | |",
              flush=True)
    print()
    print("| learner | set | rounds | run() rounds/s | per event events/s | ratio |")
    print("|---|---|---|---|---|---|")
    X, y = okl.load_dataset("codrna")
    p = permutation(len(y), 0)[:20000]
    X, y = np.ascontiguousarray(X[p]), np.asarray(y, float)[p]
    for name in ("raker", "adaraker", "fogd"):
        best = [0.0, 0.0]
        for _ in range(3):
            t = time.perf_counter()
            okl.make(name).run(X, y)
            run = len(y) / (time.perf_counter() - t)
            m = okl.make(name)
            t = time.perf_counter()
            for i in range(len(y)):
                m.predict_one(X[i])
                m.learn_one(X[i], y[i])
            ev = len(y) / (time.perf_counter() - t)
            best = [max(best[0], run), max(best[1], ev)]
        print(f"| {name} | codrna | {len(y):,} | {best[0]:,.0f} | {best[1]:,.0f} | {best[1] / best[0]:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
