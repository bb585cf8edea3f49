"""okl beside Vowpal Wabbit on sparse streams (issue 48): one-hot adult in the LIBSVM a9a layout and
a synthetic hashed text stream, accuracy and events/s in the same run. Not a timed test: compare
the ratios.

    pip install -e '.[sparse-bench]'   # vowpalwabbit (its Python package); not a dependency
    python benchmarks/sparse.py [--data-dir ../shared/datasets] [--runs 3] [--learners auto,nogd,fogd,linear]
        [--hashed-rows 20000]

One-hot adult: adult.data + adult.test (48,842 rows) encoded as a9a is (123 binary columns, 14 a
row, 13 where a field is missing): the 8 categorical fields one column per level (a missing value,
"?", sets none, as in a9a), age, fnlwgt,
education-num and hours-per-week in 5 quantile bins of the whole file, capital-gain and
capital-loss zero / non-zero. Each permutation (``okl.data.permutation``, seeds 0..runs-1) is
streamed predict-then-learn by every model: VW logistic (``--loss_function logistic``, its Python
API, one example string per call: ``predict`` then ``learn``), okl's learners at their defaults
through ``run()`` on the SciPy CSR matrix and per event (``predict_one`` + ``learn_one`` on its rows,
1-row CSR matrices sliced before the clock starts, as VW's strings are built). The mistake rate
counts every round.

Hashed stream: rows of 50 distinct token ids drawn from a Zipf(1.1) vocabulary of 2^20, signed by
a fixed hash, a label from a sparse linear rule over the first 5,000 token ids plus 5 % flipped
labels; VW reads the ids as feature indices (``-b 20``), okl auto takes the 2^20-column CSR matrix
(its peak memory: what tracemalloc saw allocated during ``run()``, and the process's max RSS), then
the same rows per event as 1-row CSR matrices.
"""

from __future__ import annotations

import argparse
import gzip
import time
import tracemalloc

import numpy as np

import okl
from okl.data import permutation
from okl.data.registry import data_dirs

ADULT_FIELDS = 14
CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)
QUANTILE_BINS = {0: 5, 2: 5, 4: 5, 12: 5}
ZERO_OR_NOT = (10, 11)


def _adult_rows(data_dir):
    rows = []
    for name in ("adult.data.gz", "adult.test.gz"):
        path = next((d / sub / name for d in data_dirs(data_dir) for sub in ("uci", "")
                     if (d / sub / name).is_file()), None)
        if path is None:
            raise SystemExit(f"{name} not found in {', '.join(map(str, data_dirs(data_dir)))} (or their uci/)")
        with gzip.open(path, "rt") as fh:
            for line in fh:
                fields = [f.strip() for f in line.split(",")]
                if len(fields) == ADULT_FIELDS + 1:
                    rows.append(fields)
    return rows


def adult_onehot(data_dir=None):
    """(indices per row, values per row, labels +/-1, number of columns): the a9a layout of adult (a
    missing categorical value has value 0 at its field's first column)."""
    rows = _adult_rows(data_dir)
    columns = []  # per field: a function value -> column offset within the field, and its width
    for c in range(ADULT_FIELDS):
        values = [r[c] for r in rows]
        if c in CATEGORICAL:
            levels = {v: i for i, v in enumerate(sorted(set(values) - {"?"}))}
            columns.append((lambda v, levels=levels: levels.get(v, -1), len(levels)))
        elif c in QUANTILE_BINS:
            x = np.array(values, dtype=float)
            edges = np.quantile(x, np.linspace(0, 1, QUANTILE_BINS[c] + 1)[1:-1])
            columns.append((lambda v, edges=edges: int(np.searchsorted(edges, float(v), side="right")),
                            QUANTILE_BINS[c]))
        else:
            columns.append((lambda v: int(float(v) != 0.0), 2))
    offsets = np.cumsum([0] + [w for _, w in columns])
    local = np.array([[columns[c][0](r[c]) for c in range(ADULT_FIELDS)] for r in rows])
    values = (local >= 0).astype(float)
    index = offsets[:-1] + np.maximum(local, 0)
    y = np.array([1.0 if r[14].rstrip(".") == ">50K" else -1.0 for r in rows])
    return index, values, y, int(offsets[-1])


