"""Memory of okl's learners on a long stream: constant per round, so it must not grow with T.

The stream is codrna (271,617 rows, permutation 0) repeated cyclically up to the largest
checkpoint (default 1,000,000 rounds), fed to ``Learner.run`` in blocks of ``--block`` rows that
are gathered on the fly (the 1M-row stream is never materialised). Memory is measured with
``tracemalloc`` (NumPy reports its buffers to it), started after the data are loaded:

* ``state``: bytes of the learner's saved state (its ``_state_attrs`` arrays) at the checkpoint;
* ``retained``: traced bytes still allocated at the checkpoint (state + Python objects);
* ``peak``: the traced peak since the start, i.e. including the transient block buffers and
  chunked feature maps of ``run``.

    python benchmarks/memory.py --data-dir ../shared/datasets [--learners forks,skegd,nogd]
           [--rounds 100000,1000000] [--budget 200] [--sigma S] [--grow-sketch true|false]

Printed per learner: the three numbers at each checkpoint and the growth of the peak from the
first to the last checkpoint (the acceptance criterion: within 10 %). Learners taking ``horizon``
get the largest checkpoint as horizon (FORKS/SkeGD rho = 0.3 T: at most ~3 update rounds). With
the paper's growing sketch list (SkeGD default, FORKS ``grow_sketch=True``) every update round
adds a column block to the sketch, so state grows with the number of update rounds (bounded by
~1/theta), not with T.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc

import numpy as np

import okl
from okl.data import dataset_info, permutation
from okl.eval import learner_params
from okl.runtime.base import accepts


def state_bytes(learner) -> int:
    total = 0
    for attr in learner._state_attrs:
        value = getattr(learner, attr, None)
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, (list, tuple)):
            total += sum(v.nbytes for v in value if isinstance(v, np.ndarray))
    return total


def measure(name: str, X: np.ndarray, y: np.ndarray, checkpoints: list[int], budget: int, sigma: float,
            block: int, extra: dict) -> list[dict]:
    order = permutation(len(y), 0)
    horizon = max(checkpoints)
    params = learner_params(name, horizon, 0, budget=budget, kernel=okl.RBF(sigma=sigma), extra=extra)
    # compile the learner's loops outside the measurement
    okl.make(name, **params).run(X[order[:2000]], y[order[:2000]])
    learner = okl.make(name, **params)
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    done, rows, mistakes = 0, [], 0
    for target in sorted(checkpoints):
        while done < target:
            b = min(block, target - done)
            idx = order[(done + np.arange(b)) % len(order)]
            trace = learner.run(X[idx], y[idx])
            mistakes += int(trace.mistakes.sum())
            done += b
            del trace, idx
        current, peak = tracemalloc.get_traced_memory()
        rows.append({"learner": name, "rounds": done, "state": state_bytes(learner), "retained": current,
                     "peak": peak, "seconds": time.perf_counter() - t0,
                     "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                     "mistake_rate": 100.0 * mistakes / done, "diagnostics": learner.diagnostics()})
    tracemalloc.stop()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir")
    p.add_argument("--learners", default="forks,skegd,nogd", help="comma-separated (default forks,skegd,nogd)")
    p.add_argument("--rounds", default="100000,1000000", help="checkpoints (default 100000,1000000)")
    p.add_argument("--budget", type=int, default=200)
    p.add_argument("--sigma", type=float, help="kernel width (default: codrna's recorded width)")
    p.add_argument("--block", type=int, default=10_000, help="rows per run() call (default 10,000)")
    p.add_argument("--grow-sketch", choices=("true", "false"),
                   help="force grow_sketch for learners that take it (default: each learner's own)")
    args = p.parse_args(argv)

    X, y = okl.load_dataset("codrna", args.data_dir)
    sigma = args.sigma if args.sigma is not None else dataset_info("codrna").sigma
    checkpoints = [int(r) for r in args.rounds.split(",")]
    names = [n for n in args.learners.split(",") if n]
    registered = okl.learners()
    print(f"codrna ({len(y)} rows, permutation 0) repeated; budget {args.budget}; RBF(sigma={sigma:g}); "
          f"blocks of {args.block} rows; tracemalloc", file=sys.stderr)
    table = []
    for name in names:
        if name not in registered:
            print(f"skipping {name!r}: not registered (registered: {', '.join(registered)})", file=sys.stderr)
            continue
        extra = {}
        if args.grow_sketch is not None and accepts(name, "grow_sketch"):
            extra["grow_sketch"] = args.grow_sketch == "true"
        rows = measure(name, X, y, checkpoints, args.budget, sigma, args.block, extra)
        table.append(rows)
        for r in rows:
            print(f"  {name}: {r['rounds']} rounds in {r['seconds']:.1f} s, mistake rate "
                  f"{r['mistake_rate']:.2f} %, {r['diagnostics']}", file=sys.stderr)

    def kib(b):
        return f"{b / 1024:,.1f}"

    print("| learner | rounds | state KiB | retained KiB | peak KiB | max RSS MiB | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for rows in table:
        for r in rows:
            print(f"| {r['learner']} | {r['rounds']:,} | {kib(r['state'])} | {kib(r['retained'])} | "
                  f"{kib(r['peak'])} | {r['maxrss'] / 2**20:,.0f} | {r['seconds']:.1f} |")
    print()
    status = 0
    for rows in table:
        first, last = rows[0], rows[-1]
        growth = last["peak"] / first["peak"] - 1.0
        ok = abs(growth) <= 0.10
        status |= not ok
        print(f"{first['learner']}: peak after {last['rounds']:,} vs {first['rounds']:,} rounds: "
              f"{100 * growth:+.1f} % ({'within' if ok else 'NOT within'} 10 %); state "
              f"{100 * (last['state'] / max(first['state'], 1) - 1):+.1f} %")
    return int(status)


if __name__ == "__main__":
    raise SystemExit(main())
