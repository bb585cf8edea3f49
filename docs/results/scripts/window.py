"""The window member's width and length (docs/results/window.md): okl's kernel smoother alone
(``auto`` with the one member ["window", w, {"budget": B}], i.e. width w sigma_0) through
OKLRiverClassifier / OKLRiverRegressor, seed 0, River's predict-then-learn on riverbest.py's streams.

usage: PYTHONPATH=$PWD/src python docs/results/scripts/window.py [--riverbest ../shared/checks/riverbest.py] [--speed]
--speed: instead, auto per event with and without its window member beside ARF(10), interleaved on the
first 3,000 events of Agrawal seed 1 (riverbest.py's speed loop), three repetitions.
"""
import argparse
import importlib.util

ap = argparse.ArgumentParser()
ap.add_argument("--riverbest", default="../shared/checks/riverbest.py")
ap.add_argument("--speed", action="store_true")
args = ap.parse_args()
spec = importlib.util.spec_from_file_location("riverbest", args.riverbest)
rb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rb)

from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402

if args.speed:
    from river import forest

    from okl.learners.auto import default_pool

    rb.warm_okl()
    without = [list(m) for m in default_pool("classification") if m[0] != "window"]
    for rep in range(3):
        models = {"auto": OKLRiverClassifier(seed=0), "without": OKLRiverClassifier(seed=0, params={"members": without}),
                  "ARF10": forest.ARFClassifier(n_models=10, seed=0)}
        res = rb.interleaved(rb.make_stream("clf", "Agrawal", 1, 3000), models, rb.METRICS["clf"])
        us = {k: 1e6 * r["seconds"] / r["events"] for k, r in res.items()}
        print(f"rep {rep}: auto {us['auto']:.0f} us/event, without the window {us['without']:.0f} "
              f"({us['auto'] / us['without']:.2f}x), ARF(10) {us['ARF10']:.0f} -> auto {us['ARF10'] / us['auto']:.1f}x ARF(10)")
    raise SystemExit

WIDTHS = (0.0625, 0.125, 0.25, 0.5)
BUDGETS = (500, 1000)
CONFIGS = [("clf", "RandomRBFDrift", 1, 10_000), ("clf", "Bananas", 1, 0), ("clf", "Phishing", 1, 0),
           ("clf", "RandomTree", 1, 10_000), ("clf", "Agrawal", 1, 10_000), ("reg", "ChickWeights", 1, 0),
           ("reg", "Friedman", 1, 5_000), ("reg", "Planes2D", 1, 5_000)]
head = [f"sigma_0 x {w:g}, {b}" for w in WIDTHS for b in BUDGETS]
print("| stream | metric | " + " | ".join(head) + " |")
print("|---|---|" + "---|" * len(head))
for task, stream, seed, n in CONFIGS:
    cls = OKLRiverClassifier if task == "clf" else OKLRiverRegressor
    models = {f"{w}/{b}": cls(seed=0, params={"members": [["window", w, {"budget": b}]]}) for w in WIDTHS for b in BUDGETS}
    res = rb.interleaved(rb.make_stream(task, stream, seed, n), models, rb.METRICS[task])
    key = rb.KEY[task]
    cells = [f"{100 * res[m][key]:.2f}" if task == "clf" else f"{res[m][key]:.4g}" for m in models]
    print(f"| {stream} s{seed} | {'accuracy %' if task == 'clf' else 'MAE'} | " + " | ".join(cells) + " |", flush=True)
