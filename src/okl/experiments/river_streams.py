"""okl beside River's own models on River's bundled data sets and synthetic drift streams.

``okl reproduce river-streams --out docs/results/`` writes ``river-streams.md`` (with
``river-streams.csv`` and ``river-streams.png``) and prints the same Markdown. Every model runs
through River's own ``evaluate.progressive_val_score`` (predict, then learn, one event at a time;
River skips the metric while a model answers ``None``) on the same events:

* okl through :mod:`okl.river` with its library defaults, no scaler in front (the learners fix a
  per-feature scale from their first 50 events): ``auto`` and the single learners ``nogd``,
  ``forks``, ``fogd`` and ``linear`` (``OKLRiverClassifier(learner=L, seed=0)``;
  ``OKLRiverRegressor`` on regression streams);
* River, each behind a ``preprocessing.StandardScaler`` (as River's documentation runs them; its
  tree regressors' linear leaf models diverge on raw features): ``LogisticRegression``
  (``LinearRegression`` on regression streams), ``HoeffdingAdaptiveTreeClassifier`` /
  ``Regressor`` (seed 0), ``ARFClassifier`` / ``ARFRegressor`` with ``n_models=10`` (seed 0) and
  ``KNNClassifier`` / ``KNNRegressor`` (River's defaults, its default ``SWINN`` search graph given
  ``seed=0``: unseeded, the graph's random draws moved KNN's cells by up to 1 point between runs).

Streams: River's bundled Phishing, Bananas, ImageSegments (7 classes), TrumpApproval and
ChickWeights, and the synthetic Agrawal and SEA (each a ``ConceptDriftStream``: the concept
changes halfway, over a twentieth of the events), Hyperplane (``mag_change=0.001``: gradual
drift), RandomRBFDrift (``change_speed=0.001``), Friedman and FriedmanDrift (global recurring
drift at 1/3 and 2/3 of the events), seeds fixed. ImageSegments has 7 classes: okl's classifiers
take them as they are (one feature map with an output per class, :mod:`okl.learners.multiclass`); River's
logistic regression runs inside River's ``OneVsRestClassifier``, labelled so in the table.

Metrics: accuracy % (classification) or MAE (regression), and events per second (the whole
``progressive_val_score`` call: prediction, learning and River's bookkeeping, on this machine).
Default length: the first ``events`` = 2,000 events of every stream (bundled sets shorter than that
in full); ``--param events=0`` runs the bundled sets in full and the synthetic streams for
``full_events`` = 20,000 events. ``--param streams=a,b models=c,d`` narrow the run. The table
header states the lengths used.
"""

from __future__ import annotations

import itertools
import time

from okl.eval.progress import Progress
from okl.eval.tables import markdown_table, write_csv
from okl.experiments import ExperimentContext, ExperimentResult, experiment

#: events per stream by default (``--param events=N``; 0: full length)
EVENTS = 2000
#: events of a synthetic stream when ``events=0``
FULL_EVENTS = 20000

OKL_MODELS = ("okl auto", "okl nogd", "okl forks", "okl fogd", "okl linear")
RIVER_MODELS = ("River LogReg / LinReg", "River HAT", "River ARF(10)", "River KNN")


