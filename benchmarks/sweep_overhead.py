"""Overhead of the sweep machinery per cell, and the speed-up of worker processes.

Cells of 1,000 rounds (german, permutation s, learner ``--learner`` over a small eta grid), after
a warm-up cell (Numba compilation is not counted). Measured:

* ``bare``: ``run_cell`` called directly (the work itself), seconds per cell;
* ``store``: ``ResultStore.add`` (one WAL transaction per cell), milliseconds per commit;
* ``serial``: ``run_sweep`` on the serial backend with the store: per-cell wall time and its
  overhead over ``bare`` (store + bookkeeping + progress);
* ``CPU control``: the speed-up N processes get on a pure-Python loop at the same moment (on a
  shared machine this, not the backend, bounds the speed-ups below);
* ``processes N`` / ``dask N``: wall time of the same sweep on N local processes / a Dask
  LocalCluster of N processes (``okl sweep --workers N``), start-up reported separately, and
  the speed-up over serial with and without start-up.

    python benchmarks/sweep_overhead.py [--cells 40] [--workers 2] [--learner nogd] [--dataset german]

Numbers depend on the machine's load; run it on an idle machine for clean speed-ups.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from okl.eval.backends import DaskBackend, ProcessBackend, SerialBackend
from okl.eval.store import ResultStore
from okl.eval.sweep import build_cells, run_cell, run_sweep


def cells_for(n: int, learner: str, dataset: str = "german"):
    seeds = list(range(max(1, (n + 7) // 8)))
    etas = [round(0.05 * (i + 1), 2) for i in range(8)]
    cells = build_cells([dataset], [learner], {"eta": etas}, seeds=seeds)[:n]
    # the order run_sweep uses (stream-cache friendly), so "bare" does the same work
    return sorted(cells, key=lambda c: (c.dataset, c.stream, c.seed, c.learner, c.params))


def _spin(_):
    s = 0
    for i in range(2_000_000):
        s += i * i
    return s


def cpu_control(workers: int) -> float:
    """Speed-up of ``workers`` processes over one on a pure-Python loop: what the machine allows now."""
    import multiprocessing

    t0 = time.perf_counter()
    for _ in range(2 * workers):
        _spin(0)
    serial = time.perf_counter() - t0
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        t0 = time.perf_counter()
        pool.map(_spin, range(2 * workers))
        parallel = time.perf_counter() - t0
    return serial / parallel


def timed_sweep(cells, backend, path: Path) -> float:
    with ResultStore(path) as store:
        t0 = time.perf_counter()
        rep = run_sweep(cells, store, backend, progress=False)
        wall = time.perf_counter() - t0
        assert rep.ran == len(cells) and not rep.failures, rep.summary()
    return wall


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--learner", default="nogd")
    ap.add_argument("--dataset", default="german", help="german: T = 1000; german-2: adversarial, T = 10,000")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of the serial/bare timings (median)")
    args = ap.parse_args(argv)
    cells = cells_for(args.cells, args.learner, args.dataset)
    n = len(cells)
    tmp = Path(tempfile.mkdtemp(prefix="okl-sweep-bench-"))
    print(f"{n} cells: {args.dataset} (T = {cells[0].param_dict and run_cell(cells[0]).n_rounds}), "
          f"{args.learner}, eta grid x seeds; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr)

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        run_cell(cells[0])  # warm-up: compile / load cached machine code
        bare = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            results = [run_cell(c) for c in cells]
            bare.append((time.perf_counter() - t0) / n)
    t_bare = statistics.median(bare)

    with ResultStore(tmp / "store-only.sqlite") as store:
        t0 = time.perf_counter()
        for c, r in zip(cells, results):
            store.add(c, r)
        t_store = (time.perf_counter() - t0) / n

    serial = [timed_sweep(cells, SerialBackend(), tmp / f"serial{i}.sqlite") for i in range(args.repeats)]
    t_serial = statistics.median(serial)

    t0 = time.perf_counter()
    proc_backend = ProcessBackend(args.workers)
    t_proc = timed_sweep(cells, proc_backend, tmp / "proc.sqlite")  # pool start-up included (fork: ms)

    t0 = time.perf_counter()
    dask = DaskBackend(workers=args.workers)
    t_dask_start = time.perf_counter() - t0
    try:
        t_dask_first = timed_sweep(cells, dask, tmp / "dask1.sqlite")  # workers import okl, load code
        t_dask = timed_sweep(cells, dask, tmp / "dask2.sqlite")  # warm workers
    finally:
        dask.close()

    control = cpu_control(args.workers)
    rows = [
        (f"CPU control: pure-Python loop x{args.workers} processes", f"{control:.2f}x", "the ceiling for any backend now"),
        ("bare run_cell", f"{1000 * t_bare:.2f} ms/cell", ""),
        ("store commit (WAL, 1 tx/cell)", f"{1000 * t_store:.2f} ms/cell", f"{100 * t_store / t_bare:.1f} % of a cell"),
        ("serial backend + store", f"{1000 * t_serial / n:.2f} ms/cell",
         f"overhead {1000 * (t_serial / n - t_bare):+.2f} ms/cell; wall {t_serial:.2f} s"),
        (f"processes x{args.workers} (incl. pool start)", f"{1000 * t_proc / n:.2f} ms/cell",
         f"wall {t_proc:.2f} s; speed-up {t_serial / t_proc:.2f}x"),
        (f"dask LocalCluster x{args.workers}: start", f"{t_dask_start:.2f} s", ""),
        (f"dask x{args.workers}, cold workers", f"{1000 * t_dask_first / n:.2f} ms/cell",
         f"wall {t_dask_first:.2f} s; speed-up {t_serial / t_dask_first:.2f}x "
         f"({t_serial / (t_dask_first + t_dask_start):.2f}x with start-up)"),
        (f"dask x{args.workers}, warm workers", f"{1000 * t_dask / n:.2f} ms/cell",
         f"wall {t_dask:.2f} s; speed-up {t_serial / t_dask:.2f}x; "
         f"overhead {1000 * (args.workers * t_dask / n - t_bare):+.2f} ms CPU/cell"),
    ]
    w = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{w}}  {value:>14}  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
