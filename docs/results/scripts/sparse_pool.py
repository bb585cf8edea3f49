# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
"""auto's pool on sparse rows (arguments: stream names, default all; docs/results/sparse.md, "auto's pool on sparse rows"): on every
sparse stream we have, auto at library defaults on the CSR rows (the pool for sparse rows) against
the default pool on the same CSR rows, the pool for sparse rows with the families it leaves out
added back, and each linear member alone (``okl.make("auto", members=[...])``), one permutation
each (``okl.data.permutation``, seed 0), predict-then-learn through ``run()``: the mistake rate %
(classification) or the mean squared loss (regression, targets as given) and rounds/s (best of 2).

Streams: one-hot adult (benchmarks/sparse.py's a9a layout, 48,842 rows, 123 columns); one-hot
splice (the 60 nucleotide positions, one column per code seen: 3,175 rows, 240 columns); the
hashed text stream of benchmarks/sparse.py (20,000 rows, 2^20 columns); and two regression
streams made here: one-hot rows of 8 fields x 10 levels with a target linear in the levels plus
Gaussian noise (sd 0.3; 20,000 rows), and the hashed stream's rows with its score plus noise as
the target."""
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import okl
from okl.data import permutation
from okl.ensemble.pool import default_pool, sparse_pool
from okl.ensemble.auto import MEMBER_INPUT_FLOATS
from okl.runtime.base import learner_class

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from sparse import adult_onehot, csr_rows, hashed_stream  # noqa: E402


def adult():
    index, ones, y, d = adult_onehot()
    p = permutation(len(y), 0)
    return csr_rows(index[p], ones[p], d), y[p], "classification"


def splice():
    X, y = okl.load_dataset("splice")
    X = sp.csr_matrix(np.hstack([(X[:, [j]] == np.unique(X[:, j])[None, :]).astype(float)
                                 for j in range(X.shape[1])]))
    p = permutation(len(y), 0)
    return X[p], y[p], "classification"


def hashed(regression=False):
    idx, sign, y = hashed_stream(20_000)
    X = sp.csr_matrix((sign.ravel(), idx.ravel(), np.arange(0, idx.size + 1, idx.shape[1])), shape=(len(y), 2 ** 20))
    if not regression:
        return X, y, "classification"
    rng = np.random.default_rng(1)
    w = np.zeros(2 ** 20)
    w[:5000] = rng.standard_normal(5000)
    return X, X @ w + 0.3 * rng.standard_normal(len(y)), "regression"


def one_hot_regression(n=20_000, fields=8, levels=10):
    rng = np.random.default_rng(2)
    p = 1.0 / np.arange(1, levels + 1)
    codes = np.stack([rng.choice(levels, size=n, p=p / p.sum()) for _ in range(fields)], axis=1)
    cols = codes + levels * np.arange(fields)
    X = sp.csr_matrix((np.ones(n * fields), cols.ravel(), np.arange(0, n * fields + 1, fields)),
                      shape=(n, fields * levels))
    w = rng.standard_normal(fields * levels)
    return X, w[cols].sum(axis=1) + 0.3 * rng.standard_normal(n), "regression"


STREAMS = {"one-hot adult": adult, "one-hot splice": splice, "hashed text": hashed,
           "one-hot regression": one_hot_regression, "hashed regression": lambda: hashed(True)}


def score(f, y, task):
    if task == "classification":
        return 100.0 * np.mean(np.where(f >= 0, 1.0, -1.0) != y)
    return float(np.mean((f - y) ** 2))


def fits(members, d, budget=100):
    """The members auto's default pool would keep at width d (okl.ensemble.auto.MEMBER_INPUT_FLOATS:
    an explicit list keeps them all, and NOGD's rows at 2^20 columns take 1.6 GiB a member)."""
    if members is None:
        return None
    kept = [m for m in members if learner_class(m[0])._rows_per_budget * round(
        budget * m[2].get("budget_scale", learner_class(m[0])._budget_scale)) * d <= MEMBER_INPUT_FLOATS]
    # (and the affine member's products at degree 1 beyond 8B of them, as auto's default pool has it)
    return [[n, w, {**p, "degree": 1}] if p.get("degree") == 2 and d * (d + 1) // 2 > 8 * budget else [n, w, p]
            for n, w, p in kept]


def cell(X, y, task, members):
    kw = dict(random_state=0, loss="hinge" if task == "classification" else "squared")
    best, f = 0.0, None
    for _ in range(2):
        m = okl.make("auto", members=members, **kw)
        t0 = time.perf_counter()
        f = m.run(X, y).decisions
        best = max(best, len(y) / (time.perf_counter() - t0))
    return score(f, y, task), best, m


def main():
    print("| stream | pool | members | score | rounds/s |")
    print("|---|---|---|---|---|")
    for name, make in STREAMS.items():
        if sys.argv[1:] and name not in sys.argv[1:]:
            continue
        X, y, task = make()
        sparse, default = sparse_pool(task), default_pool(task)
        back = [m for m in default if m not in sparse]
        linear = [m for m in sparse if m[0] == "linear"]
        variants = {"auto (the pool for sparse rows)": None, "the default pool": [list(m) for m in default],
                    "sparse + the families left out": [list(m) for m in sparse + back]}
        variants.update({f"{m[0]}({m[2]}) alone": [list(m)] for m in linear})
        for label, members in variants.items():
            s, rate, m = cell(X, y, task, fits(members, X.shape[1]))
            n = len(m.pool_)
            print(f"| {name} | {label} | {n} | {s:.4g} | {rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