def hashed_stream(n, seed=0, vocabulary=2 ** 20, nnz=50, informative=5000):
    """(indices per row, signs, labels): the synthetic hashed text stream of the docstring."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, vocabulary + 1, dtype=float)
    p = ranks ** -1.1
    p /= p.sum()
    idx = np.empty((n, nnz), dtype=np.int64)
    for i in range(n):
        idx[i] = np.sort(rng.choice(vocabulary, size=nnz, replace=False, p=p))
    sign = np.where(((idx * 2654435761) >> 7) & 1, 1.0, -1.0)
    w = np.zeros(vocabulary)
    w[:informative] = rng.standard_normal(informative)
    score = (w[idx] * sign).sum(axis=1)
    y = np.where(score > np.median(score), 1.0, -1.0)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return idx, sign, y


def vw_rate(idx, vals, y, bits):
    from vowpalwabbit import Workspace

    lines = [" ".join(f"{j}:{v:g}" for j, v in zip(r, vr) if v != 0.0) for r, vr in zip(idx, vals)]
    vw = Workspace(f"--loss_function logistic --quiet -b {bits}")
    wrong = 0
    t0 = time.perf_counter()
    for line, label in zip(lines, y):
        wrong += (vw.predict("| " + line) >= 0.0) != (label > 0)
        vw.learn(f"{int(label)} | {line}")
    secs = time.perf_counter() - t0
    vw.finish()
    return len(y) / secs, 100.0 * wrong / len(y)


def okl_rates(name, X, y, seed):
    """(run() rounds/s, its mistake rate, per-event events/s, its mistake rate) of okl learner
    ``name`` at its defaults on the CSR matrix X: ``run(X)``, then ``predict_one`` + ``learn_one``
    on its rows as 1-row CSR matrices (sliced before the clock starts, as VW's strings are built)."""
    m = okl.make(name, random_state=seed)
    t0 = time.perf_counter()
    f = m.run(X, y).decisions
    run_rate = len(y) / (time.perf_counter() - t0)
    run_err = 100.0 * np.mean(np.where(f >= 0, 1.0, -1.0) != y)
    rows = [X[i] for i in range(X.shape[0])]
    m = okl.make(name, random_state=seed)
    wrong = 0
    t0 = time.perf_counter()
    for x, label in zip(rows, y):
        wrong += (m.predict_one(x) >= 0.0) != (label > 0)
        m.learn_one(x, label)
    event_rate = len(y) / (time.perf_counter() - t0)
    return run_rate, run_err, event_rate, 100.0 * wrong / len(y)


def csr_rows(idx, vals, d):
    """The rows as a SciPy CSR matrix (the zeros of a missing field dropped)."""
    import scipy.sparse as sp

    X = sp.csr_matrix((vals.ravel(), idx.ravel(), np.arange(0, idx.size + 1, idx.shape[1])), shape=(len(idx), d))
    X.eliminate_zeros()
    return X


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--learners", default="auto,nogd,fogd,linear")
    ap.add_argument("--hashed-rows", type=int, default=20_000)
    args = ap.parse_args()
    learners = [s for s in args.learners.split(",") if s]
    index, ones, y_all, d = adult_onehot(args.data_dir)
    print(f"one-hot adult: {len(y_all):,} rows, {d} columns, {ones.sum(axis=1).mean():.2f} non-zeros a row; "
          f"{args.runs} permutations")
    okl_rates(learners[0], csr_rows(index[:300], ones[:300], d), y_all[:300], 0)  # load compiled code
    cells = {}
    for seed in range(args.runs):
        p = permutation(len(y_all), seed)
        idx, vals, y = index[p], ones[p], y_all[p]
        cells.setdefault("VW logistic", []).append(vw_rate(idx, vals, y, 18))
        X = csr_rows(idx, vals, d)
        for name in learners:
            r = okl_rates(name, X, y, seed)
            cells.setdefault(f"okl {name} run()", []).append((r[0], r[1]))
            cells.setdefault(f"okl {name} per event", []).append((r[2], r[3]))
    vw = np.mean([c[0] for c in cells["VW logistic"]])
    print("| model | mistake rate % | events/s | x VW |")
    print("|---|---|---|---|")
    for label, c in cells.items():
        rate, err = np.array(c).T
        print(f"| {label} | {err.mean():.2f} ± {err.std():.2f} | {rate.mean():,.0f} | {rate.mean() / vw:.2f}x |")
    if args.hashed_rows:
        idx, sign, y = hashed_stream(args.hashed_rows)
        rate, err = vw_rate(idx, sign, y, 20)
        print(f"\nhashed stream: {len(y):,} rows, 2^20 columns, 50 non-zeros a row")
        print("| model | mistake rate % | events/s | peak memory |")
        print("|---|---|---|---|")
        print(f"| VW logistic | {err:.2f} | {rate:,.0f} | |")
        import resource

        import scipy.sparse as sp

        X = sp.csr_matrix((sign.ravel(), idx.ravel(), np.arange(0, idx.size + 1, idx.shape[1])),
                          shape=(len(y), 2 ** 20))
        tracemalloc.start()
        m = okl.make("auto", random_state=0)
        t0 = time.perf_counter()
        f = m.run(X, y).decisions
        secs = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        err = 100.0 * np.mean(np.where(f >= 0, 1.0, -1.0) != y)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # (KiB on Linux)
        print(f"| okl auto run() | {err:.2f} | {len(y) / secs:,.0f} | {peak / 2 ** 30:.2f} GiB allocated "
              f"(process max RSS {rss:.2f} GiB) |")
        rows = [X[i] for i in range(X.shape[0])]
        e = okl.make("auto", random_state=0)
        wrong, t0 = 0, time.perf_counter()
        for x, label in zip(rows, y):
            wrong += (e.predict_one(x) >= 0.0) != (label > 0)
            e.learn_one(x, label)
        print(f"| okl auto per event | {100.0 * wrong / len(y):.2f} | {len(y) / (time.perf_counter() - t0):,.0f} | |")
        print(f"(auto's members: {m.diagnostics()['members']}; left out for their stored rows: "
              f"{len(m.diagnostics().get('left_out', []))})")

if __name__ == "__main__":
    main()
