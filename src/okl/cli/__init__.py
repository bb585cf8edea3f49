"""Command line: ``okl run | learners | datasets | fetch | forecast | sigma | reproduce | stream | serve | sweep | report |
evolve | compile``.

Thin: parse, call the library, print. One module per command (``okl.cli.<command>``, each with
``add_parser(subparsers)``); what they share is in :mod:`okl.cli._common`. Nothing in okl below
this package imports it. Tables go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import sys

from okl.cli import compile as compile_command
from okl.cli import datasets, evolve, fetch, forecast, learners, reproduce, report, run, serve, sigma, stream, sweep
from okl.cli._common import (ECHO_CHARS, MAX_RUNS, NUMERIC_OPTIONS, OklArgumentParser, add_import_option,
                             check_options, check_seeds, clip, run_command, user_error)

#: the subcommands, in the order ``okl --help`` lists them
COMMANDS = (run, learners, datasets, fetch, forecast, sigma, reproduce, stream, serve, sweep, report, evolve, compile_command)


def build_parser() -> argparse.ArgumentParser:
    p = OklArgumentParser(prog="okl", description="Online kernel learning on data streams.")
    sub = p.add_subparsers(dest="command")
    for command in COMMANDS:
        add_import_option(command.add_parser(sub))
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["run"]  # `okl` alone runs the default comparison
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return run_command(args.func, args)


__all__ = ["main", "build_parser", "OklArgumentParser", "run_command", "user_error", "clip", "check_options",
           "check_seeds", "NUMERIC_OPTIONS", "ECHO_CHARS", "MAX_RUNS"]
