"""``okl stream``: learn from an event stream (a file, a followed file or stdin) with checkpoints.

The runner is library code (:mod:`okl.streaming`); this module holds only its command line.
``python -m okl.cli stream ...`` runs it as ``okl stream ...`` does.
"""

from __future__ import annotations

import argparse

from okl.streaming.main import main_stream


def add_parser(sub) -> argparse.ArgumentParser:
    return add_stream_parser(sub)


def add_stream_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``stream`` subcommand to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "stream", help="predict and learn on a live stream (file being appended to, or stdin)",
        description="Predict each event of a stream as it arrives, learn the labelled ones, "
                    "write predictions to stdout and checkpoint the state every N events "
                    "(a restart with the same --checkpoint resumes exactly there). The learner "
                    "fixes a per-feature scale and its width from the first 50 events (none "
                    "with --sigma). svmlight lines are parsed into sparse (CSR) rows: indices and "
                    "values, no dense row (a learner that does not take CSR rows gets them densified, "
                    "a few at a time); --n-hashed K reads named features (word:1) hashed with a sign "
                    "into K columns.")
    p.add_argument("--learner", default="auto",
                   help="registered learner name (default auto: a pool of learners and widths mixed online)")
    p.add_argument("--budget", type=int, help="budget B (default: the learner's)")
    p.add_argument("--sigma", type=float, default=None,
                   help="Gaussian kernel width for the features as given (default: chosen by the "
                        "learner from the first 50 events, sqrt(tr Cov / 2))")
    p.add_argument("--loss", help="loss name (default: the learner's, hinge for most)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="extra hyperparameter, value parsed as JSON (repeatable), e.g. horizon=100000")
    p.add_argument("--categorical", metavar="COLS",
                   help="comma-separated feature columns (0-based, the label not counted) holding category "
                        "codes: each level becomes an indicator column (okl.categories), e.g. 1,4")
    p.add_argument("--random-state", type=int, default=0, help="seed of the learner (default 0)")
    p.add_argument("--input", default="-", help="input file, or - for standard input (default)")
    p.add_argument("--format", choices=("svmlight", "csv"), default="svmlight")
    p.add_argument("--dim", type=int, help="number of features (required for svmlight, unless --n-hashed)")
    p.add_argument("--n-hashed", type=int, metavar="K",
                   help="svmlight-like lines whose features are names (+1 word:1 other:2.5): each name is hashed "
                        "with a sign into K columns (signed feature hashing, as okl.river's n_features=0, "
                        "n_hashed=K; e.g. 1048576), parsed into sparse (CSR) rows")
    p.add_argument("--sep", default=",", help="CSV field separator (default ,)")
    p.add_argument("--label-column", type=int, default=-1, help="CSV label column, 0-based (default -1: last)")
    p.add_argument("--header", action="store_true", help="CSV: the first line is a header")
    p.add_argument("--positive-label", type=float,
                   help="map this label to +1 and every other label to -1 (classification)")
    p.add_argument("--checkpoint", help="checkpoint file; resumed from when it exists")
    p.add_argument("--every", type=int, default=1000, help="checkpoint every N events (default 1000)")
    p.add_argument("--follow", type=float, nargs="?", const=0.0, default=None, metavar="SECONDS",
                   help="keep reading a growing file; stop after SECONDS without new data "
                        "(no value or 0: never)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip bad lines with a warning instead of stopping")
    p.add_argument("--stats-every", type=float, default=10.0,
                   help="seconds between running totals on stderr (default 10)")
    if "--quiet" not in p._option_string_actions:
        p.add_argument("--quiet", action="store_true", help="no running totals on stderr")
    p.set_defaults(func=main_stream)
    return p
