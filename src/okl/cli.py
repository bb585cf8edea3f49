"""Command line: ``okl run | datasets | sigma | reproduce`` (thin: parse, call, print).

Tables go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys

from okl.data.registry import dataset_info, datasets, find_files, load_dataset
from okl.eval import Progress, evaluate, majority_rate, markdown_table, mean_predictor_loss, mean_std, write_csv
from okl.kernels import RBF
from okl.learners.base import accepts, learners, make


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
            raise SystemExit(f"okl: --param expects NAME=VALUE, got {item!r}")
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


def cmd_run(args) -> int:
    from okl.data.adversarial import preset_note, resolve_dataset
    from okl.learners.base import NonFiniteError

    base, stream = resolve_dataset(args.dataset, args.stream)
    info = dataset_info(base)
    X, y = load_dataset(base, args.data_dir)
    first_X, first_y = stream(X, y, 0)
    n = len(first_y) if args.max_rows is None else min(len(first_y), args.max_rows)
    task = info.task
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
            raise SystemExit(f"okl: no selected learner has hyperparameter {key!r}")

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
    rows = []
    for info in datasets():
        paths = find_files(info.name, args.data_dir)
        rows.append([info.name, info.rows, info.features, info.task, f"{info.sigma:g}",
                     "yes" if paths else "no", info.note])
    print(markdown_table(["name", "rows", "features", "task", "sigma", "available", "note"], rows))
    print(f"\nsigma: {datasets()[0].sigma_rule} (okl sigma --dataset NAME shows the scores)")
    return 0


def cmd_sigma(args) -> int:
    from okl.data.registry import permutation
    from okl.data.width import DEFAULT_GRID, PAPER_GRID, RULES, alignment_scores, select_sigma
    from okl.eval.sweep import default_budget

    X, y = load_dataset(args.dataset, args.data_dir)
    order = permutation(len(y), 0)[: args.first]
    Xf, yf = X[order], y[order]
    choices = {rule: select_sigma(Xf, yf, rule) for rule in RULES}
    grid = sorted(set(DEFAULT_GRID) | (set(PAPER_GRID) if args.wide else set()) | set(choices.values()))
    centered = alignment_scores(Xf, yf, grid, args.first, centered=True)
    plain = alignment_scores(Xf, yf, grid, args.first, centered=False)
    learners_ = args.learners.split(",") if args.sweep else []
    info = dataset_info(args.dataset)
    rows = []
    with Progress(len(grid) * len(learners_) * args.runs, "sweep", enabled=args.sweep and not args.quiet) as p:
        for s in grid:
            marks = ", ".join(rule for rule, value in choices.items() if value == s)
            row = [f"{s:.4g}", marks, f"{centered[s]:.4f}", f"{plain[s]:.4f}"]
            for name in learners_:
                res = evaluate(name, X, y, runs=args.runs, budget=args.budget or default_budget(len(y)),
                               kernel=RBF(sigma=s), loss="hinge" if info.task == "classification" else "squared",
                               progress=p, max_rows=args.max_rows)
                row.append(mean_std(res.metric, 2 if info.task == "classification" else 5))
            rows.append(row)
    print(f"dataset {args.dataset}: rules applied to the first {args.first} examples of permutation 0")
    print("choices: " + "; ".join(f"{rule} {value:.4g}" for rule, value in choices.items())
          + f"; registry default {info.sigma:.4g} ({info.sigma_rule})")
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
        return 0
    if args.id not in registry:
        raise SystemExit(f"okl: unknown experiment {args.id!r}; available: {', '.join(sorted(registry))}")
    ctx = ExperimentContext(data_dir=args.data_dir, runs=args.runs, out_dir=args.out,
                            progress=not args.quiet, quick=args.quick, options=_parse_params(args.param))
    result = registry[args.id].func(ctx)
    print(result.markdown)
    for f in result.files:
        print(f"wrote {f}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="okl", description="Online kernel learning on data streams.")
    sub = p.add_subparsers(dest="command")

    r = sub.add_parser("run", help="compare learners on a dataset over random permutations")
    r.add_argument("--dataset", default="german", help="registered dataset name (default: german, bundled)")
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

    d = sub.add_parser("datasets", help="list registered datasets and whether their files are found")
    d.set_defaults(func=cmd_datasets)

    s = sub.add_parser("sigma", help="kernel-width rule: alignment scores, optionally against a sweep")
    s.add_argument("--dataset", default="german")
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

    for sp in (r, d, s, e):
        sp.add_argument("--data-dir", help="directory with the dataset files (else $OKL_DATA, ~/.okl/data)")
        sp.add_argument("--quiet", action="store_true", help="no progress on stderr")

    # Commands defined next to the code they drive: each add_*_parser(sub) adds its own subparser
    # (with set_defaults(func=...)).
    for module, adder in EXTENSION_COMMANDS:
        if _module_exists(module):
            getattr(importlib.import_module(module), adder)(sub)
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
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"okl: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["main", "build_parser"]
