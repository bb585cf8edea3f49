"""Command line: ``okl run | datasets | fetch | sigma | reproduce`` (thin: parse, call, print).

Tables go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import re
import sys

from okl.data.registry import dataset_info, datasets, find_files, load_dataset
from okl.eval import Progress, evaluate, majority_rate, markdown_table, mean_predictor_loss, mean_std, write_csv
from okl.kernels import RBF
from okl._validation import check_sigma, check_state_memory
from okl.learners.base import MAX_DIM, accepts, learners, make


#: characters of an offending input echoed in an error message
ECHO_CHARS = 200
#: most runs (seeds) one command may ask for
MAX_RUNS = 10_000


def clip(text, limit: int = ECHO_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an offending input is echoed this way)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class OklArgumentParser(argparse.ArgumentParser):
    """argparse with okl's error convention: one line ``okl: error: ...`` on stderr, exit code 2,
    at most :data:`ECHO_CHARS` characters of any offending token (no usage block)."""

    def error(self, message):  # noqa: D401  (argparse API)
        self.exit(2, user_error(message) + "\n")


#: the range of every numeric option of every command (by destination name): the CLI checks each
#: before any work, whichever subcommand defined the option; ``check`` gets the value and returns
#: an error text or None
def _positive_finite(name):
    def check(v):
        if not math.isfinite(v) or v <= 0:
            return f"--{name} must be a finite number > 0, got {clip(v)}"
    return check


def _int_range(name, low, high=None):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            return f"--{name} must be an integer in [{low}, {'inf' if high is None else high}], got {clip(v)}"
    return check


NUMERIC_OPTIONS = {
    "runs": _int_range("runs", 1, MAX_RUNS),
    "max_rows": _int_range("max-rows", 1),
    "budget": _int_range("budget", 1),
    "first": _int_range("first", 1),
    "every": _int_range("every", 1),
    "dim": _int_range("dim", 1, MAX_DIM),
    "workers": _int_range("workers", 1, 4096),
    "blas_threads": _int_range("blas-threads", 1, 4096),
    "retries": _int_range("retries", 0, 100),
    "random_state": _int_range("random-state", 0, 2**63 - 1),
    "stats_every": _positive_finite("stats-every"),
}


def check_options(args) -> None:
    """Apply :data:`NUMERIC_OPTIONS` and the sigma rule to a parsed command line (ValueError)."""
    for dest, check in NUMERIC_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or isinstance(value, str):  # strings: lists parsed by the command itself
            continue
        problem = check(value)
        if problem:
            raise ValueError(problem)
    sigma = getattr(args, "sigma", None)
    if isinstance(sigma, float):
        check_sigma(sigma)
    follow = getattr(args, "follow", None)
    if isinstance(follow, float) and not (math.isfinite(follow) and follow >= 0):
        raise ValueError(f"--follow must be a finite number of seconds >= 0, got {clip(follow)}")
    seeds = getattr(args, "seeds", None)
    if isinstance(seeds, str):
        check_seeds(seeds)
    budget, dim = getattr(args, "budget", None), getattr(args, "dim", None)
    if isinstance(budget, int) or isinstance(dim, int):
        check_state_memory(budget if isinstance(budget, int) else None, dim if isinstance(dim, int) else None)


def check_seeds(text: str) -> list[int]:
    """``--seeds``: integers >= 0 (``0,1,5``, ``0,1,...,9`` or ``0:1:9``), at most MAX_RUNS of them."""
    from okl.eval.sweep import parse_values

    hint = "give integers >= 0, e.g. 0,1,5 or 0,1,...,9 or 0:1:9"
    try:
        values = parse_values(text)
    except (ValueError, OverflowError):
        values = None
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                         or v < 0 or v != int(v) for v in values):
        raise ValueError(f"--seeds {clip(text)!r}: {hint}")
    if len(values) > MAX_RUNS:
        raise ValueError(f"--seeds {clip(text)!r}: {len(values)} seeds, at most {MAX_RUNS}")
    return [int(v) for v in values]


EXTENSION_COMMANDS = [
    ("okl.stream", "add_stream_parser"),
    ("okl.eval.sweep_cli", "add_sweep_parser"),
    ("okl.eval.sweep_cli", "add_report_parser"),
    ("okl.evolvable.cli", "add_evolve_parser"),
]


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _parse_value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parse_params(items: list[str] | None) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param expects NAME=VALUE, got {clip(item)!r}")
        out[key.replace("-", "_")] = _parse_value(value)
    return out


def _applicable(name: str, task: str) -> bool:
    if task == "classification":
        return True
    if not accepts(name, "loss"):
        return False
    try:
        make(name, loss="squared")
    except ValueError:
        return False
    return True


def _load_for_cli(args):
    """(base name, stream, task, X, y) of ``--dataset``: a registered name or preset, or a file path
    (svmlight / CSV / TSV, preprocessed like registered sets; its description is printed)."""
    from okl.data.adversarial import parse_stream, resolve_dataset
    from okl.data.registry import is_data_file, load_file

    if is_data_file(args.dataset):
        data = load_file(args.dataset, label=args.label, sep=args.sep,
                         header=None if args.header == "auto" else args.header == "yes", task=args.task)
        print(data.description)
        return args.dataset, parse_stream(getattr(args, "stream", None)), data.task, data.X, data.y
    for opt in ("label", "sep", "task"):
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} applies to a data file, not to the registered dataset {args.dataset!r}")
    base, stream = resolve_dataset(args.dataset, getattr(args, "stream", None))
    info = dataset_info(base)
    if args.download and find_files(base, args.data_dir) is None:
        from okl.data.fetch import fetch_dataset

        fetch_dataset(base, args.data_dir, args.mirror, progress=not args.quiet,
                      log=lambda text: print(f"okl: {text}", file=sys.stderr))
    X, y = load_dataset(base, args.data_dir)
    return base, stream, info.task, X, y


def _add_source_options(p) -> None:
    p.add_argument("--label", help="data file: the label column: first, last (default), a 1-based number or "
                                   "a header name")
    p.add_argument("--sep", help="data file: field separator (default: tab for .tsv, else comma)")
    p.add_argument("--header", choices=["auto", "yes", "no"], default="auto",
                   help="data file: whether the first line is a header (default: detected)")
    p.add_argument("--task", choices=["classification", "regression"],
                   help="data file: the task (default: inferred; two label values -> classification)")
    p.add_argument("--download", action="store_true",
                   help="fetch a missing registered dataset first (okl fetch; $OKL_MIRROR or --mirror)")
    p.add_argument("--mirror", help="with --download: base URL of a mirror of the stored layout")


def cmd_run(args) -> int:
    from okl.data.adversarial import preset_note
    from okl.learners.base import NonFiniteError

    base, stream, task, X, y = _load_for_cli(args)
    check_state_memory(args.budget, X.shape[1])
    first_X, first_y = stream(X, y, 0)
    n = len(first_y) if args.max_rows is None else min(len(first_y), args.max_rows)
    names = args.learners.split(",") if args.learners else [m for m in learners() if _applicable(m, task)]
    for name in names:
        make(name)  # unknown names fail here, before any work
    skipped = [m for m in names if not _applicable(m, task)]
    for name in skipped:
        print(f"okl: skipping {name}: it learns -1/+1 labels only and {args.dataset} is a regression "
              "data set", file=sys.stderr)
    names = [m for m in names if m not in skipped]
    # Library defaults: only what the user gave is passed (the learner chooses its width from
    # the stream); the loss follows the task.
    loss = args.loss or ("hinge" if task == "classification" else "squared")
    extra = _parse_params(args.param)
    for key in extra:
        if not any(accepts(m, key) for m in names):
            raise ValueError(f"no selected learner has hyperparameter {clip(key)!r}")

    rows, csv_rows, failures = [], [], []
    with Progress(len(names) * args.runs, "", enabled=not args.quiet) as progress:
        for name in names:
            progress.set_label(name)
            own = {k: v for k, v in extra.items() if accepts(name, k)}
            try:
                s = evaluate(name, X, y, runs=args.runs, budget=args.budget, sigma=args.sigma, loss=loss,
                             params=own, progress=progress, max_rows=args.max_rows, stream=stream,
                             horizon=False)
            except NonFiniteError as exc:
                failures.append(str(exc))
                rows.append([name, "diverged (see below)", "", "", ""])
                continue
            authors = s.authors
            digits = 2 if task == "classification" else 5
            diag = s.diagnostics()
            sigma = diag.get("sigma")
            width = "" if sigma is None else f"{sigma:.3g}"
            rows.append([name, mean_std(s.metric, digits),
                         mean_std(authors) if authors is not None else "", width, f"{s.seconds.mean():.3f}"])
            csv_rows.append([args.dataset, name, "" if args.budget is None else args.budget,
                             "" if sigma is None else sigma, loss, args.runs, float(s.metric.mean()),
                             float(s.metric.std()), "" if authors is None else float(authors.mean()),
                             float(s.seconds.mean())])
    metric = "mistake rate %" if task == "classification" else "mean squared loss"
    print(f"dataset {args.dataset}: T = {n}, d = {first_X.shape[1]}, {task}; stream {stream.spec}, "
          f"{args.runs} runs (seeds 0..{args.runs - 1}); every round counted")
    if args.dataset != base or stream.kind == "adversarial":
        print(preset_note(args.dataset) if args.dataset != base else f"adversarial stream of {base}")
    width_note = (f"RBF(sigma={args.sigma:g}) [--sigma]" if args.sigma is not None else
                  "RBF, width chosen by each learner from its first 50 rows: sigma = sqrt(tr Cov / 2) "
                  "(column sigma: mean over runs)")
    print(f"kernel {width_note}; budget " + (f"B = {args.budget}" if args.budget is not None
                                             else "each learner's default") + f"; loss {loss}")
    if task == "classification":
        print(f"majority-class rate: {majority_rate(first_y[:n]):.2f} % (run 0's stream)")
    else:
        print(f"running-mean predictor: {mean_predictor_loss(y):.5f}")
    print()
    print(markdown_table(["learner", metric, "authors' count %", "sigma", "time s"], rows))
    for text in failures:
        print(f"\n{text}")
    if any(r[2] for r in rows):
        print("\nauthors' count: first-stage rounds skipped, still divided by T (FORKS code; "
              "ALGORITHMS.md 4). Shown for comparison with published cells only.")
    if args.csv:
        write_csv(args.csv, ["dataset", "learner", "budget", "sigma", "loss", "runs", "metric_mean",
                             "metric_std", "authors_mean", "seconds_mean"], csv_rows)
        print(f"\nwrote {args.csv}", file=sys.stderr)
    return 0


def cmd_datasets(args) -> int:
    if args.names:
        for name in args.names:
            info = dataset_info(name)
            paths = find_files(name, args.data_dir)
            print(f"## {name}\n")
            print(f"- {info.rows} rows x {info.features} features, {info.task}")
            print(f"- source: {info.source}")
            print(f"- licence: {info.licence}")
            print(f"- citation: {info.citation}")
            print(f"- preprocessing: {info.preprocessing}")
            print(f"- available: {', '.join(str(p) for p in paths) if paths else 'no (okl fetch ' + name + ')'}")
            for f in info.stored_files:
                known = f"sha256 {f.download_sha256}" if f.download_sha256 else "content checked by raw sha256"
                print(f"- file {f.path} ({f.size:,} B): sha256 (gz) {f.sha256}, sha256 (raw) {f.raw_sha256}")
                print(f"  download {f.url} ({f.fmt}; {known}); made from {f.provenance}")
            print()
        return 0
    rows = []
    for info in datasets():
        paths = find_files(info.name, args.data_dir)
        rows.append([info.name, info.rows, info.features, info.task, f"{info.sigma:g}",
                     "yes" if paths else "no (okl fetch)", info.source, info.note])
    print(markdown_table(["name", "rows", "features", "task", "sigma", "available", "source", "note"], rows))
    print(f"\nsigma: {datasets()[0].sigma_rule} (okl sigma --dataset NAME shows the scores)")
    print("okl fetch NAME downloads a missing set (checksums, licence, citation: okl datasets NAME)")
    return 0


def cmd_fetch(args) -> int:
    from okl.data.fetch import FetchError, fetch_dataset

    names = sorted(d.name for d in datasets()) if args.all else args.names
    if not names:
        raise ValueError("okl fetch: name at least one dataset (or --all); okl datasets lists them")
    for name in names:
        dataset_info(name)  # unknown names fail before any download
    failed = 0
    for name in names:
        try:
            fetch_dataset(name, args.data_dir, args.mirror, retries=args.retries, progress=not args.quiet,
                          force=args.force, log=print)
        except FetchError as exc:
            print(f"okl fetch: error: {name}: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def datasets_by_name() -> set[str]:
    return {d.name for d in datasets()}


def cmd_sigma(args) -> int:
    from okl.data.registry import permutation
    from okl.data.width import DEFAULT_GRID, PAPER_GRID, RULES, alignment_scores, select_sigma
    from okl.eval.sweep import default_budget

    _, _, task, X, y = _load_for_cli(args)
    order = permutation(len(y), 0)[: args.first]
    Xf, yf = X[order], y[order]
    choices = {rule: select_sigma(Xf, yf, rule) for rule in RULES}
    grid = sorted(set(DEFAULT_GRID) | (set(PAPER_GRID) if args.wide else set()) | set(choices.values()))
    centered = alignment_scores(Xf, yf, grid, args.first, centered=True)
    plain = alignment_scores(Xf, yf, grid, args.first, centered=False)
    learners_ = args.learners.split(",") if args.sweep else []
    info = dataset_info(args.dataset) if args.dataset in datasets_by_name() else None
    rows = []
    with Progress(len(grid) * len(learners_) * args.runs, "sweep", enabled=args.sweep and not args.quiet) as p:
        for s in grid:
            marks = ", ".join(rule for rule, value in choices.items() if value == s)
            row = [f"{s:.4g}", marks, f"{centered[s]:.4f}", f"{plain[s]:.4f}"]
            for name in learners_:
                res = evaluate(name, X, y, runs=args.runs, budget=args.budget or default_budget(len(y)),
                               kernel=RBF(sigma=s), loss="hinge" if task == "classification" else "squared",
                               progress=p, max_rows=args.max_rows)
                row.append(mean_std(res.metric, 2 if task == "classification" else 5))
            rows.append(row)
    print(f"dataset {args.dataset}: rules applied to the first {args.first} examples of permutation 0")
    print("choices: " + "; ".join(f"{rule} {value:.4g}" for rule, value in choices.items())
          + (f"; registry default {info.sigma:.4g} ({info.sigma_rule})" if info else ""))
    if args.sweep:
        print(f"sweep: {args.runs} permutations" + (f", first {args.max_rows} rows" if args.max_rows else "")
              + ", every round counted")
    print()
    print(markdown_table(["sigma", "chosen by", "centered alignment", "uncentered alignment"] + learners_, rows))
    return 0


def cmd_reproduce(args) -> int:
    from okl.experiments import ExperimentContext, experiments

    registry = experiments()
    if args.list or not args.id:
        rows = []
        for exp in registry.values():
            have = [d for d in exp.datasets if find_files(d, args.data_dir) is not None]
            missing = [d for d in exp.datasets if d not in have]
            status = ("all present" if not missing else "missing: " + ", ".join(missing)) if exp.datasets \
                else "external files (see description)"
            rows.append([exp.id, exp.description, ", ".join(exp.datasets), status])
        print(markdown_table(["id", "what", "datasets", "status"], rows))
        from okl.data.registry import fetch_hint, missing_datasets

        missing = missing_datasets([d for exp in registry.values() for d in exp.datasets], args.data_dir)
        if missing:
            print(f"\nmissing data: okl fetch {' '.join(missing)}"
                  + (f" --data-dir {args.data_dir}" if args.data_dir else "") + " downloads it")
        return 0
    if args.id not in registry:
        raise ValueError(f"unknown experiment {clip(args.id)!r}; available: {', '.join(sorted(registry))}")
    ctx = ExperimentContext(data_dir=args.data_dir, runs=args.runs, out_dir=args.out,
                            progress=not args.quiet, quick=args.quick, options=_parse_params(args.param))
    result = registry[args.id].func(ctx)
    print(result.markdown)
    for f in result.files:
        print(f"wrote {f}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OklArgumentParser(prog="okl", description="Online kernel learning on data streams.")
    sub = p.add_subparsers(dest="command")

    r = sub.add_parser("run", help="compare learners on a dataset over random permutations")
    r.add_argument("--dataset", default="german", help="registered dataset name (default: german, bundled) or "
                                                        "a data file: svmlight (.gz/.bz2 too), CSV or TSV")
    r.add_argument("--learners", help="comma-separated learner names (default: all that fit the task)")
    r.add_argument("--budget", type=int, help="budget B (default: each learner's own)")
    r.add_argument("--runs", type=int, default=20, help="number of permutations (default 20)")
    r.add_argument("--sigma", type=float, help="Gaussian kernel width (default: chosen by each learner "
                                               "from the first 50 rows of its stream)")
    r.add_argument("--loss", help="loss name (default hinge for classification, squared for regression)")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="extra hyperparameter (repeatable)")
    r.add_argument("--max-rows", type=int, help="use only the first N rows of each permutation")
    r.add_argument("--stream", help="stream transform: permutation (default), identity, "
                                    "adversarial:kb=500,kr=10 (datasets german-1/-2, codrna-1/-2 imply theirs)")
    r.add_argument("--csv", help="also write the table as CSV")
    r.set_defaults(func=cmd_run)

    d = sub.add_parser("datasets", help="list registered datasets, their sources and whether their files are found")
    d.add_argument("names", nargs="*", help="show these in full: files, URLs, sha256, licence, citation")
    d.set_defaults(func=cmd_datasets)

    f = sub.add_parser("fetch", help="download registered datasets (checksum-verified) into the data directory")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--all", action="store_true", help="every registered dataset")
    f.add_argument("--mirror", help="base URL serving the stored layout, e.g. URL/libsvm/cod-rna.t.gz "
                                    "(default $OKL_MIRROR, else the canonical sources)")
    f.add_argument("--retries", type=int, default=3, help="retries of a failed transfer (default 3)")
    f.add_argument("--force", action="store_true", help="download again even if a verified copy is present")
    f.set_defaults(func=cmd_fetch)

    s = sub.add_parser("sigma", help="kernel-width rule: alignment scores, optionally against a sweep")
    s.add_argument("--dataset", default="german", help="registered name or a data file (as okl run)")
    s.add_argument("--first", type=int, default=1000, help="examples the rule may look at (default 1000)")
    s.add_argument("--sweep", action="store_true", help="also run learners at every width")
    s.add_argument("--wide", action="store_true", help="include SkeGD's grid 2^[-5:0.5:7]")
    s.add_argument("--learners", default="nogd,fogd")
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--budget", type=int)
    s.add_argument("--max-rows", type=int)
    s.set_defaults(func=cmd_sigma)

    e = sub.add_parser("reproduce", help="reproduce a paper table or figure (--list shows them)")
    e.add_argument("id", nargs="?")
    e.add_argument("--list", action="store_true")
    e.add_argument("--runs", type=int, default=20)
    e.add_argument("--out", default="okl-results", help="output directory for Markdown, CSV and PNG")
    e.add_argument("--quick", action="store_true", help="tiny configuration (smoke test)")
    e.add_argument("--param", action="append", metavar="NAME=VALUE")
    e.set_defaults(func=cmd_reproduce)

    for sp in (r, s):
        _add_source_options(sp)
    for sp in (r, d, f, s, e):
        sp.add_argument("--data-dir", help="directory with the dataset files (else $OKL_DATA, ~/.okl/data)")
        sp.add_argument("--quiet", action="store_true", help="no progress on stderr")

    # Commands defined next to the code they drive: each add_*_parser(sub) adds its own subparser
    # (with set_defaults(func=...)).
    for module, adder in EXTENSION_COMMANDS:
        if _module_exists(module):
            getattr(importlib.import_module(module), adder)(sub)
    return p


def user_error(exc: BaseException | str) -> str:
    """The one line ``okl: error: ...`` for a user's mistake (no traceback)."""
    text = str(exc)
    if isinstance(exc, MemoryError):
        text = "not enough memory for this setting (lower --budget, --dim or the data size)" + (
            f": {text}" if text else "")
    for prefix in ("okl: error: ", "okl: ", "okl fetch: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    # a quoted input longer than ECHO_CHARS is cut there (the rest of the message is kept)
    text = re.sub(r"(['\"])([^'\"]{%d})[^'\"]*\1" % ECHO_CHARS, lambda m: f"{m.group(1)}{m.group(2)}...{m.group(1)}",
                  " ".join(text.split()))
    return f"okl: error: {clip(text, 3 * ECHO_CHARS)}"


def run_command(func, args) -> int:
    """Run a subcommand: every user mistake is one line on stderr and exit code 2; a failed
    download or an unreadable file (OSError) exit code 1."""
    try:
        check_options(args)
        return func(args)
    except (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError,
            MemoryError, OverflowError, KeyError) as exc:
        print(user_error(exc), file=sys.stderr)
        return 2
    except OSError as exc:  # a failed download (okl.data.fetch.FetchError), a failing disk
        print(user_error(exc), file=sys.stderr)
        return 1
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(user_error(exc.code), file=sys.stderr)
            return 2
        raise


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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["main", "build_parser"]
