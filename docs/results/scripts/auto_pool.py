"""auto's pool variants measured across every stream we have (docs/results/auto-pool.md).

Suites (each row: okl auto through OKLRiverClassifier / OKLRiverRegressor, seed 0, River's
predict-then-learn, or okl's run() on the staged sets):
  river    the 23 configurations of ../shared/checks/riverbest.py (gap to the best River model)
  heldout  other seeds and generator settings of River's streams at 10,000 events (no River
           reference: absolute accuracy / MAE, compared between variants)
  staged   the staged data sets of the defaults matrix, permutation 0, first 20,000 rows (mistake
           rate % / mean squared loss, as docs/results/defaults.md)

usage (from the project root):
  PYTHONPATH=$PWD/src OKL_DATA=../shared/datasets python docs/results/scripts/auto_pool.py \\
      --variant default,l1fogd --suite river,heldout,staged [--only Agrawal] [--out results.jsonl]
A variant is a name in VARIANTS (a function of the task returning auto's members list, or None for
the library default), "params:<python dict>" of auto's hyperparameters, or "plus:<learner>": the
default pool and one member of that registered learner at the pool's width, its defaults or
"plus:<learner>:<python dict>" its parameters (issue 47: does a kernel adaptive filter pay as a
member?).
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

import numpy as np
from river.datasets import synth

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "shared" / "checks"))
import riverbest as rb  # noqa: E402

from okl.ensemble.auto import default_pool  # noqa: E402
from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402


def _with(task, extra):
    return [list(m) for m in default_pool(task)] + [list(m) for m in extra(task)]


def _l1fogd(task):
    eta = 1.0 if task == "classification" else 0.5
    return [("fogd", w, {"eta": eta, "kernel": "laplacian"}) for w in (0.5, 1.0, 2.0)]


def _changed(task, match, **params):
    """The default pool with ``params`` set on the members for which ``match(name, params)``."""
    return [[n, w, {**p, **params} if match(n, p) else dict(p)] for n, w, p in default_pool(task)]


def _without(task, name):
    return [list(m) for m in default_pool(task) if m[0] != name]


VARIANTS = {
    "default": lambda task: None,
    "l1fogd": lambda task: _with(task, _l1fogd),
    "nowindow": lambda task: _without(task, "window"),  # the pool before the window member
    "window200": lambda task: _changed(task, lambda n, p: n == "window", budget=200),  # rows kept
    "window300": lambda task: _changed(task, lambda n, p: n == "window", budget=300),
    "window500": lambda task: _changed(task, lambda n, p: n == "window", budget=500),
    "l1d800": lambda task: _changed(task, lambda n, p: p.get("kernel") == "laplacian", budget=200),  # D = 4 x 200
    "l1d1200": lambda task: _changed(task, lambda n, p: p.get("kernel") == "laplacian", budget=300),
    # the L1 family at D = 1200 with one narrow (sigma_0 / 2) kernel member fewer, to pay for it
    "l1d1200-forks": lambda task: _without_narrow(_changed(task, lambda n, p: p.get("kernel") == "laplacian",
                                                           budget=300), "forks"),
    "l1d1200-nogd": lambda task: _without_narrow(_changed(task, lambda n, p: p.get("kernel") == "laplacian",
                                                          budget=300), "nogd"),
}


def _without_narrow(members, name):
    return [m for m in members if not (m[0] == name and m[1] == 0.5)]


def variant_params(name, task):
    if name.startswith("params:"):
        return ast.literal_eval(name[len("params:"):])
    if name.startswith("plus:"):  # plus:<learner> or plus:<learner>:<python dict of its parameters>
        learner, _, params = name[len("plus:"):].partition(":")
        return {"members": _with(task, lambda t: [(learner, 1.0, ast.literal_eval(params) if params else {})])}
    members = VARIANTS[name](task)
    return {} if members is None else {"members": members}


def heldout_configs():
    """(name, task, stream factory): other seeds and generator settings at 10,000 events."""
    n = 10_000

    def cds(a, b, seed, width=500):
        return synth.ConceptDriftStream(a, b, position=n // 2, width=width, seed=seed).take(n)

    c = [
        ("Agrawal 1->7 s3", "clf", lambda: cds(synth.Agrawal(1, seed=3), synth.Agrawal(7, seed=103), 3)),
        ("Agrawal 2->9 s4", "clf", lambda: cds(synth.Agrawal(2, seed=4), synth.Agrawal(9, seed=104), 4)),
        ("Agrawal 5 pert s5", "clf", lambda: synth.Agrawal(5, seed=5, perturbation=0.1).take(n)),
        ("RandomTree s3", "clf", lambda: synth.RandomTree(seed_tree=3, seed_sample=3).take(n)),
        ("RandomTree 3num8cat s4", "clf", lambda: synth.RandomTree(seed_tree=4, seed_sample=4, n_num_features=3,
                                                                    n_cat_features=8).take(n)),
        ("RandomTree 10num s5", "clf", lambda: synth.RandomTree(seed_tree=5, seed_sample=5, n_num_features=10,
                                                                 n_cat_features=0, max_tree_depth=4).take(n)),
        ("RandomRBFDrift s3", "clf", lambda: synth.RandomRBFDrift(seed_model=3, seed_sample=3, n_classes=2,
                                                                   n_features=10, n_centroids=50, change_speed=0.001,
                                                                   n_drift_centroids=25).take(n)),
        ("RandomRBF 4c s4", "clf", lambda: synth.RandomRBF(seed_model=4, seed_sample=4, n_classes=4, n_features=8,
                                                            n_centroids=30).take(n)),
        ("Hyperplane 20f s3", "clf", lambda: synth.Hyperplane(seed=3, n_features=20, n_drift_features=10,
                                                               mag_change=0.001, noise_percentage=0.05).take(n)),
        ("SEA 1->2 s3", "clf", lambda: cds(synth.SEA(1, noise=0.1, seed=3), synth.SEA(2, noise=0.1, seed=103), 3)),
        ("Sine 2->3 s3", "clf", lambda: cds(synth.Sine(2, seed=3), synth.Sine(3, seed=103), 3, 50)),
        ("STAGGER 1->2 s3", "clf", lambda: cds(synth.STAGGER(1, seed=3), synth.STAGGER(2, seed=103), 3, 50)),
        ("LED s3", "clf", lambda: synth.LED(seed=3, noise_percentage=0.1, irrelevant_features=True).take(n)),
        ("Waveform s3", "clf", lambda: synth.Waveform(seed=3).take(n)),
        ("Mixed s3", "clf", lambda: synth.Mixed(seed=3).take(n)),
        ("Friedman s2", "reg", lambda: synth.Friedman(seed=2).take(5000)),
        ("FriedmanDrift lea s2", "reg", lambda: synth.FriedmanDrift(drift_type="lea", position=(1250, 2500, 3750),
                                                                    seed=2).take(5000)),
        ("Planes2D s2", "reg", lambda: synth.Planes2D(seed=2).take(5000)),
        ("Mv s2", "reg", lambda: ((rb.mv_onehot(x), y) for x, y in synth.Mv(seed=2).take(5000))),
    ]
    return c


def river_model(task, params):
    cls = OKLRiverClassifier if task == "clf" else OKLRiverRegressor
    return cls(seed=0, params=params or None)


def run_stream(task, stream, params):
    res = rb.interleaved(stream, {"m": river_model(task, params)}, rb.METRICS[task])["m"]
    return res[rb.KEY[task]], res["seconds"], res["events"]


def suite_river(variant, only, emit):
    ref = rb.load_ref()
    for task, stream, seed, n in rb.CONFIGS:
        if only and stream not in only:
            continue
        params = variant_params(variant, "classification" if task == "clf" else "regression")
        v, secs, ev = run_stream(task, rb.make_stream(task, stream, seed, n), params)
        b = ref["configs"][rb.config_key(task, stream, seed, n)]["best"]
        gap = 100 * (v - b["value"]) if task == "clf" else 100 * (v / b["value"] - 1)
        emit(dict(suite="river", variant=variant, config=f"{stream} s{seed}", task=task, value=v, gap=gap,
                  best=b["name"], us_per_event=1e6 * secs / ev))


def suite_heldout(variant, only, emit):
    for name, task, make in heldout_configs():
        if only and name.split()[0] not in only:
            continue
        params = variant_params(variant, "classification" if task == "clf" else "regression")
        v, secs, ev = run_stream(task, make(), params)
        emit(dict(suite="heldout", variant=variant, config=name, task=task, value=v, us_per_event=1e6 * secs / ev))


STAGED = ["german", "svmguide3", "spambase", "codrna", "codrna-train", "ijcnn1", "svmguide1", "cpusmall", "cadata",
          "parkinson", "pol", "house16h", "elevators", "ailerons", "adult", "splice"]


def suite_staged(variant, only, emit, rows=20_000, seeds=(0,)):
    import okl
    from okl.data.registry import dataset_info, load_dataset, permutation

    for d in STAGED:
        if only and d not in only:
            continue
        task = dataset_info(d).task
        X, y = load_dataset(d)
        for seed in seeds:
            p = permutation(len(y), seed)[:rows] if callable(permutation) else None
            Xs, ys = X[p], y[p]
            params = variant_params(variant, task)
            m = okl.make("auto", random_state=seed, **({} if task == "classification" else {"loss": "squared"}),
                         **params)
            t0 = time.perf_counter()
            f = m.run(Xs, ys).decisions
            secs = time.perf_counter() - t0
            v = (100.0 * float(np.mean(np.where(f >= 0, 1.0, -1.0) != ys)) if task == "classification"
                 else float(np.mean((f - ys) ** 2)))
            emit(dict(suite="staged", variant=variant, config=f"{d} p{seed}", task=task[:3] if task != "classification"
                      else "clf", value=v, us_per_event=1e6 * secs / len(ys)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="default")
    ap.add_argument("--suite", default="river,heldout,staged")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--rows", type=int, default=20_000)
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    rb.warm_okl()
    fh = open(a.out, "a") if a.out else None

    def emit(row):
        v = row["value"]
        shown = f"{v:.2f}" if row["task"] == "clf" and row["suite"] != "staged" or row["suite"] == "staged" and \
            row["task"] == "clf" else f"{v:.4g}"
        if row["task"] == "clf" and row["suite"] != "staged":
            shown = f"{100 * v:.2f}"
        gap = f"  gap {row['gap']:+.2f}" if "gap" in row else ""
        print(f"{row['variant']:12s} {row['suite']:8s} {row['config']:26s} {shown:>9s}{gap}  "
              f"[{row['us_per_event']:.0f} us/ev]", flush=True)
        if fh:
            fh.write(json.dumps(row) + "\n")
            fh.flush()

    for variant in a.variant.split(";"):
        for suite in a.suite.split(","):
            {"river": suite_river, "heldout": suite_heldout,
             "staged": lambda v, o, e: suite_staged(v, o, e, rows=a.rows)}[suite](variant, only, emit)


if __name__ == "__main__":
    main()
