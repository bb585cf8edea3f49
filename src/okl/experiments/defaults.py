"""The defaults matrix: every learner with its library defaults on every staged data set.

``okl reproduce defaults --runs 3 --out docs/results/`` writes ``defaults.md`` (and
``defaults.csv``, ``defaults.png``). Each cell is what a user gets from ``okl.make(name,
random_state=seed)`` (plus ``loss="squared"`` on regression sets): no width, no step, no budget
and no horizon passed, the learner choosing its width from its first rows
(:func:`okl.kernels.scale_sigma`). Every round is counted, ``runs`` permutations (seeds 0..runs-1),
and a data set longer than ``max_rows`` (default 50,000) is cut to the first ``max_rows`` rows
of each permutation (the table says which). Beside the learners: the majority-class rate
(classification) or the running-mean predictor's loss (regression) of the same streams, which a
learner must beat, and the linear learner, which a kernel learner must beat to be worth its cost.
A cell above the majority rate / running mean is marked ``!``; one whose updates diverged says so.

Results are cached one JSON line per (dataset, learner, seed) in ``<out>/defaults.jsonl``, so an
interrupted run resumes; ``--param datasets=a,b learners=c,d max_rows=N fresh=1`` narrow or restart.
A cell stops after ``time_limit`` seconds (default 120) and reports its metric over the rows it
reached, marked ``*`` (PROS-N-KONS's dictionary has no budget: O(T J^2) on a set where KORS keeps
thousands of points).
"""

from __future__ import annotations

import json

import numpy as np

from okl.data.registry import REGISTRY, dataset_info, find_files, load_dataset, permutation
from okl.eval.progress import Progress
from okl.eval.progressive import majority_rate, mean_predictor_loss
from okl.eval.sweep import applicable
from okl.eval.tables import markdown_table, write_csv
from okl.experiments import ExperimentContext, ExperimentResult, experiment
from okl.runtime.base import NonFiniteError, learners, make, select_params

MAX_ROWS = 50_000

#: mistake-driven learners: where one is above the majority rate, the matrix also runs the
#: kernel perceptron with no budget (RBP with B >= T never removes) on the same streams, so the
#: table shows whether the budget or the perceptron rule itself is the cause
PERCEPTRONS = ("rbp", "forgetron", "projectron", "projectron++", "bpa-s")


#: a cell stops after this many seconds (``--param time_limit=S``); the table gives its metric over
#: the rows it reached and says so: a learner too slow for a stream at its defaults is a finding too
TIME_LIMIT = 120.0
BLOCK = 2000


def _cell(name: str, X, y, task: str, seed: int, time_limit: float = TIME_LIMIT) -> dict:
    """One (learner, stream) cell, run in blocks of BLOCK rows (the same decisions as one ``run``)
    until the stream ends or ``time_limit`` seconds have passed."""
    loss = None if task == "classification" else "squared"
    learner = make(name, **select_params(name, random_state=seed, loss=loss))
    decisions, seconds, done = [], 0.0, 0
    try:
        while done < len(y):
            trace = learner.run(X[done:done + BLOCK], y[done:done + BLOCK])
            decisions.append(trace.decisions)
            seconds += trace.seconds
            done += trace.n_rounds
            if seconds > time_limit and done < len(y):
                break
    except NonFiniteError as exc:
        return {"metric": None, "error": str(exc), "seconds": seconds}
    f = np.concatenate(decisions)
    metric = (100.0 * float(np.mean(np.where(f >= 0.0, 1.0, -1.0) != y[:done])) if task == "classification"
              else float(np.mean((f - y[:done]) ** 2)))
    return {"metric": metric, "sigma": learner.chosen_width().get("sigma"), "seconds": seconds,
            "rows_done": done, "rows": len(y)}


def _mean_metric(cache, d, n, runs):
    vals = [cache.get((d, n, s), {}).get("metric") for s in range(runs)]
    return None if any(v is None for v in vals) else float(np.mean(vals))


def _is_classification(d: str) -> bool:
    return dataset_info(d).task == "classification"


