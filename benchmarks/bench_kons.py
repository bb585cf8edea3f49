"""Speed of PROS-N-KONS and B-KONS: the library's O(j^2)-per-round learner against a naive one.

The naive version is PNK Algorithm 1 written directly: every round it rebuilds the temporary
KORS dictionary's (S K S + gamma I) and solves it (O(j^3)), computes phi~ from the paper's
eigen map, and solves with A itself for the projection and the ONS step (O(j^3)); A new
eigendecomposition per dictionary addition. Both consume the same random draws, so the script
also checks that they make the same predictions.

    python benchmarks/bench_kons.py                  # cadata and ijcnn1, alpha = gamma = 1
    python benchmarks/bench_kons.py --rows 20000 --naive-rows 5000 --alpha 0.01

Rounds/s are measured on the same permuted prefix for both (the naive one on a shorter prefix
when it is slow: its rate is for that prefix and the fast rate on the same prefix is printed
beside it). BLAS runs on one thread (as in the learners).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import okl  # noqa: E402
from okl.data import permutation  # noqa: E402
from okl.losses import get_loss  # noqa: E402


def naive_kons(X, y, *, alpha, gamma, eps=0.5, beta=1.0, C=1.0, loss="hinge", kernel, seed, budget=None):
    """PNK Alg. 1 with a refactorisation of every j x j system each round."""
    lossf = get_loss(loss)
    sigma = lossf.curvature(C) or 1.0 / (8 * C * C)
    U = np.random.default_rng(seed).random(len(y))
    D, p = [], []
    E = np.zeros((0, 0))
    v = np.zeros(0)
    A = np.zeros((0, 0))
    start = False
    out = np.empty(len(y))
    for t in range(len(y)):
        k_row = kernel(X[t][None, :], X[D])[0] if D else np.zeros(0)
        phi = E @ k_row
        z = phi @ v
        if start:
            w = v.copy()
            f = z
        else:
            h = np.sign(z) * max(abs(z) - C, 0.0)
            if h != 0.0:
                a = np.linalg.solve(A, phi)
                w = v - h / (phi @ a) * a
            else:
                w = v.copy()
            f = z - h
        out[t] = f
        gd = lossf.derivative(f, y[t])
        if gd != 0.0 and phi.size:
            A = A + sigma / 2 * gd * gd * np.outer(phi, phi)
            v = w - np.linalg.solve(A, gd * phi)
        else:
            v = w
        start = False
        if budget is None or len(D) < budget:
            s = 1.0 / np.sqrt(np.append(p, 1.0))
            kb = np.append(k_row, 1.0)
            Kb = np.empty((len(D) + 1, len(D) + 1))
            if D:
                Kb[:-1, :-1] = K
            Kb[-1, :] = Kb[:, -1] = kb
            M = np.outer(s, s) * Kb + gamma * np.eye(len(D) + 1)
            tau = (1 + eps) / gamma * (1.0 - (s * kb) @ np.linalg.solve(M, s * kb))
            pt = min(beta * tau, 1.0)
            if U[t] < pt:
                D.append(t)
                p.append(pt)
                K = Kb
                lam, V = np.linalg.eigh(K)
                keep = lam > len(D) * np.finfo(float).eps * lam[-1]
                E = V[:, keep].T / np.sqrt(lam[keep])[:, None]
                v = np.zeros(E.shape[0])
                A = alpha * np.eye(E.shape[0])
                start = True
    return out, D


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="cadata,ijcnn1")
    ap.add_argument("--rows", type=int, default=None, help="rows of permutation 0 for the fast learners")
    ap.add_argument("--naive-rows", type=int, default=20000)
    ap.add_argument("--alpha", type=float, default=1.0, help="alpha = gamma")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()
    kernel = okl.RBF(sigma=8.0)
    print(f"alpha = gamma = {args.alpha}, sigma = 8, one BLAS thread")
    print("| dataset | learner | rows | rounds/s fast | #SV | naive rows | rounds/s naive "
          "| rounds/s fast (same rows) | ratio | max |diff| |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        X, y = okl.load_dataset(name, args.data_dir)
        loss = "squared" if okl.data.dataset_info(name).task == "regression" else "hinge"
        order = permutation(len(y), 0)
        Xp, yp = X[order], y[order]
        for learner, budget in (("pros-n-kons", None), ("b-kons", 100)):
            params = dict(alpha=args.alpha, gamma=args.alpha, loss=loss, kernel=kernel, random_state=0)
            if budget:
                params["budget"] = budget
            okl.make(learner, **params).run(Xp[:50], yp[:50])  # load the compiled loops
            n = len(yp) if args.rows is None else min(args.rows, len(yp))
            m = okl.make(learner, **params)
            trace = m.run(Xp[:n], yp[:n])
            fast_rate = n / trace.seconds
            nn = min(args.naive_rows, n)
            m2 = okl.make(learner, **params)
            t0 = time.perf_counter()
            same = m2.run(Xp[:nn], yp[:nn])
            fast_same = nn / (time.perf_counter() - t0)
            t0 = time.perf_counter()
            ref, D = naive_kons(Xp[:nn], yp[:nn], alpha=args.alpha, gamma=args.alpha, loss=loss, kernel=kernel,
                                seed=0, budget=budget)
            naive_rate = nn / (time.perf_counter() - t0)
            diff = float(np.abs(ref - same.decisions).max())
            assert D == m2.growth_rounds_, "naive and fast dictionaries differ"
            print(f"| {name} | {learner} | {n} | {fast_rate:,.0f} | {m.diagnostics()['dictionary_size']} | {nn} | "
                  f"{naive_rate:,.0f} | {fast_same:,.0f} | {fast_same / naive_rate:.0f}x | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
