"""``okl run``: compare learners on a dataset over random permutations (a table on stdout)."""

from __future__ import annotations

import sys

import numpy as np

from okl._validation import check_state_memory
from okl.cli._common import (add_data_dir_options, add_source_options, applicable, clip, load_for_cli,
                             parse_params)
from okl.eval import Progress, evaluate, majority_rate, markdown_table, mean_std, write_csv
from okl.eval.progressive import baseline_curves
from okl.eval.report import plot_run_curves
from okl.intervals import replay_intervals
from okl.runtime.base import accepts, learner_class, learners, make

#: ``okl run``'s learners when none are named: the default ``auto``, the linear reference a kernel
#: learner must beat (the majority rate is printed beside them) and one learner of each family of
#: the papers (sketched second order, sketched first order, Nystrom, random features), all of them
#: answering on german in seconds once compiled; the slow second-order KONS family and the budget
#: baselines run by name or with ``--learners all``.
DEFAULT_LEARNERS = ("auto", "forks", "skegd", "nogd", "fogd", "linear")
#: ``okl run``'s permutations when ``--runs`` is not given (``--runs 20``: the papers' count)
DEFAULT_RUNS = 5


def cmd_run(args) -> int:
    from okl.data.adversarial import preset_note
    from okl.data.series import SERIES
    from okl.runtime.base import NonFiniteError

    base, stream, task, X, y = load_for_cli(args)
    check_state_memory(args.budget, X.shape[1])
    first_X, first_y = stream(X, y, 0)
    n = len(first_y) if args.max_rows is None else min(len(first_y), args.max_rows)
    if args.learners == "all":
        names = [m for m in learners(kind="streaming") if applicable(m, task)]
    elif args.learners:
        names = args.learners.split(",")
    else:
        names = [m for m in DEFAULT_LEARNERS if applicable(m, task)]
    for name in names:
        learner_class(name)  # unknown names (and okl evolve's learners) fail here, before any work
        make(name)
    classes = int(y.max()) + 1 if task == "multiclass" else None
    skipped = [m for m in names if not applicable(m, task)]
    for name in skipped:
        print(f"okl: skipping {name}: it learns -1/+1 labels only and {args.dataset} is a regression "
              "data set", file=sys.stderr)
    names = [m for m in names if m not in skipped]
    # Library defaults: only what the user gave is passed (the learner chooses its width from
    # the stream); the loss follows the task.
    loss = args.loss or ("squared" if task == "regression" else "hinge")
    extra = parse_params(args.param)
    for key in extra:
        if not any(accepts(m, key) for m in names):
            raise ValueError(f"no selected learner has hyperparameter {clip(key)!r}")

    rows, csv_rows, failures, weights, curves, means = [], [], [], {}, {}, {}
    scales: dict[str, list[str]] = {}  # input scale (okl.scaling) -> the learners that used it
    # progress in rounds (a long run reports as it goes, not only when it ends)
    with Progress(len(names) * args.runs * n, "", enabled=not args.quiet, unit="rows") as progress:
        for name in names:
            progress.set_label(name)
            own = {k: v for k, v in extra.items() if accepts(name, k)}
            try:
                s = evaluate(name, X, y, runs=args.runs, budget=args.budget, sigma=args.sigma, loss=loss,
                             params=own, progress=progress, max_rows=args.max_rows, stream=stream,
                             horizon=False, classes=classes)
            except NonFiniteError as exc:
                failures.append(str(exc))
                rows.append([name, "diverged (see below)", "", "", ""] + ["", ""] * (task == "regression"))
                continue
            authors = s.authors
            if args.plot:
                curves[name] = np.mean([t.cumulative_metric() for t in s.traces], axis=0)
            digits = 5 if task == "regression" else 2
            diag = s.diagnostics()
            scales.setdefault(s.traces[0].diagnostics.get("input_scale", "off"), []).append(name)
            sigma = diag.get("sigma")
            width = "" if sigma is None else f"{sigma:.3g}"
            # an aggregating learner (auto): its members' final weights, mean over runs
            member_weights = {k[len("weight["):-1]: v for k, v in diag.items() if k.startswith("weight[")}
            if member_weights:
                weights[name] = sorted(member_weights.items(), key=lambda kv: -kv[1])
            means[name] = float(s.metric.mean())
            rows.append([name, mean_std(s.metric, digits),
                         mean_std(authors) if authors is not None else "", width, f"{s.seconds.mean():.3f}"])
            if task == "regression":  # the 90 % intervals a conformal head puts around the predictions
                coverage, mean_width = np.nanmean([replay_intervals(t.decisions, t.y) for t in s.traces], axis=0)
                rows[-1] += [f"{100 * coverage:.1f}", f"{mean_width:.4g}"]
            csv_rows.append([args.dataset, name, "" if args.budget is None else args.budget,
                             "" if sigma is None else sigma, loss, args.runs, float(s.metric.mean()),
                             float(s.metric.std()), "" if authors is None else float(authors.mean()),
                             float(s.seconds.mean())] + ([float(coverage), float(mean_width)] if task == "regression"
                                                         else ["", ""]))
    metric = "mean squared loss" if task == "regression" else "mistake rate %"
    shown_task = (f"classification, {classes} classes (one-vs-rest: K outputs over one feature map for auto, nogd, "
                  "forks, fogd and linear, one binary head per class for the others)") if classes else task
    print(f"dataset {args.dataset}: T = {n}, d = {first_X.shape[1]}, {shown_task}; stream {stream.spec}, "
          f"{args.runs} runs (seeds 0..{args.runs - 1}); every round counted")
    if not args.learners:
        print("learners: the default comparison (every learner: --learners all; the papers' count: --runs 20)")
    if args.dataset != base or stream.kind == "adversarial":
        print(preset_note(args.dataset) if args.dataset != base else f"adversarial stream of {base}")
    width_note = (f"RBF(sigma={args.sigma:g}) [--sigma]" if args.sigma is not None else
                  "RBF, width chosen by each learner from its first 50 rows: sigma = sqrt(tr Cov / 2) "
                  "(column sigma: mean over runs)")
    print(f"kernel {width_note}; budget " + (f"B = {args.budget}" if args.budget is not None
                                             else "each learner's default") + f"; loss {loss}")
    print(_features_note(scales, scaled=base not in SERIES))
    base_label, base_curve, baseline = _baselines(stream, X, y, args.runs, n, task, classes)
    if task != "regression":
        print(f"majority-class rate: {baseline:.2f} % (mean over the runs' streams)")
    else:
        print(f"running-mean predictor: {baseline:.5f} (on the same streams, mean over runs)")
    above = [r[0] for r in rows if r[0] in means and means[r[0]] > baseline]
    for r in rows:
        if r[0] in above:
            r[1] += " !"
    print()
    intervals = ["90 % interval coverage %", "mean width"] if task == "regression" else []
    print(markdown_table(["learner", metric, "authors' count %", "sigma", "time s", *intervals], rows))
    if intervals:
        print("\nintervals: okl.intervals.ConformalHead around each learner's predictions (conformal PID on the "
              "stream's local scale, as OKLRiverRegressor.predict_interval_one gives them online to a learner without "
              "a predictive variance), over the rounds with a finite interval (from the fourth), mean over runs")
    if above:
        print(f"\n! above the {'running-mean loss' if task == 'regression' else 'majority-class rate'}: "
              f"{', '.join(above)} (docs/results/defaults.md gives measured reasons for the library defaults)")
    for text in failures:
        print(f"\n{text}")
    for name, ranked in weights.items():
        top = ", ".join(f"{member} {w:.2f}" for member, w in ranked[:5] if w >= 0.005)
        print(f"\n{name}: final member weights (mean over runs; the five largest): {top}")
    if any(r[2] for r in rows):
        print("\nauthors' count: first-stage rounds skipped, still divided by T (FORKS code; "
              "ALGORITHMS.md 4). Shown for comparison with published cells only.")
    if args.plot and curves:
        plot_run_curves(args.plot, f"{args.dataset}: {args.runs} runs, T = {n}, every round counted; "
                        "width and steps: library defaults" if args.sigma is None and not extra else
                        f"{args.dataset}: {args.runs} runs, T = {n}, every round counted",
                        curves, "regression" if task == "regression" else "classification", (base_label, base_curve))
        print(f"wrote {args.plot}", file=sys.stderr)
    if args.csv:
        write_csv(args.csv, ["dataset", "learner", "budget", "sigma", "loss", "runs", "metric_mean",
                             "metric_std", "authors_mean", "seconds_mean", "interval_coverage", "interval_width"],
                  csv_rows)
        print(f"\nwrote {args.csv}", file=sys.stderr)
    return 0


