"""``okl evolve``: evolvable learners on feature-evolvable streams made from a dataset (OPFES Sec. 5).

``okl evolve --dataset pol --learners opfes,rff-fesl --runs 50`` builds, for each run r, the OPFES
stream of seed r (random half/half feature split and random order, :func:`make_evolvable_stream`),
runs every learner on it and prints the cumulative error rate over the current stage (mean +/- std
over runs), and plots CER against the number of current-stage instances (OPFES Fig. 4) to a PNG.
Progress goes to stderr.

The runs, tuning, table and figure are library code: :mod:`okl.evolvable.harness`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from okl.evolvable import evolvable_learners
from okl.evolvable.harness import DEFAULT_REG, TABLE2_LEARNERS, evaluate, format_table, plot_curves, tune_hyperparameters


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``okl evolve`` on an argparse subparsers object."""
    p = subparsers.add_parser("evolve", help="learners on feature-evolvable streams (OPFES protocol)",
                              description=__doc__.split("\n\n")[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", required=True, help="registered dataset name (okl datasets)")
    p.add_argument("--learners", default=",".join(TABLE2_LEARNERS),
                   help=f"comma-separated evolvable learners (default: all of {', '.join(TABLE2_LEARNERS)})")
    p.add_argument("--runs", type=int, default=50, help="random splits and orders, seeds 0..runs-1 (default 50)")
    p.add_argument("--data-dir", default=None, help="directory with the dataset files")
    p.add_argument("--out", default="okl-results", help="output directory for the PNG (default okl-results)")
    p.add_argument("--features", type=int, default=None, help="random features d1 = d2 (default 1000)")
    p.add_argument("--sigma", type=float, default=None, help="Gaussian width (skips tuning with --step-size)")
    p.add_argument("--step-size", type=float, default=None, help="c in tau_t = c/sqrt(t) for all learners")
    p.add_argument("--evolving-length", type=int, default=None, help="Te (default: the OPFES rule)")
    p.set_defaults(func=main_evolve)
    return p


def main_evolve(args) -> int:
    """Entry point of ``okl evolve`` (``args`` from :func:`add_parser`)."""
    from okl.data import load_dataset

    learners = [s.strip() for s in str(args.learners).split(",") if s.strip()]
    for name in learners:
        if name not in evolvable_learners():
            print(f"okl evolve: unknown learner {name!r}; available: {', '.join(evolvable_learners())}",
                  file=sys.stderr)
            return 2
    if args.runs < 1:
        print("okl evolve: --runs must be at least 1", file=sys.stderr)
        return 2
    try:
        X, y = load_dataset(args.dataset, args.data_dir)
    except (ValueError, FileNotFoundError) as exc:
        print(f"okl evolve: {exc}", file=sys.stderr)
        return 2
    if np.unique(y).size > 2 or not set(np.unique(y)) <= {-1.0, 1.0}:
        print(f"okl evolve: {args.dataset} is not a binary classification dataset", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    if args.sigma is not None and args.step_size is not None:
        tuned = {"sigma": args.sigma, "step_size": args.step_size, "linear_step_size": args.step_size,
                 "reg": DEFAULT_REG}
    else:
        print(f"[{args.dataset}] tuning sigma and step size on held-out previous-stage data ...", file=sys.stderr,
              flush=True)
        tuned = tune_hyperparameters(X, y, n_features=args.features or 1000)
        if args.sigma is not None:
            tuned["sigma"] = args.sigma
        if args.step_size is not None:
            tuned["step_size"] = tuned["linear_step_size"] = args.step_size
    try:
        run = evaluate(X, y, learners, runs=args.runs, dataset=args.dataset, tuned=tuned, progress=True,
                       evolving_length=args.evolving_length, n_features=args.features)
    except ValueError as exc:
        print(f"okl evolve: {exc}", file=sys.stderr)
        return 2
    print(format_table(run))
    png = plot_curves({args.dataset: run}, Path(args.out) / f"evolve-{args.dataset}.png",
                      "cumulative error rate over the current stage")
    print(f"figure: {png}  ({time.perf_counter() - t0:.0f}s)")
    return 0
