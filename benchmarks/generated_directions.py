"""Directions generated on the fly (okl.features.generated) against a stored direction matrix.

    python benchmarks/generated_directions.py [--repeats 2000] [--seed 0]

Prints, for each entry kind (Gaussian: the RBF kernel's directions, Cauchy: the Laplacian's):

* ns per generated entry: fill_column over 1,000 columns of D = 1200 entries;
* the projection p = U x of one sparse row with nnz = 50 (indices drawn from 2^10 columns) at
  D = 400 and D = 1200: project_generated (nnz columns generated, O(1) memory) against the
  stored-matrix rows_axpy(UT, x, p) (FOGD's project_t) on the dense d = 2^10 row with the same 50
  non-zeros and UT = generated_directions(...) (d x D doubles in memory), as a ratio;
* for scale, rows_axpy over only the 50 stored rows of UT that the non-zeros select (gathered
  before timing): the floor a stored matrix would give a sparse path, if it fitted in memory;
* whether the generated and the stored projections are equal bit for bit.

Times are medians over ``--repeats`` calls timed one by one from Python (a call is tens of
microseconds; the dispatch, under 1 us, is included), after a warm-up call that loads or compiles
the functions. ns/entry times single fill_column calls (D = 1200) from Python, so it includes their
dispatch (0.3-0.5 us a call, 0.3-0.4 ns an entry); project_generated's time per nnz D entries is
the compiled cost alone, to within its one dispatch.
Not a test: the ratios are what carry over between machines.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from okl._compiled import rows_axpy
from okl.features.generated import CAUCHY, GAUSSIAN, fill_column, generated_directions, project_generated

D_IN = 2**10
NNZ = 50


def median_ns(call, repeats):
    call()
    times = np.empty(repeats)
    for r in range(repeats):
        t0 = time.perf_counter_ns()
        call()
        times[r] = time.perf_counter_ns() - t0
    return float(np.median(times))


def entry_ns(seed, kind, repeats):
    """Median time of fill_column on one column of D = 1200 (columns j = 0, 1, ... in turn), per entry."""
    D = 1200
    out = np.empty(D)
    fill_column(seed, kind, 0, 1.0, out)
    times = np.empty(repeats)
    for j in range(repeats):
        t0 = time.perf_counter_ns()
        fill_column(seed, kind, j, 1.0, out)
        times[j] = time.perf_counter_ns() - t0
    return float(np.median(times)) / D


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    indices = np.sort(rng.choice(D_IN, NNZ, replace=False)).astype(np.int64)
    values = rng.normal(0.0, 1.0, NNZ)
    dense = np.zeros(D_IN)
    dense[indices] = values
    print(f"{platform.processor() or platform.machine()}; nnz = {NNZ}, dense d = {D_IN}, "
          f"median of {args.repeats} calls")
    print(f"{'kind':9s} {'ns/entry':>9s} {'D':>5s} {'generated us':>13s} {'stored us':>10s} {'ratio':>6s} "
          f"{'ns/(nnz D)':>11s} {'50 rows us':>11s} {'ratio':>6s} {'bit-equal':>9s}")
    for name, kind, scale in (("Gaussian", GAUSSIAN, 1.0), ("Cauchy", CAUCHY, 1.0)):
        per_entry = entry_ns(args.seed, kind, args.repeats)
        for D in (400, 1200):
            UT = generated_directions(args.seed, kind, scale, D_IN, D)
            p_gen, p_stored = np.empty(D), np.empty(D)
            t_gen = median_ns(lambda: project_generated(args.seed, kind, scale, indices, values, p_gen), args.repeats)
            t_stored = median_ns(lambda: rows_axpy(UT, dense, p_stored), args.repeats)
            rows = np.ascontiguousarray(UT[indices])
            p_rows = np.empty(D)
            t_rows = median_ns(lambda: rows_axpy(rows, values, p_rows), args.repeats)
            equal = np.array_equal(p_gen, p_stored) and np.array_equal(p_gen, p_rows)
            print(f"{name:9s} {per_entry:9.2f} {D:5d} {t_gen / 1e3:13.1f} {t_stored / 1e3:10.1f} "
                  f"{t_gen / t_stored:6.2f} {t_gen / (NNZ * D):11.2f} {t_rows / 1e3:11.2f} {t_gen / t_rows:6.0f} "
                  f"{str(equal):>9s}")
    print(f"stored UT at d = 2^20: {2**20 * 400 * 8 / 2**30:.1f} GiB at D = 400, "
          f"{2**20 * 1200 * 8 / 2**30:.1f} GiB at D = 1200; generated: none")


if __name__ == "__main__":
    main()
