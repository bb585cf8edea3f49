"""The window member's width and length (docs/results/window.md): okl's kernel smoother alone
(``auto`` with the one member ["window", w, {"budget": B}], i.e. width w sigma_0) through
OKLRiverClassifier / OKLRiverRegressor, seed 0, River's predict-then-learn on riverbest.py's streams.

usage: PYTHONPATH=$PWD/src python docs/results/scripts/window.py [--riverbest ../shared/checks/riverbest.py]
(the cost in the pool: scripts/pool_speed.py --variant "nowindow;window200;window300;window500")
"""
import argparse

from _riverbest import load_riverbest

ap = argparse.ArgumentParser()
ap.add_argument("--riverbest", default="../shared/checks/riverbest.py")
args = ap.parse_args()
rb = load_riverbest(args.riverbest)

from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402

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
