"""``okl reproduce``: a paper table or figure (``--list`` shows them; ``okl reproduce ID --help`` lists
that experiment's ``--param`` keys)."""

from __future__ import annotations

import argparse
import os
import sys

from okl.cli._common import add_data_dir_options, clip, parse_params
from okl.data.registry import find_files
from okl.eval import markdown_table

def cmd_reproduce(args) -> int:
    from okl.experiments import ExperimentContext, check_options, experiments

    registry = experiments()
    if args.list or not args.id:
        rows = []
        for exp in registry.values():
            have = [d for d in exp.datasets if find_files(d, args.data_dir) is not None]
            missing = [d for d in exp.datasets if d not in have]
            status = ("all present" if not missing else "missing: " + ", ".join(missing)) if exp.datasets \
                else "external files (see description)"
            rows.append([exp.id, exp.description, ", ".join(exp.datasets), status, ", ".join(exp.protocols)])
        print(markdown_table(["id", "what", "datasets", "status", "protocols"], rows))
        from okl.data.registry import fetch_hint, missing_datasets

        missing = missing_datasets([d for exp in registry.values() for d in exp.datasets], args.data_dir)
        if missing:
            print(f"\nmissing data: okl fetch {' '.join(missing)}"
                  + (f" --data-dir {args.data_dir}" if args.data_dir else "") + " downloads it")
        return 0
    if args.id not in registry:
        raise ValueError(f"unknown experiment {clip(args.id)!r}; available: {', '.join(sorted(registry))}")
    exp = registry[args.id]
    if args.protocol not in exp.protocols:
        raise ValueError(f"experiment {args.id} has no protocol {clip(args.protocol)!r}; it implements: "
                         f"{', '.join(exp.protocols)}")
    options = parse_params(args.param)
    check_options(exp, options)  # before the output directory is made
    existing = os.path.abspath(args.out)
    while not os.path.exists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)  # (the part of the path there already)
    if not os.path.isdir(existing):
        named = "is a file" if existing == os.path.abspath(args.out) else f"{clip(existing)} is a file"
        raise ValueError(f"--out {clip(args.out)}: {named}; --out must be a directory (made when missing) for "
                         "the Markdown, CSV and PNG files")
    ctx = ExperimentContext(data_dir=args.data_dir, runs=args.runs, out_dir=args.out,
                            progress=not args.quiet, quick=args.quick, options=options,
                            protocol=args.protocol)
    result = registry[args.id].func(ctx)
    print(result.markdown)
    for f in result.files:
        print(f"wrote {f}", file=sys.stderr)
    return 0


def param_help(exp) -> str:
    """The ``--param`` keys experiment ``exp`` reads, one a line (the epilog of ``okl reproduce ID --help``)."""
    if not exp.params:
        return f"experiment {exp.id} takes no --param keys"
    width = max(len(k) for k in exp.params) + 2
    lines = [f"--param NAME=VALUE keys of {exp.id} (repeatable):"]
    lines += [f"  {key:<{width}}{text}" for key, text in exp.params.items()]
    return "\n".join(lines)


class ExperimentHelp(argparse.Action):
    """``-h/--help``: the usage, and after an experiment id (``okl reproduce ID --help``) the
    ``--param`` keys that experiment reads."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        exp_id = getattr(namespace, "id", None)
        if exp_id:
            from okl.experiments import experiments

            registry = experiments()
            if exp_id in registry:
                parser.epilog = param_help(registry[exp_id])
                parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.print_help()
        parser.exit()


def add_parser(sub):
    e = sub.add_parser("reproduce", help="reproduce a paper table or figure (--list shows them)", add_help=False)
    e.add_argument("-h", "--help", action=ExperimentHelp, help="show this help message and exit "
                                                               "(after ID: also that experiment's --param keys)")
    e.add_argument("id", nargs="?")
    e.add_argument("--list", action="store_true")
    e.add_argument("--runs", type=int, default=20)
    e.add_argument("--out", default="okl-results", help="output directory for Markdown, CSV and PNG")
    e.add_argument("--quick", action="store_true", help="tiny configuration (smoke test)")
    e.add_argument("--protocol", default="okl", choices=("okl", "published"),
                   help="okl (default): features scaled to [0, 1], widths chosen from the stream; published: "
                        "the file, features, width and budget the authors' code used (--list shows which "
                        "experiments implement it)")
    e.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="an option of the experiment (repeatable; okl reproduce ID --help lists them)")
    e.set_defaults(func=cmd_reproduce)
    add_data_dir_options(e)
    return e
