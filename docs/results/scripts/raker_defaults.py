"""Raker's defaults (eta_w, D per kernel, eta, the width grid) and AdaRaker's checked on staged sets that
are not in the comparison of docs/results/raker.md: spambase, svmguide1, ijcnn1 (first 20,000 rows),
elevators (mistake %), parkinson (MSE / the running mean's MSE). Mean over permutations 0 and 1.

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/raker_defaults.py
"""
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


W5 = [10.0 ** (j / 2) for j in range(-2, 3)]
GRID = (("raker", {}), ("raker", {"eta_w": 0.05}), ("raker", {"eta_w": 5.0}), ("raker", {"n_components": 100}),
        ("raker", {"eta": 0.2}), ("raker", {"eta": 0.5}), ("raker", {"eta": 1.0}),
        ("raker", {"widths": W5, "n_components": 400}),
        ("adaraker", {}), ("adaraker", {"restart_share": "interval", "shortest": 64}), ("fogd", {}), ("auto", {}))


def main():
    print("| learner | " + " | ".join(n for n, _ in SETS) + " |")
    print("|---" * (len(SETS) + 1) + "|")
    for learner, params in GRID:
        cells = [score(n, r, learner, params) for n, r in SETS]
        text = ", ".join(f"{k}={'5 widths 10^(j/2)' if k == 'widths' else v}" for k, v in params.items())
        print(f"| {learner} {text or '(defaults)'} | " + " | ".join(f"{c:.4g}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
