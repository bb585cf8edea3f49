"""``okl report``: tables and figures (mean +/- std over seeds) from a results store (:mod:`okl.eval.report`)."""

from __future__ import annotations

import sys

from okl.eval.report import report
from okl.eval.store import ResultStore


def add_parser(sub):
    p = sub.add_parser("report", help="tables and figures (mean ± std over seeds) from a results store")
    p.add_argument("store", help="SQLite results file written by okl sweep / okl reproduce")
    p.add_argument("--out", help="directory for report.md, report.csv and PNG figures "
                                 "(default: print the tables only)")
    p.add_argument("--no-figures", action="store_true", help="tables only")
    p.add_argument("--data-dir", help="where the swept datasets are, for the curves' baseline (else $OKL_DATA, "
                                      "~/.okl/data; no baseline where they are not found)")
    p.set_defaults(func=main_report)
    return p


def main_report(args) -> int:
    with ResultStore(args.store, create=False) as store:
        text, files = report(store, args.out, figures=not args.no_figures and args.out is not None,
                             data_dir=args.data_dir)
    print(text)
    for f in files:
        print(f"wrote {f}", file=sys.stderr)
    return 0
