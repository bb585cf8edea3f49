"""okl beside River's own models on River's bundled data sets and synthetic drift streams.

``okl reproduce river-streams --out docs/results/`` writes ``river-streams.md`` (with
``river-streams.csv``, ``river-streams.png`` and the cell cache ``river-streams.jsonl``) and prints
the same Markdown. Protocol: River's predict-then-learn, one event at a time, as
``river.evaluate.progressive_val_score`` runs it: for each event ``(x, y)`` in order, ``p =
model.predict_one(x)``, ``metric.update(y, p)`` unless ``p`` is ``None`` or ``{}`` (a model that has
learned nothing yet), then ``model.learn_one(x, y)``. The metric is River's ``Accuracy`` (in %) on
classification streams and ``MAE`` on regression streams. Each model makes its own pass over the
same materialised list of events; its seconds are its ``predict_one`` + ``learn_one`` calls only
(``perf_counter``), so events/s is what the model itself costs on this machine.

Models, seeded ``stream seed - 1`` (the convention of the measurement script ``riverbest.py``):

* okl through :mod:`okl.river` at its library defaults, no scaler in front (the learners fix a
  per-feature scale from their first 50 events): ``auto`` and the single learners ``nogd``,
  ``forks``, ``fogd`` and ``linear`` (``OKLRiverClassifier(learner=L, seed=seed - 1)``;
  ``OKLRiverRegressor`` on regression streams); K classes natively (one feature map, an output per
  class, :mod:`okl.runtime.multiclass`);
* River, classification: ``StandardScaler | LogisticRegression`` (inside River's
  ``OneVsRestClassifier`` on the multiclass streams LED, Waveform and ImageSegments),
  ``HoeffdingAdaptiveTreeClassifier``, ``ARFClassifier(n_models=10)``, ``StandardScaler |
  KNNClassifier`` (River's default engine, an ``SWINN`` graph over the Euclidean distance, seeded:
  unseeded, its random draws moved KNN's cells by up to 1 point between runs), ``StandardScaler |
  AMFClassifier(n_estimators=10)``, ``SRPClassifier(n_models=10)``; regression: every model behind a
  ``StandardScaler`` (River's tree regressors' linear leaf models diverge on raw features):
  ``LinearRegression``, ``HoeffdingAdaptiveTreeRegressor``, ``ARFRegressor(n_models=10)``,
  ``KNNRegressor`` (seeded SWINN), ``AMFRegressor(n_estimators=10)``, ``SRPRegressor(n_models=10)``.

Streams (definitions as ``riverbest.py``'s ``clf_streams`` / ``reg_streams``; ``n`` = ``events``,
stream seed ``s``, a second concept seeded ``s + 100``, ``ConceptDriftStream(seed=s)`` switching at
``n // 2`` over a width of 500 events, 50 for Sine and STAGGER): classification Agrawal (function
0 -> 4), SEA (variant 0 -> 3, noise 0.1), Hyperplane (10 features, 5 drifting, ``mag_change=0.001``,
5 % noise), RandomRBFDrift (50 centroids, 25 drifting at ``change_speed=0.001``), Sine (0 -> 1),
STAGGER (0 -> 1), LED (noise 0.1, 17 irrelevant features; 10 classes), Waveform (3 classes),
RandomTree, Mixed, and River's bundled Phishing (1,250 events), Bananas (5,300) and ImageSegments
(2,310; 7 classes); regression Friedman, FriedmanDrift (global recurring drift at ``n // 3`` and
``2n // 3``), Planes2D, Mv (its three string features one-hot, the same columns in every event, for
every model) and the bundled TrumpApproval (1,001) and ChickWeights (578). The synthetic streams run
``n`` events; a bundled set runs whole (each is shorter than the default ``n``; a smaller ``events``
cuts it to its first ``n``).

A time budget per cell (``budget`` seconds of the model's own predict + learn, default 120): a model
past it stops there; its cell gives the metric over the events it reached, marked ``(stopped at
N)``, and is not ranked. The tables give the mean over the stream seeds (default 1 and 2) per stream
and model, the best River model marked, and okl auto's gap to it (accuracy points; MAE in % of the
best River MAE); the per-seed cells are in the CSV. A model that raises is recorded as failed.

Cell cache: one JSON line per cell in ``<out>/river-streams.jsonl``, keyed by (stream, seed, events
run, model, budget) with the River version recorded (a cell recorded under another River version
is computed again; a later line for a key replaces an earlier one). A run computes only the cells
missing from it and writes each line (one ``write`` on an append-mode descriptor) the moment the
cell finishes, so a cut run keeps what finished and two processes with different ``seeds=`` can
fill the same file at once. ``--param fresh=okl`` reruns the selected okl cells (after a change to
okl); ``fresh=all`` (or ``1``) reruns every selected cell. ``--param events=N seeds=1,2
streams=a,b models=c,d budget=S`` narrow the run; ``--quick``: 300 events, seed 1, Phishing and
TrumpApproval.

Cost (2 cores, beside other jobs): the okl cells take a few minutes for everything; River's six
models most of it, 20 s (STAGGER) to 2 minutes (LED, 80 s of it SRP(10)) of their own time per
10,000-event stream and seed together, about half an hour for the defaults (estimated from the
first 86 River cells); the cache makes that a one-time cost.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Callable, NamedTuple

from okl.eval.progress import Progress
from okl.eval.tables import markdown_table, write_csv
from okl.experiments import ExperimentContext, ExperimentResult, experiment

#: events per synthetic stream by default (``--param events=N``); the bundled sets run whole
EVENTS = 10_000
#: stream seeds by default (``--param seeds=1,2``); every model is seeded ``stream seed - 1``
SEEDS = (1, 2)
#: seconds of a model's own predict_one + learn_one per cell before it stops (``--param budget=S``)
BUDGET = 120.0

OKL_MODELS = ("okl auto", "okl nogd", "okl forks", "okl fogd", "okl linear")
RIVER_MODELS = ("River LogReg / LinReg", "River HAT", "River ARF(10)", "River KNN", "River AMF(10)",
                "River SRP(10)")
MODELS = OKL_MODELS + RIVER_MODELS

#: streams whose labels take more than two values (River's LogReg runs inside OneVsRestClassifier)
MULTICLASS = ("LED", "Waveform", "ImageSegments")
#: River's bundled sets and their lengths (run whole unless ``events`` is smaller)
BUNDLED = {"Phishing": 1250, "Bananas": 5300, "ImageSegments": 2310, "TrumpApproval": 1001, "ChickWeights": 578}

#: Mv's three string features and their values: one-hot columns, every key present in every event
#: and every key a string (River's forests sort the keys)
MV_CATS = {3: ("red", "green", "brown"), 7: ("yes", "no"), 8: ("normal", "large")}


class Stream(NamedTuple):
    task: str  # "classification", "multiclass" or "regression"
    events: int  # events run: n, or a bundled set's length when shorter
    make: Callable[[], list]  # the events, materialised
    note: str


def _mv_onehot(x: dict) -> dict:
    out = {}
    for k, v in x.items():
        if k in MV_CATS:
            for c in MV_CATS[k]:
                out[f"{k}_{c}"] = 1.0 if v == c else 0.0
        else:
            out[str(k)] = v
    return out


def _streams(seed: int, n: int) -> dict[str, Stream]:
    """name -> :class:`Stream` for stream seed ``seed`` and length ``n`` (riverbest's definitions)."""
    from river import datasets
    from river.datasets import synth

    s2 = seed + 100

    def cds(a, b, width=500):
        return lambda: list(synth.ConceptDriftStream(a, b, position=n // 2, width=width, seed=seed).take(n))

    def take(ds):
        return lambda: list(ds.take(n))

    def bundled(cls):
        return lambda: list(itertools.islice(cls(), n))

    clf, mc, reg = "classification", "multiclass", "regression"
    table = {
        "Agrawal": (clf, cds(synth.Agrawal(classification_function=0, seed=seed),
                             synth.Agrawal(classification_function=4, seed=s2)), "function 0 -> 4 at the middle"),
        "SEA": (clf, cds(synth.SEA(variant=0, noise=0.1, seed=seed), synth.SEA(variant=3, noise=0.1, seed=s2)),
                "variant 0 -> 3 at the middle, noise 0.1"),
        "Hyperplane": (clf, take(synth.Hyperplane(seed=seed, n_features=10, n_drift_features=5, mag_change=0.001,
                                                  noise_percentage=0.05)), "gradual drift of 5 of 10 features"),
        "RandomRBFDrift": (clf, take(synth.RandomRBFDrift(seed_model=seed, seed_sample=seed, n_classes=2,
                                                          n_features=10, n_centroids=50, change_speed=0.001,
                                                          n_drift_centroids=25)), "25 of 50 centroids moving"),
        "Sine": (clf, cds(synth.Sine(classification_function=0, seed=seed),
                          synth.Sine(classification_function=1, seed=s2), width=50), "function 0 -> 1 at the middle"),
        "STAGGER": (clf, cds(synth.STAGGER(classification_function=0, seed=seed),
                             synth.STAGGER(classification_function=1, seed=s2), width=50),
                    "function 0 -> 1 at the middle"),
        "LED": (mc, take(synth.LED(seed=seed, noise_percentage=0.1, irrelevant_features=True)),
                "10 classes, noise 0.1, 17 irrelevant features"),
        "Waveform": (mc, take(synth.Waveform(seed=seed)), "3 classes"),
        "RandomTree": (clf, take(synth.RandomTree(seed_tree=seed, seed_sample=seed)), ""),
        "Mixed": (clf, take(synth.Mixed(seed=seed)), ""),
        "Phishing": (clf, bundled(datasets.Phishing), ""),
        "Bananas": (clf, bundled(datasets.Bananas), ""),
        "ImageSegments": (mc, bundled(datasets.ImageSegments), "7 classes"),
        "Friedman": (reg, take(synth.Friedman(seed=seed)), ""),
        "FriedmanDrift": (reg, take(synth.FriedmanDrift(drift_type="gra", position=(n // 3, 2 * n // 3), seed=seed)),
                          "global recurring drift at 1/3 and 2/3"),
        "Planes2D": (reg, take(synth.Planes2D(seed=seed)), ""),
        "Mv": (reg, lambda: [(_mv_onehot(x), y) for x, y in synth.Mv(seed=seed).take(n)],
               "its three string features one-hot"),
        "TrumpApproval": (reg, bundled(datasets.TrumpApproval), ""),
        "ChickWeights": (reg, bundled(datasets.ChickWeights), ""),
    }
    return {name: Stream(task, min(n, BUNDLED.get(name, n)), make, note) for name, (task, make, note) in table.items()}


def _model(name: str, task: str, seed: int):
    """A fresh model ``name`` for a stream of kind ``task``, seeded ``seed`` (= stream seed - 1)."""
    from river import ensemble, forest, linear_model, multiclass, neighbors, preprocessing, tree, utils

    from okl.river import OKLRiverClassifier, OKLRiverRegressor

    reg = task == "regression"
    if name in OKL_MODELS:
        learner = name.split()[1]
        return (OKLRiverRegressor if reg else OKLRiverClassifier)(learner=learner, seed=seed)

    def ss():
        return preprocessing.StandardScaler()

    if name == "River LogReg / LinReg":
        if reg:
            return ss() | linear_model.LinearRegression()
        lr = linear_model.LogisticRegression()
        return ss() | (multiclass.OneVsRestClassifier(lr) if task == "multiclass" else lr)
    if name == "River HAT":
        return (ss() | tree.HoeffdingAdaptiveTreeRegressor(seed=seed)) if reg else \
            tree.HoeffdingAdaptiveTreeClassifier(seed=seed)
    if name == "River ARF(10)":
        return (ss() | forest.ARFRegressor(n_models=10, seed=seed)) if reg else \
            forest.ARFClassifier(n_models=10, seed=seed)
    if name == "River KNN":
        engine = neighbors.SWINN(dist_func=utils.math._euclidean_distance, seed=seed)
        return ss() | (neighbors.KNNRegressor(engine=engine) if reg else neighbors.KNNClassifier(engine=engine))
    if name == "River AMF(10)":
        return ss() | (forest.AMFRegressor(n_estimators=10, seed=seed) if reg else
                       forest.AMFClassifier(n_estimators=10, seed=seed))
    if name == "River SRP(10)":
        return (ss() | ensemble.SRPRegressor(n_models=10, seed=seed)) if reg else \
            ensemble.SRPClassifier(n_models=10, seed=seed)
    raise ValueError(f"unknown model {name!r}")


def _cell(name: str, task: str, events: list, seed: int = 1, budget: float | None = None) -> dict:
    """Model ``name`` (seeded ``seed - 1``) on ``events``: River's predict-then-learn. Returns the metric
    (accuracy % or MAE) over the events reached, the model's own seconds, the events reached, and
    ``stopped_at`` (events reached) when its seconds passed ``budget`` before the end."""
    from river import metrics

    metric = metrics.MAE() if task == "regression" else metrics.Accuracy()
    model = _model(name, task, seed - 1)
    pc = time.perf_counter
    seconds, done, stopped, error = 0.0, 0, None, None
    try:
        for x, y in events:
            t0 = pc()
            p = model.predict_one(x)
            t1 = pc()
            if p is not None and p != {}:
                metric.update(y, p)
            t2 = pc()
            model.learn_one(x, y)
            seconds += (t1 - t0) + (pc() - t2)
            done += 1
            if budget is not None and seconds > budget and done < len(events):
                stopped = done
                break
    except Exception as exc:  # a model that fails is a finding: recorded, not ranked
        error = f"{type(exc).__name__}: {exc}"[:300] + f" (after {done} events)"
    value = float(metric.get()) * (1.0 if task == "regression" else 100.0)
    return {"metric": value, "seconds": seconds, "done": done, "stopped_at": stopped, "error": error}


def _warm_okl(models) -> None:
    """Load (or compile, once per machine) okl's Numba loops before any okl cell is timed."""
    from river.datasets import synth

    for name in models:
        for task, ds in (("classification", synth.SEA(seed=9)), ("multiclass", synth.LED(seed=9)),
                         ("regression", synth.Friedman(seed=9))):
            model = _model(name, task, 0)
            for x, y in ds.take(120):
                model.predict_one(x)
                model.learn_one(x, y)


def _append(path, rec: dict) -> None:
    """One cache line, one ``write`` on an append-mode descriptor (safe beside another process)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(rec) + "\n").encode())
    finally:
        os.close(fd)


def _read_cache(path, river_version: str) -> dict:
    cache = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
                key = (rec["stream"], rec["seed"], rec["events"], rec["model"], float(rec["budget"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn line of a killed run
            if rec.get("river") == river_version:
                cache[key] = rec  # a later line replaces an earlier one
    return cache


def _names(opts: dict, key: str, known, default) -> list:
    if key not in opts:
        return list(default)
    names = [s.strip() for s in str(opts[key]).split(",") if s.strip()]
    for s in names:
        if s not in known:
            raise ValueError(f"unknown {key[:-1]} {s!r}; {key}: {', '.join(known)}")
    return names


def _figure(path, clf, reg, models, mean, rate) -> None:
    from okl.plotting import pyplot

    # the lowest MAE per regression stream among the cells that ran every event (any cell if none did)
    best = {s: min([mean[(s, m)]["metric"] for m in models if not mean[(s, m)]["stopped"]
                    and not mean[(s, m)]["failed"]] or [mean[(s, m)]["metric"] for m in models]) or 1.0 for s in reg}

    plt = pyplot()

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.4))
    markers = "os^vD<>ph*xP"
    for k, m in enumerate(models):
        style = {"marker": markers[k % len(markers)], "linestyle": "none", "markersize": 7,
                 "label": m, "markerfacecolor": "none" if m.startswith("River") else None}
        if clf:
            axes[0].plot(range(len(clf)), [mean[(s, m)]["metric"] for s in clf], **style)
        if reg:
            axes[1].plot(range(len(reg)), [mean[(s, m)]["metric"] / best[s] for s in reg], **style)
        rates = sorted(rate[m].values())
        if rates:
            axes[2].plot([k], [rates[len(rates) // 2]], **style)
            axes[2].vlines(k, rates[0], rates[-1], colors="0.6")
    axes[0].set_xticks(range(len(clf)), clf, rotation=35, ha="right")
    axes[0].set_ylabel("progressive accuracy % (mean over seeds)")
    axes[0].set_title("classification")
    axes[1].set_xticks(range(len(reg)), reg, rotation=35, ha="right")
    axes[1].set_ylabel("MAE / lowest MAE of a complete cell")
    axes[1].set_yscale("log")
    axes[1].set_title("regression")
    axes[2].set_yscale("log")
    axes[2].set_xticks(range(len(models)), models, rotation=40, ha="right")
    axes[2].set_ylabel("events / s (median, range over streams)")
    axes[2].set_title("predict_one + learn_one throughput")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@experiment("river-streams", "okl auto and single learners beside River's LogReg, HAT, ARF(10), KNN, AMF(10) and "
                             "SRP(10) on River's bundled and synthetic drift streams (predict-then-learn, "
                             "cached per cell)", params={
    "events": f"events per synthetic stream (default {EVENTS}; the bundled sets run whole, or their first N "
              "if shorter)",
    "seeds": "comma-separated stream seeds (default 1,2; models seeded seed - 1)",
    "streams": "comma-separated subset of the streams", "models": "comma-separated subset of the models",
    "budget": f"a model's own seconds per cell before it stops there (default {BUDGET:g})",
    "fresh": "okl: rerun the selected okl cells; all (or 1): rerun every selected cell (default: use the cache)"})
def river_streams(ctx: ExperimentContext) -> ExperimentResult:
    import river

    opts = ctx.options
    n = int(opts.get("events", 300 if ctx.quick else EVENTS))
    if n < 1:
        raise ValueError(f"events must be at least 1, got {n}")
    seeds = list(dict.fromkeys(int(s) for s in str(opts.get("seeds", "1" if ctx.quick else ",".join(
        map(str, SEEDS)))).split(",") if s.strip()))
    if not seeds or min(seeds) < 1:
        raise ValueError(f"seeds must be integers of at least 1 (models are seeded seed - 1), "
                         f"got {opts.get('seeds')!r}")
    budget = float(opts.get("budget", BUDGET))
    fresh = str(opts.get("fresh", "")).strip().lower()
    if fresh not in ("", "0", "okl", "all", "1"):
        raise ValueError(f"fresh must be okl, all or 1, got {fresh!r}")
    all_streams = list(_streams(1, n))
    streams = _names(opts, "streams", all_streams, ["Phishing", "TrumpApproval"] if ctx.quick else all_streams)
    models = _names(opts, "models", MODELS, MODELS)
    version = river.__version__

    cache_path = ctx.out_dir / "river-streams.jsonl"
    cache = _read_cache(cache_path, version)
    defs = {seed: _streams(seed, n) for seed in seeds}

    def key(s, seed, m):
        return (s, seed, defs[seed][s].events, m, budget)

    def rerun(m):
        return fresh in ("all", "1") or (fresh == "okl" and m in OKL_MODELS)

    todo = [(s, seed, m) for s in streams for seed in seeds for m in models
            if rerun(m) or key(s, seed, m) not in cache]
    warm = sorted({m for _, _, m in todo if m in OKL_MODELS})
    if warm:
        _warm_okl(warm)
    with Progress(len(todo), "river-streams", enabled=ctx.progress, unit="cells") as progress:
        for (s, seed), group in itertools.groupby(todo, key=lambda t: t[:2]):
            stream = defs[seed][s]
            events = stream.make()
            assert len(events) == stream.events, (s, len(events), stream.events)
            for _, _, m in group:
                progress.set_label(f"{s} s{seed} / {m}")
                rec = {"stream": s, "seed": seed, "events": stream.events, "model": m, "budget": budget,
                       "task": stream.task, **_cell(m, stream.task, events, seed, budget), "river": version}
                _append(cache_path, rec)
                cache[key(s, seed, m)] = rec
                progress.advance()

    # the per-seed cells and their means over the seeds
    cells = {(s, seed, m): cache[key(s, seed, m)] for s in streams for seed in seeds for m in models}
    task = {s: defs[seeds[0]][s].task for s in streams}
    length = {s: defs[seeds[0]][s].events for s in streams}
    mean = {}
    for s in streams:
        for m in models:
            recs = [cells[(s, seed, m)] for seed in seeds]
            mean[(s, m)] = {"metric": sum(r["metric"] for r in recs) / len(recs),
                            "stopped": [(seed, r["stopped_at"]) for seed, r in zip(seeds, recs) if r["stopped_at"]],
                            "failed": [(seed, r["error"]) for seed, r in zip(seeds, recs) if r["error"]]}
    rate = {m: {s: sum(cells[(s, seed, m)]["done"] for seed in seeds)
                / max(sum(cells[(s, seed, m)]["seconds"] for seed in seeds), 1e-12) for s in streams} for m in models}

    def ranked(s, m):
        return not mean[(s, m)]["stopped"] and not mean[(s, m)]["failed"]

    clf = [s for s in streams if task[s] != "regression"]
    reg = [s for s in streams if task[s] == "regression"]
    river_models = [m for m in models if m in RIVER_MODELS]
    seeds_text = ", ".join(map(str, seeds))
    command = "okl reproduce river-streams" + (" --quick" if ctx.quick else "") + "".join(
        f" --param {k}={opts[k]}" if " " not in str(opts[k]) else f' --param {k}="{opts[k]}"'
        for k in ("events", "seeds", "streams", "models", "budget") if k in opts)
    lines = [
        "# okl beside River's models on River's streams", "",
        f"Generated by `{command}` (River {version}). Protocol: River's predict-then-learn, one event at a time "
        "(as `river.evaluate.progressive_val_score`: `predict_one`, the metric updated unless the prediction is "
        "`None` or `{}`, then `learn_one`), each model on its own pass over the same events; metric River's "
        "`Accuracy` (%) or `MAE`. Lengths: the synthetic streams "
        f"{n:,} events, River's bundled sets whole"
        + ("" if n >= max(BUNDLED.values()) else f" (or their first {n:,} events when longer)")
        + f"; events per stream beside its name. Stream seed{'s' if len(seeds) > 1 else ''} {seeds_text}"
        + (" (the tables give the mean over the seeds; the per-seed cells are in `river-streams.csv`)"
           if len(seeds) > 1 else "")
        + "; every model seeded stream seed - 1. okl: `OKLRiverClassifier(learner=L, seed=seed - 1)` "
        "(`OKLRiverRegressor` for regression) at the library defaults, no scaler in front, for L = auto, nogd, "
        "forks, fogd, linear; K classes natively. River, classification: `StandardScaler | LogisticRegression` "
        "(inside `OneVsRestClassifier` on LED, Waveform and ImageSegments, marked `(OvR)`), "
        "`HoeffdingAdaptiveTreeClassifier`, `ARFClassifier(n_models=10)`, `StandardScaler | KNNClassifier` "
        "(its SWINN engine seeded), `StandardScaler | AMFClassifier(n_estimators=10)`, "
        "`SRPClassifier(n_models=10)`; regression, each behind a `StandardScaler`: `LinearRegression`, "
        "`HoeffdingAdaptiveTreeRegressor`, `ARFRegressor(n_models=10)`, `KNNRegressor` (SWINN seeded), "
        "`AMFRegressor(n_estimators=10)`, `SRPRegressor(n_models=10)`. Time budget: a model whose own "
        f"`predict_one` + `learn_one` seconds pass {budget:g} s on a stream stops there; its cell gives the "
        "metric over the events it reached, marked `(stopped at N)`, and is not ranked.", ""]
    notes = [f"{s}: {defs[seeds[0]][s].note}" for s in streams if defs[seeds[0]][s].note]
    if notes:
        lines += ["Streams: " + "; ".join(notes) + " (definitions in the module's docstring).", ""]

    def text(s, m, fmt, star):
        c = mean[(s, m)]
        if c["failed"]:
            return "failed (" + ", ".join(f"seed {seed}: {e.split(':')[0]}" for seed, e in c["failed"]) + ")"
        out = fmt.format(c["metric"]) + ("*" if star else "")
        if c["stopped"]:
            out += (f" (stopped at {c['stopped'][0][1]:,})" if len(seeds) == 1 else
                    " (stopped: " + ", ".join(f"seed {seed} at {at:,}" for seed, at in c["stopped"]) + ")")
        if task[s] == "multiclass" and m == "River LogReg / LinReg":
            out += " (OvR)"
        return out

    for title, group, fmt, better, unit in (
            ("Progressive accuracy % (higher is better)", clf, "{:.2f}", max, "accuracy points"),
            ("Progressive MAE (lower is better)", reg, "{:.4g}", min,
             "okl auto's MAE above (+) or below (-) the best River model's, in %")):
        if not group:
            continue
        gap_col = "okl auto" in models and bool(river_models)
        rows = []
        for s in group:
            ok = [m for m in river_models if ranked(s, m)]
            best = better(mean[(s, m)]["metric"] for m in ok) if ok else None
            row = [f"{s} ({length[s]:,})"]
            for m in models:
                row.append(text(s, m, fmt, m in ok and mean[(s, m)]["metric"] == best))
            if gap_col:
                if best is None or not ranked(s, "okl auto"):
                    row.append("n/a")
                elif better is max:
                    row.append(f"{mean[(s, 'okl auto')]['metric'] - best:+.2f}")
                else:
                    row.append(f"{100 * (mean[(s, 'okl auto')]['metric'] / best - 1):+.1f} %")
            rows.append(row)
        lines += [f"## {title}", "", markdown_table(["stream (events)"] + models + (
            ["okl auto - best River"] if gap_col else []), rows), "",
                  "`*` the best River model on the stream (among the cells that ran every event)"
                  + (f"; okl auto - best River: {unit}" if gap_col else "")
                  + (f"; mean over seeds {seeds_text}" if len(seeds) > 1 else "") + ".", ""]

    rate_rows = []
    for m in models:
        r = sorted(rate[m].values())
        rate_rows.append([m, f"{r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2:,.0f}",
                          f"{r[0]:,.0f} - {r[-1]:,.0f}",
                          f"{min(rate[m], key=rate[m].get)} - {max(rate[m], key=rate[m].get)}"])
    lines += ["## Events per second (predict_one + learn_one, on the machine and at the time each cell ran)", "",
              markdown_table(["model", "median over the streams", "range", "slowest - fastest stream"], rate_rows),
              "", "Figure: `river-streams.png` (accuracy per classification stream, MAE relative to the best model "
              "per regression stream, events/s per model).", ""]

    out = ctx.out_dir
    csv_path, png_path, md_path = out / "river-streams.csv", out / "river-streams.png", out / "river-streams.md"
    write_csv(csv_path, ["stream", "task", "seed", "model", "events", "metric", "seconds", "stopped_at", "error"],
              [[s, task[s], seed, m, length[s], round(c["metric"], 6), round(c["seconds"], 4),
                c["stopped_at"] or "", c["error"] or ""] for (s, seed, m), c in cells.items()])
    _figure(png_path, clf, reg, models, mean, rate)
    markdown = "\n".join(lines)
    md_path.write_text(markdown + "\n")
    return ExperimentResult(markdown, [md_path, csv_path, png_path, cache_path])