def _streams(n: int | None, full: int):
    """(name, task, events list, note) per stream; n None: full length (synthetic: ``full``)."""
    from river import datasets
    from river.datasets import synth

    def take(ds, k):
        return list(itertools.islice(ds, k))

    m = n or full
    drift = {"position": m // 2, "width": max(1, m // 20)}
    return {
        "Phishing": ("classification", lambda: take(datasets.Phishing(), n or 10**9), ""),
        "Bananas": ("classification", lambda: take(datasets.Bananas(), n or 10**9), ""),
        "ImageSegments": ("multiclass", lambda: take(datasets.ImageSegments(), n or 10**9),
                          "7 classes: okl natively (one feature map, an output per class), LogReg via River's OneVsRestClassifier"),
        "Agrawal": ("classification", lambda: take(synth.ConceptDriftStream(
            synth.Agrawal(classification_function=0, seed=1), synth.Agrawal(classification_function=2, seed=2),
            seed=1, **drift), m), "function 0 -> 2 at the middle"),
        "SEA": ("classification", lambda: take(synth.ConceptDriftStream(
            synth.SEA(variant=0, seed=1), synth.SEA(variant=2, seed=2), seed=1, **drift), m),
            "variant 0 -> 2 at the middle"),
        "Hyperplane": ("classification", lambda: take(synth.Hyperplane(seed=1, mag_change=0.001), m),
                       "gradual drift"),
        "RandomRBFDrift": ("classification", lambda: take(synth.RandomRBFDrift(
            seed_model=1, seed_sample=1, change_speed=0.001), m), "moving centroids"),
        "TrumpApproval": ("regression", lambda: take(datasets.TrumpApproval(), n or 10**9), ""),
        "ChickWeights": ("regression", lambda: take(datasets.ChickWeights(), n or 10**9), ""),
        "Friedman": ("regression", lambda: take(synth.Friedman(seed=1), m), ""),
        "FriedmanDrift": ("regression", lambda: take(synth.FriedmanDrift(
            drift_type="gra", position=(m // 3, 2 * m // 3), seed=1), m), "global recurring drift"),
    }


def _model(name: str, task: str):
    """A fresh model ``name`` for a stream of kind ``task``."""
    from river import forest, linear_model, multiclass, neighbors, preprocessing, tree

    from okl.river import OKLRiverClassifier, OKLRiverRegressor

    if name.startswith("okl "):
        learner = name.split()[1]
        if task == "regression":
            return OKLRiverRegressor(learner=learner, seed=0)
        return OKLRiverClassifier(learner=learner, seed=0)  # K classes natively: one feature map, K outputs
    scaler = preprocessing.StandardScaler()  # in front of every River model (its tree regressors'
    # linear leaf models diverge on raw features: MAE 3e9 on TrumpApproval without it)
    if name == "River LogReg / LinReg":
        if task == "regression":
            return scaler | linear_model.LinearRegression()
        lr = linear_model.LogisticRegression()
        return scaler | (multiclass.OneVsRestClassifier(lr) if task == "multiclass" else lr)
    if name == "River HAT":
        return scaler | (tree.HoeffdingAdaptiveTreeRegressor(seed=0) if task == "regression"
                         else tree.HoeffdingAdaptiveTreeClassifier(seed=0))
    if name == "River ARF(10)":
        return scaler | (forest.ARFRegressor(n_models=10, seed=0) if task == "regression"
                         else forest.ARFClassifier(n_models=10, seed=0))
    if name == "River KNN":
        from river import utils

        # River's default engine (an SWINN graph over its Euclidean distance), seeded
        engine = neighbors.SWINN(dist_func=utils.math._euclidean_distance, seed=0)
        return scaler | (neighbors.KNNRegressor(engine=engine) if task == "regression"
                         else neighbors.KNNClassifier(engine=engine))
    raise ValueError(f"unknown model {name!r}")


def _cell(name: str, task: str, events: list) -> dict:
    from river import evaluate, metrics

    metric = metrics.MAE() if task == "regression" else metrics.Accuracy()
    t0 = time.perf_counter()
    value = evaluate.progressive_val_score(events, _model(name, task), metric).get()
    seconds = time.perf_counter() - t0
    return {"metric": float(value) * (1.0 if task == "regression" else 100.0), "seconds": seconds,
            "events": len(events)}


def _figure(path, streams, models, results) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clf = [s for s in streams if results[s]["task"] != "regression"]
    reg = [s for s in streams if results[s]["task"] == "regression"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    markers = "os^vD<>ph*"
    for k, m in enumerate(models):
        style = {"marker": markers[k % len(markers)], "linestyle": "none", "markersize": 7,
                 "label": m, "markerfacecolor": "none" if m.startswith("River") else None}
        if clf:
            axes[0].plot(range(len(clf)), [results[s]["cells"][m]["metric"] for s in clf], **style)
        if reg:
            axes[1].plot(range(len(reg)), [results[s]["cells"][m]["metric"] / min(
                results[s]["cells"][o]["metric"] for o in models) for s in reg], **style)
        rates = sorted(results[s]["cells"][m]["events"] / results[s]["cells"][m]["seconds"] for s in streams)
        axes[2].plot([k], [rates[len(rates) // 2]], **style)
        axes[2].vlines(k, rates[0], rates[-1], colors="0.6")
    axes[0].set_xticks(range(len(clf)), clf, rotation=30, ha="right")
    axes[0].set_ylabel("progressive accuracy %")
    axes[0].set_title("classification")
    axes[1].set_xticks(range(len(reg)), reg, rotation=30, ha="right")
    axes[1].set_ylabel("MAE / best MAE on the stream")
    axes[1].set_title("regression")
    axes[2].set_yscale("log")
    axes[2].set_xticks(range(len(models)), models, rotation=40, ha="right")
    axes[2].set_ylabel("events / s (median, range over streams)")
    axes[2].set_title("throughput")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@experiment("river-streams", "okl auto and single learners beside River's LogReg, HAT, ARF(10) and KNN on River's "
                             "bundled and synthetic drift streams (River's progressive_val_score)", params={
    "events": f"events per stream (default {EVENTS}; 0: bundled sets in full, synthetic streams {FULL_EVENTS})",
    "full_events": f"synthetic stream length when events=0 (default {FULL_EVENTS})",
    "streams": "comma-separated subset of the streams", "models": "comma-separated subset of the models"})
def river_streams(ctx: ExperimentContext) -> ExperimentResult:
    opts = ctx.options
    n = int(opts.get("events", 300 if ctx.quick else EVENTS)) or None
    full = int(opts.get("full_events", FULL_EVENTS))
    table = _streams(n, full)
    streams = [s for s in (opts["streams"].split(",") if "streams" in opts else table)]
    if ctx.quick and "streams" not in opts:
        streams = ["Phishing", "TrumpApproval"]
    models = [m for m in (opts["models"].split(",") if "models" in opts else OKL_MODELS + RIVER_MODELS)]
    for s in streams:
        if s not in table:
            raise ValueError(f"unknown stream {s!r}; streams: {', '.join(table)}")
    for m in models:
        if m not in OKL_MODELS + RIVER_MODELS:
            raise ValueError(f"unknown model {m!r}; models: {', '.join(OKL_MODELS + RIVER_MODELS)}")
    results: dict = {}
    with Progress(len(streams) * len(models), "river-streams", enabled=ctx.progress, unit="cells") as progress:
        for s in streams:
            task, make_events, note = table[s]
            events = make_events()
            results[s] = {"task": task, "note": note, "events": len(events), "cells": {}}
            for m in models:
                progress.set_label(f"{s} / {m}")
                results[s]["cells"][m] = _cell(m, task, events)
                progress.advance()

    def head(s):
        return f"{s} ({results[s]['events']:,})"

    clf = [s for s in streams if results[s]["task"] != "regression"]
    reg = [s for s in streams if results[s]["task"] == "regression"]
    lines = ["# okl beside River's models on River's streams", "",
             f"Generated by `okl reproduce river-streams{'' if n == EVENTS else ' --param events=' + str(n or 0)}` "
             "(River's `evaluate.progressive_val_score`: each event predicted, then learned). Events per stream in "
             "the column headers: " + (f"the first {n:,} of each stream (bundled sets shorter than that in full)"
                                       if n else f"bundled sets in full, synthetic streams {full:,}")
             + "; `--param events=0` runs the full lengths. okl: library defaults through `okl.river`, no scaler in "
             "front (`seed=0`); River, each behind a `StandardScaler`: `LogisticRegression` (`LinearRegression` for "
             "regression), `HoeffdingAdaptiveTree*` (seed 0), `ARF*(n_models=10)` (seed 0), `KNN*` (River's "
             "defaults, its SWINN search graph seeded 0).", ""]
    notes = [f"{s}: {results[s]['note']}" for s in streams if results[s]["note"]]
    if notes:
        lines += ["Streams: " + "; ".join(notes) + ".", ""]
    rows_csv = []
    for title, group, fmt in (("Progressive accuracy % (higher is better)", clf, "{:.2f}"),
                              ("Progressive MAE (lower is better)", reg, "{:.4g}")):
        if not group:
            continue
        best = {s: (max if title.startswith("Progressive accuracy") else min)(
            results[s]["cells"][m]["metric"] for m in models) for s in group}
        rows = []
        for m in models:
            row = [m]
            for s in group:
                v = results[s]["cells"][m]["metric"]
                text = fmt.format(v) + ("*" if v == best[s] else "")
                if results[s]["task"] == "multiclass" and m.startswith("River LogReg"):
                    text += " (OvR)"
                row.append(text)
            rows.append(row)
        lines += [f"## {title}", "", markdown_table(["model"] + [head(s) for s in group], rows), "",
                  "`*` best on the stream" + ("; `(OvR)`: inside River's OneVsRestClassifier (7 binary models); "
                                              "okl's classifiers take the 7 classes themselves (one feature map, an output per class)"
                                              if any(results[s]["task"] == "multiclass" for s in group) else "")
                  + ".", ""]
    rate_rows = []
    for m in models:
        rate_rows.append([m] + [f"{results[s]['cells'][m]['events'] / results[s]['cells'][m]['seconds']:,.0f}"
                                for s in streams])
        for s in streams:
            c = results[s]["cells"][m]
            rows_csv.append([s, results[s]["task"], m, c["events"], round(c["metric"], 6), round(c["seconds"], 4)])
    lines += ["## Events per second (the whole progressive_val_score call, on this run's machine)", "",
              markdown_table(["model"] + streams, rate_rows), ""]
    out = ctx.out_dir
    csv_path, png_path, md_path = out / "river-streams.csv", out / "river-streams.png", out / "river-streams.md"
    write_csv(csv_path, ["stream", "task", "model", "events", "metric", "seconds"], rows_csv)
    _figure(png_path, streams, models, results)
    lines += [f"Figure: `river-streams.png` (accuracy per classification stream, MAE relative to the best model per "
              "regression stream, events/s per model).", ""]
    markdown = "\n".join(lines)
    md_path.write_text(markdown + "\n")
    return ExperimentResult(markdown, [md_path, csv_path, png_path])