#: written reasons for cells above the majority rate / running mean, each resting on a measurement
#: (docs/results/defaults.md prints them beside the cell); ("*", learner) applies to every set
REASONS: dict[tuple[str, str], str] = {
    ("*", "rbp"): "RBP removes a random support vector when the budget is full.",
    ("*", "forgetron"): "Forgetron removes the oldest support vector and shrinks the others.",
    ("*", "projectron"): "Projectron projects a new point onto the kept ones instead of adding it when "
                         "it is close to their span.",
    ("*", "projectron++"): "Projectron++ also updates (by projection) on margin errors.",
    ("*", "bpa-s"): "BPA-S takes a passive-aggressive step (C = 1) on every margin error and drops the "
                    "support vector whose removal costs least.",
    ("german", "bogd"): "BOGD sits at the majority rate on german (30.04 % over 20 permutations): at "
                        "B = 100 its uniform removal keeps a near-random sample of recent rows voting "
                        "with equal weight, which leans to the majority class "
                        "(docs/results/budget-learners-codrna.md measures it on codrna).",
    ("ijcnn1", "bogd"): "at the majority rate, as on german: with B = 100 and uniform removal the "
                        "support set is a near-random sample of recent rows (9.6 % positives); unbudgeted "
                        "KOGD with the same step and width makes 4.46 % on the same streams.",
    ("ijcnn1", "b-kons"): "its dictionary stops at J_max = 100 points (PNK Sec. 5) within the first few hundred "
                          "rounds, and ONS on the hinge loss in a fixed space stops learning the minority class: "
                          "it predicts +1 on 0.06 % of the first 50,000 rounds of permutation 0 (9.6 % positives). "
                          "PROS-N-KONS restarts ONS at every dictionary growth (1,425 points, still growing at "
                          "round 49,984) and makes 8.80 % on the same streams; B-KONS with J_max = 1,000 "
                          "(growing until round 23,410) makes 8.98 %.",
    ("german", "window"): "the smoother's default width sigma_0 / 4 is a small neighbourhood in german's 24 "
                          "dimensions: at sigma_0 / 2 it makes 28.33 % and at sigma_0 30.17 % on the same streams "
                          "(sigma_0 / 4 is auto's choice for River's moving clusters: docs/results/window.md).",
    ("ijcnn1", "window"): "its 200 rows hold about 19 of the minority class (9.6 % positives); "
                          "with 500 rows it makes 9.32 % and with 1,000 rows 8.71 % on the same "
                          "streams (200 rows is auto's choice for cost: docs/results/window.md).",
    ("*", "fb-krls"): "FB-KRLS removes the element its neighbours predict best (the smallest |alpha_i| / "
                      "[Ainv]_ii, KAFBOX's rule): on a noisy stream the elements kept are the noisy ones and the "
                      "error grows along the stream (codrna: 24.6 % in the last quarter against 20.9 % overall; "
                      "its inverse stays exact: docs/results/krls.md).",
    ("*", "sw-krls"): "SW-KRLS is a kernel ridge regression on the 50 newest rows: on a permuted stream it never "
                      "holds more (codrna 16.5 %, ALD-KRLS 4.4 %: docs/results/krls.md).",
    ("*", "kap"): "KAP of order 20 projects the model onto the last 20 labels every round: a tracking filter "
                  "that fits the newest rows, not the stream (german at eps 0.01 / 0.1 / 1: 38.3 / 36.1 / 34.3 %, "
                  "at 10 29.6 %; docs/results/kaf-first.md).",
    ("german", "bsgd"): "BSGD's lambda 1e-4 (the best compromise over nine staged sets) is too small for german: "
                        "lambda 1e-2 makes 28.35 % on the same streams (docs/results/kaf-first.md).",
    ("svmguide3", "linear"): "one pass of OGD with a fixed step on a set no linear rule separates well: "
                             "batch logistic regression fitted on the whole set (hindsight) still errs "
                             "on 19.2 % (C = 1) to 23.4 % (C = 0.1) of its own training rows.",
}


def _fmt(values: list[float], task: str) -> str:
    m = float(np.mean(values))
    return f"{m:.2f}" if task == "classification" else f"{m:.4f}"