def _features_note(scales: dict[str, list[str]], scaled: bool = True) -> str:
    """The features line: the loader's whole-file [0, 1] scaling (the papers' preprocessing; it uses
    the whole file, i.e. hindsight, but changes no decision of a learner whose input scale is on,
    because that scale follows any per-feature affine map), then each learner's own input scale."""
    used = "; ".join(f"{rule}: {', '.join(names)}" for rule, names in scales.items())
    source = ("the file's values scaled to [0, 1] over the whole file (as the papers did)" if scaled else
              "the series' embedded values as stored")
    return (f"features: {source}, then each learner's input scale (okl.scaling; fixed from its first rows, no "
            f"hindsight): {used}")


def _baselines(stream, X, y, runs: int, n: int, task: str, classes: int | None = None):
    """The baseline a learner must beat on the runs' own streams (seeds 0..runs-1, cut to n rows),
    as (label, curve, value): :func:`okl.eval.progressive.baseline_curves`."""
    ys = [np.asarray(stream(X, y, seed)[1][:n], dtype=float) for seed in range(runs)]
    return baseline_curves(ys, task, classes)


def add_parser(sub):
    r = sub.add_parser("run", help="compare learners on a dataset over random permutations")
    r.add_argument("--dataset", default="german", help="registered dataset name (default: german, bundled) or "
                                                        "a data file: svmlight (.gz/.bz2 too), CSV or TSV")
    r.add_argument("--learners", help="comma-separated learner names, or 'all' (every one that fits the task); "
                   f"default: {','.join(DEFAULT_LEARNERS)}")
    r.add_argument("--budget", type=int, help="budget B (default: each learner's own)")
    r.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                   help=f"number of permutations (default {DEFAULT_RUNS}; the papers used 20)")
    r.add_argument("--sigma", type=float, help="Gaussian kernel width (default: chosen by each learner "
                                               "from the first 50 rows of its stream)")
    r.add_argument("--loss", help="loss name (default hinge for classification, squared for regression)")
    r.add_argument("--param", action="append", metavar="NAME=VALUE", help="extra hyperparameter (repeatable)")
    r.add_argument("--max-rows", type=int, help="use only the first N rows of each permutation")
    r.add_argument("--stream", help="stream transform: permutation (default), identity, "
                                    "adversarial:kb=500,kr=10 (datasets german-1/-2, codrna-1/-2 imply theirs)")
    r.add_argument("--csv", help="also write the table as CSV")
    r.add_argument("--plot", metavar="PNG", help="also draw each learner's cumulative mistake rate (or mean squared "
                                                 "loss) against the round, mean over runs, beside the majority / "
                                                 "running-mean baseline")
    r.set_defaults(func=cmd_run)
    add_source_options(r)
    add_data_dir_options(r)
    return r
