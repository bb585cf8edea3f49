"""Raker's and AdaRaker's exponential-weights step eta_w (and D, eta) swept on staged sets that are not
in the comparison of docs/results/raker.md: spambase, svmguide1, ijcnn1 (first 20,000 rows; mistake %),
parkinson, elevators (MSE / the running mean's MSE). Mean over permutations 0 and 1 (okl's order).

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/raker_defaults.py
"""
import sys

import numpy as np

import okl
from okl.data.registry import permutation

SETS = (("spambase", None), ("svmguide1", None), ("ijcnn1", 20000), ("parkinson", None), ("elevators", None))


def score(name, rows, learner, params, seeds=(0, 1)):
    X, y = okl.load_dataset(name)
    reg = len(np.unique(y)) > 2
    out = []
    for seed in seeds:
        p = permutation(len(y), seed)[:rows]
        Xp, yp = np.ascontiguousarray(X[p]), np.asarray(y, float)[p]
        tr = okl.make(learner, random_state=seed, **({"loss": "squared"} if reg else {}), **params).run(Xp, yp)
        if reg:
            mean = np.concatenate([[0.0], np.cumsum(yp)[:-1] / np.arange(1, len(yp))])
            out.append(np.mean((tr.decisions - yp) ** 2) / np.mean((mean - yp) ** 2))
        else:
            out.append(tr.mistake_rate)
    return float(np.mean(out))


def main():
    learner = sys.argv[1] if len(sys.argv) > 1 else "raker"
    grid = [{"eta_w": e} for e in (0.05, 0.2, 0.5, 1.0, 2.0, 5.0)]
    grid += [{"eta_w": 1.0, "budget": 200}, {"eta_w": 1.0, "eta": 0.5}, {"eta_w": 1.0, "eta": 0.1}]
    print("| " + learner + " | " + " | ".join(n for n, _ in SETS) + " |")
    print("|---" * (len(SETS) + 1) + "|")
    for params in grid:
        cells = [score(n, r, learner, params) for n, r in SETS]
        print("| " + ", ".join(f"{k}={v}" for k, v in params.items()) + " | "
              + " | ".join(f"{c:.4g}" for c in cells) + " |", flush=True)
    for ref in ("fogd", "auto"):
        cells = [score(n, r, ref, {}) for n, r in SETS]
        print(f"| {ref} | " + " | ".join(f"{c:.4g}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