@experiment("defaults", "Every learner with its library defaults (no width, step or budget given) on every "
                        "staged data set, beside the majority rate / running mean and the linear learner", params={
    "datasets": "comma-separated subset of the staged datasets", "learners": "comma-separated subset of the learners",
    "max_rows": "use the first N rows of every dataset", "fresh": "1: ignore the cached results and run again",
    "time_limit": "seconds per cell before it stops (default 120; the table says where)"})
def defaults_matrix(ctx: ExperimentContext) -> ExperimentResult:
    opts = ctx.options
    names = [d for d in (str(opts["datasets"]).split(",") if opts.get("datasets") else REGISTRY)
             if find_files(d, ctx.data_dir) is not None]
    chosen = str(opts["learners"]).split(",") if opts.get("learners") else learners(kind="streaming")
    max_rows = int(opts.get("max_rows", 400 if ctx.quick else MAX_ROWS))
    runs = ctx.runs
    time_limit = float(opts.get("time_limit", TIME_LIMIT))
    cache_path = ctx.out_dir / "defaults.jsonl"
    cache: dict[tuple, dict] = {}
    plan = [(d, n) for d in names for n in chosen if applicable(n, dataset_info(d).task)]
    if cache_path.exists():
        kept, planned = [], set(plan)
        for line in cache_path.read_text().splitlines():
            rec = json.loads(line)
            if opts.get("fresh") and (rec["dataset"], rec["learner"]) in planned:
                continue  # run again: the old result leaves the file
            kept.append(line)
            if rec.get("max_rows") == max_rows:
                cache[(rec["dataset"], rec["learner"], rec["seed"])] = rec
        if opts.get("fresh"):
            cache_path.write_text("".join(line + "\n" for line in kept))
    todo = sum(1 for d, n in plan for s in range(runs) if (d, n, s) not in cache)
    baselines, cut, widths = {}, {}, {}
    with Progress(todo, "defaults", ctx.progress) as bar, open(cache_path, "a") as out:
        for d in names:
            info = dataset_info(d)
            X, y = load_dataset(d, ctx.data_dir)
            base = []
            for seed in range(runs):
                order = permutation(len(y), seed)[:max_rows]
                yp = y[order]
                base.append(majority_rate(yp) if info.task == "classification" else mean_predictor_loss(yp))
                for n in chosen:
                    if (d, n) not in plan or (d, n, seed) in cache:
                        continue
                    bar.set_label(f"{d} {n}")
                    rec = {"dataset": d, "learner": n, "seed": seed, "max_rows": max_rows,
                           **_cell(n, X[order], yp, info.task, seed, time_limit)}
                    cache[(d, n, seed)] = rec
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                    bar.advance()
            baselines[d] = float(np.mean(base))
            cut[d] = len(y) > max_rows
            widths[d] = [cache[(d, n, s)].get("sigma") for n in chosen for s in range(runs)
                         if (d, n, s) in cache and cache[(d, n, s)].get("sigma") is not None]

    # The measured reason for perceptron cells above the majority rate (see PERCEPTRONS).
    reference: dict[str, float] = {}
    flagged = sorted({d for d in names for n in PERCEPTRONS if (d, n) in plan and _is_classification(d)
                      and _mean_metric(cache, d, n, runs) is not None
                      and _mean_metric(cache, d, n, runs) > baselines[d]})
    for d in flagged:
        X, y = load_dataset(d, ctx.data_dir)
        vals = []
        for seed in range(runs):
            key = (d, "kernel-perceptron", seed)
            if key not in cache:
                order = permutation(len(y), seed)[:max_rows]
                learner = make("rbp", budget=len(order), random_state=seed)
                cache[key] = {"dataset": d, "learner": "kernel-perceptron", "seed": seed, "max_rows": max_rows,
                              "metric": float(learner.run(X[order], y[order]).metric)}
                with open(cache_path, "a") as out:
                    out.write(json.dumps(cache[key]) + "\n")
            vals.append(cache[key]["metric"])
        reference[d] = float(np.mean(vals))

    header = ["learner"] + [d + (f" (first {max_rows:,})" if cut[d] else "") for d in names]
    rows, csv_rows, above, diverged, stopped = [], [], [], [], []
    task_of = {d: dataset_info(d).task for d in names}
    rows.append(["majority rate % / running-mean loss"] + [
        f"{baselines[d]:.2f}" if task_of[d] == "classification" else f"{baselines[d]:.4f}" for d in names])
    for n in chosen:
        row = [n]
        for d in names:
            if (d, n) not in plan:
                row.append("n/a")
                continue
            recs = [cache[(d, n, s)] for s in range(runs)]
            errors = [r for r in recs if r.get("metric") is None]
            if errors:
                row.append("diverged")
                diverged.append(f"{d} / {n}: {errors[0]['error']}")
                continue
            vals = [r["metric"] for r in recs]
            is_above = float(np.mean(vals)) > baselines[d]
            mark = "!" if is_above else ""
            partial = [r for r in recs if r.get("rows_done", r.get("rows")) != r.get("rows")]
            if partial:
                mark += "*"
                stopped.append(f"{d} / {n}: stopped at the time limit ({time_limit:g} s) after "
                               + ", ".join(f"{r['rows_done']:,}" for r in partial) + " of "
                               + f"{partial[0]['rows']:,} rows; the cell is over the rows reached")
            if is_above:
                above.append((d, n, float(np.mean(vals)), baselines[d]))
            row.append(_fmt(vals, task_of[d]) + mark)
            csv_rows.append([d, n, runs, min(max_rows, dataset_info(d).rows),
                             float(np.mean(vals)), float(np.std(vals)), baselines[d],
                             float(np.mean([r["seconds"] for r in recs]))])
        rows.append(row)
    rows.append(["sigma chosen (mean)"] + [f"{np.mean(widths[d]):.3g}" if widths[d] else "" for d in names])

    lines = [
        "# Library defaults on every staged data set",
        "",
        f"Generated by `okl reproduce defaults --runs {runs}`: each cell is `okl.make(name, random_state=seed)`"
        " (with `loss=\"squared\"` on regression sets) run test-then-train; no width, step, budget or horizon"
        f" passed. Mean over {runs} permutations (seeds 0..{runs - 1}); every round counted; mistake rate %"
        " (classification) or mean squared loss (regression, targets in [0, 1]). Sets longer than"
        f" {max_rows:,} rows are cut to the first {max_rows:,} rows of each permutation (header says so).",
        "The width each learner chose from its first 50 rows (sqrt(tr Cov / 2)) is in the last row.",
        "`!` marks a cell above the majority rate / running-mean loss of the same streams.",
        "",
        markdown_table(header, rows),
        "",
    ]
    if diverged:
        lines += ["Diverged:", ""] + [f"- {t}" for t in diverged] + [""]
    if stopped:
        lines += ["`*` Too slow at its defaults (time limit per cell):", ""] + [f"- {t}" for t in stopped] + [""]
    lines += [f"Cells above the majority rate / running mean: {len(above)}."]
    for d, n, v, b in above:
        why = REASONS.get((d, n), REASONS.get(("*", n), ""))
        if n in PERCEPTRONS and d in reference:
            if reference[d] > b:
                cause = ("also above the majority rate: a mistake-driven update learns the label noise of "
                         "a non-separable stream, with or without a budget")
            else:
                cause = "below the majority rate: the budget maintenance, not the update, is the cause"
            why = (f"the kernel perceptron with no budget (RBP, B = T) makes {reference[d]:.2f} % on the "
                   f"same streams, {cause}. " + why)
        lines.append(f"- {d} / {n}: {v:.4g} vs {b:.4g}" + (f" — {why}" if why else " — no reason recorded"))
    md = "\n".join(lines) + "\n"
    md_path = ctx.out_dir / "defaults.md"
    md_path.write_text(md)
    csv_path = ctx.out_dir / "defaults.csv"
    write_csv(csv_path, ["dataset", "learner", "runs", "rows", "metric_mean", "metric_std", "baseline",
                         "seconds_mean"], csv_rows)
    return ExperimentResult(md, [md_path, csv_path, cache_path])
