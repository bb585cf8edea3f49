"""``okl sweep``: the command-line front end of :mod:`okl.eval.sweep` (``okl report``: :mod:`okl.cli.report`).

Examples::

    okl sweep --datasets german,svmguide3 --learners nogd,skegd \\
        --grid eta=1e-5,1e-4,...,1 --grid sigma=2^-5:0.5:7 --runs 20 --store results.sqlite
    okl sweep ... --workers 4                       # a Dask LocalCluster of 4 processes
    okl sweep ... --scheduler tcp://host:8786       # an existing Dask cluster
    okl sweep --datasets german-1 --learners skegd --grid rho=24,49,99 --sigma auto --store adv.sqlite
    okl report results.sqlite --out report/

Rerunning the same ``okl sweep`` command skips the cells already in the store.
"""

from __future__ import annotations

import sys

from okl.cli._common import add_data_dir_options
from okl.eval.backends import check_backend_options, make_backend
from okl.eval.grid import parse_grid
from okl.eval.report import report
from okl.eval.store import ResultStore
from okl.eval.sweep import build_cells, run_sweep


def add_parser(sub):
    p = sub.add_parser("sweep", help="run a grid of datasets x learners x hyperparameters x seeds into a "
                                     "resumable SQLite store",
                       description="Each cell (dataset, stream, learner, hyperparameters, seed) is committed "
                                   "to the store when it finishes; rerunning the command skips finished cells.")
    p.add_argument("--datasets", default="german",
                   help="comma-separated dataset names; adversarial presets german-1/-2, codrna-1/-2; kuairec; "
                        "or data files (svmlight, or CSV/TSV with the label last): the learners choose "
                        "their width from the stream")
    p.add_argument("--learners", required=True, help="comma-separated learner names")
    p.add_argument("--grid", action="append", metavar="NAME=VALUES",
                   help="hyperparameter values, e.g. eta=1e-5,1e-4,...,1 or sigma=2^-5:0.5:7 (repeatable)")
    p.add_argument("--sigma", help="kernel width for every cell: a number, 'dataset' (the dataset's recorded "
                                   "width), or 'auto' (kernel alignment on the first 1000 rounds of each stream, "
                                   "SkeGD 6.1); default: each learner's own from its first rows, as okl run")
    p.add_argument("--budget", help="budget(s) B, e.g. 100 or 100,150,...,500 (default 100 if T <= 10,000 else 200)")
    p.add_argument("--runs", type=int, default=20, help="seeds 0..runs-1 (default 20)")
    p.add_argument("--seeds", help="explicit seeds, e.g. 0,1,5 or 0:1:9 (overrides --runs)")
    p.add_argument("--stream", help="stream transform: permutation (default), identity, "
                                    "adversarial:kb=500,kr=10; append ,rows=N or :rows=N to cut it")
    p.add_argument("--max-rows", type=int, help="use only the first N rounds of each stream")
    p.add_argument("--store", required=True, help="SQLite results file (created if missing)")
    p.add_argument("--workers", type=int, help="run on N worker processes (a Dask LocalCluster; local "
                                               "processes with --backend processes)")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--backend", default="auto", choices=["auto", "serial", "processes", "dask"])
    p.add_argument("--blas-threads", type=int, default=1, help="BLAS threads per cell (default 1: identical "
                                                                 "numbers on every backend)")
    p.add_argument("--dry-run", action="store_true", help="print the number of cells and exit")
    p.add_argument("--report", metavar="DIR", help="write the report (okl report) into DIR afterwards")
    add_data_dir_options(p)
    p.set_defaults(func=main_sweep, on_interrupt="every finished cell is in the store; rerun the same "
                                                 "command to resume (finished cells are skipped)")
    return p


def _stream_spec(args) -> str | None:
    stream = args.stream
    if args.max_rows is not None:
        if args.max_rows < 1:
            raise ValueError("--max-rows must be >= 1")
        base = stream or "permutation"
        stream = base + ("," if ":" in base else ":") + f"rows={args.max_rows}"
    return stream


def main_sweep(args) -> int:
    from okl.eval.grid import parse_values

    check_backend_options(args.backend, args.workers, args.scheduler)
    grid = parse_grid(args.grid)
    for name, value in (("sigma", args.sigma), ("budget", args.budget)):
        if value is not None:
            if name in grid:
                raise ValueError(f"give {name} either with --{name} or with --grid, not both")
            grid[name] = parse_values(value)
    if args.seeds:
        seeds = [int(s) for s in parse_values(args.seeds)]
    else:
        if args.runs < 1:
            raise ValueError("--runs must be >= 1")
        seeds = list(range(args.runs))
    from okl.data.registry import fetch_hint, is_data_file, missing_datasets
    from okl.eval.sweep import file_dataset, file_description

    # a user's file enters the cell keys by absolute path and content hash
    datasets = [file_dataset(d) if is_data_file(d) else d
                for d in (d.strip() for d in args.datasets.split(",")) if d]
    for d in datasets:
        if d.startswith("file:"):
            print(file_description(d), file=sys.stderr)
    learners = [m.strip() for m in args.learners.split(",") if m.strip()]
    missing = missing_datasets([d for d in datasets if not d.startswith("file:")], args.data_dir)
    if missing:  # one line before any cell runs, naming the command that downloads them
        raise FileNotFoundError(f"no files for {', '.join(missing)}. {fetch_hint(missing, args.data_dir)}")
    notes: list[str] = []
    cells = build_cells(datasets, learners, grid, seeds, _stream_spec(args), args.data_dir, notes=notes)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    with ResultStore(args.store) as store:
        done = len(set(cells) & store.done_keys())
        print(f"sweep: {len(set(cells))} cells ({len(datasets)} dataset(s) x {len(learners)} learner(s) x grid x "
              f"{len(seeds)} seed(s)); {done} already in {args.store}", file=sys.stderr)
        if args.dry_run:
            return 0
        def start_backend():
            backend = make_backend(args.backend, args.workers, args.scheduler)
            if not args.quiet:
                print(f"backend: {backend.describe()}", file=sys.stderr)
            return backend

        result = run_sweep(cells, store, start_backend, args.data_dir, progress=not args.quiet,
                           blas_threads=args.blas_threads)
        print(result.summary(), file=sys.stderr)
        if args.report:
            text, files = report(store, args.report, data_dir=args.data_dir)
            print(text)
            for f in files:
                print(f"wrote {f}", file=sys.stderr)
    return 1 if result.failures else 0
