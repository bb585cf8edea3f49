"""``okl compile``: build okl's compiled code for this machine now (what installing okl does), or
``--check`` whether it is built and where the cache lives."""

from __future__ import annotations

import sys


def cmd_compile(args) -> int:
    from okl.precompile import check, compile

    if args.check:
        report = check()
        print(report.summary())
        return 0 if report.complete else 1
    if args.processes is not None and args.processes < 1:
        raise ValueError(f"--processes must be at least 1, got {args.processes}")
    args.on_interrupt = "what finished compiling is cached; run okl compile again for the rest"
    if not args.force:
        report = check()
        if report.complete:
            print(report.summary() + "\n(nothing to do; --force compiles again)")
            return 0
    report = compile(processes=args.processes, progress=not args.quiet)
    print(report.summary())
    if not args.quiet:
        slowest = sorted(report.seconds.items(), key=lambda kv: -kv[1])[:4]
        print("longest workloads: " + ", ".join(f"{u} {s:.1f} s" for u, s in slowest), file=sys.stderr)
    return 0 if report.complete else 1


def add_parser(sub):
    c = sub.add_parser("compile", help="compile okl's code for this machine now (installing does it), "
                                       "or --check whether it is compiled and where the cache lives")
    c.add_argument("--check", action="store_true",
                   help="say whether every function is cached for this CPU and where; exit 1 when not")
    c.add_argument("--processes", type=int, default=None,
                   help="worker processes (default: this machine's cores, at most 2)")
    c.add_argument("--force", action="store_true", help="run every workload even when the cache is complete")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")
    c.set_defaults(func=cmd_compile)
    return c
