"""The KRLS family (okl.learners.krls) at the library defaults beside KLMS and the linear learner:
german, codrna (first 20,000 rows), cpusmall and cadata in the order of permutation 0, predict-then-
learn, every round counted; then how far the recursive inverses are from the exact ones after the
run, the error of the last quarter, and the KAF series in time order (docs/results/scripts/kaf_series.py's
protocol; the published Lorenz setting for ALD-KRLS).

    PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/krls.py
"""
import os
import time

import numpy as np

import okl
from okl.data.registry import permutation

from okl.data.series import embed, load_series, mse_db

LEARNERS = ("krls", "sw-krls", "fb-krls", "klms", "linear")


def inverse_error(m):
    """max |A M - I| of the learner's recursive inverse A and the matrix M it inverts, and cond(M)."""
    D = m.SV_[:m.m_]
    K = m.kernel_(D, D)
    if hasattr(m, "Kinv_"):
        A = m.Kinv_[:m.m_, :m.m_]
    else:
        A, K = m.Ainv_[:m.m_, :m.m_], K + m.regularization * np.eye(m.m_)
    return float(np.abs(A @ K - np.eye(m.m_)).max()), float(np.linalg.cond(K))


def streams():
    print("| set | rounds | metric | " + " | ".join(LEARNERS) + " | baseline |")
    print("|---|---|---|" + "---|" * (len(LEARNERS) + 1))
    notes = []
    for name, n in (("german", None), ("codrna", 20000), ("cpusmall", None), ("cadata", None)):
        X, y = okl.load_dataset(name)
        p = permutation(len(y), 0)[:n]
        X, y = np.ascontiguousarray(X[p]), y[p]
        regression = name in ("cpusmall", "cadata")
        cells = []
        for lrn in LEARNERS:
            m = okl.make(lrn, random_state=0, **({"loss": "squared"} if regression else {}))
            t0 = time.perf_counter()
            d = m.run(X, y).decisions
            rate = len(y) / (time.perf_counter() - t0)
            err = (d - y) ** 2 if regression else 100.0 * (np.where(d >= 0, 1.0, -1.0) != y)
            q = 3 * len(y) // 4
            cells.append(f"{err.mean():.4g}")
            extra = ""
            if lrn in ("krls", "sw-krls", "fb-krls"):
                e, c = inverse_error(m)
                extra = f"; inverse error {e:.1e} (cond {c:.1e}), dictionary {m.m_}"
            notes.append(f"{name} {lrn}: {rate:,.0f} rounds/s; last quarter {err[q:].mean():.4g}{extra}")
        if regression:
            base = np.mean((y[1:] - np.cumsum(y)[:-1] / np.arange(1, len(y))) ** 2)
        else:
            base = 100.0 * min(np.mean(y > 0), np.mean(y < 0))
        print(f"| {name} | {len(y):,} | {'MSE' if regression else 'mistake %'} | " + " | ".join(cells)
              + f" | {base:.4g} |")
    print()
    for line in notes:
        print("-", line)


def kaf(data):
    print("\n| series | " + " | ".join(LEARNERS) + " |")
    print("|---|" + "---|" * len(LEARNERS))
    for name, p in (("lorenz", 6), ("mg30", 7), ("santafe", 6)):
        X, y = embed(load_series(name, data), p)
        cells = [f"{mse_db(okl.make(lrn, loss='squared', random_state=0).run(X, y).decisions, y):.2f}"
                 for lrn in LEARNERS]
        print(f"| {name} (embedding {p}) | " + " | ".join(cells) + " |")
    X, y = embed(load_series("lorenz", data), 6)
    published = dict(loss="squared", kernel=okl.RBF(sigma=32.0), scale=None, center_targets=False)
    m = okl.make("krls", threshold=1e-4, **published)
    print(f"\nALD-KRLS, the published Lorenz setting: {mse_db(m.run(X, y).decisions, y):.2f} dB, "
          f"{m.m_} elements (KAFBOX README: -40.17 dB)")
    for lrn in ("sw-krls", "fb-krls"):
        m = okl.make(lrn, **published)
        print(f"{lrn} at width 32 on the raw values: {mse_db(m.run(X, y).decisions, y):.2f} dB")


if __name__ == "__main__":
    streams()
    kaf(os.environ.get("OKL_DATA", "../shared/datasets"))
