"""Categorical features through okl.river: declared codes, native strings, and the integer-code rule
that was measured and not made the default (docs/results/categorical.md).

usage: PYTHONPATH=$PWD/src python docs/results/scripts/categorical.py [--riverbest ../shared/checks/riverbest.py]

Every model runs River's predict-then-learn protocol (riverbest.py's `interleaved` and stream
definitions, okl at its defaults, seed 0); the best River model is riverbest.py's stored reference.
Variants:
  default       OKLRiverClassifier() / OKLRiverRegressor() as a user gets them;
  declared      the same with categorical=[the stream's code keys] (one-hot, one column per level);
  ints-both     a rule applied in front of the adapter: every Python int value of a key with at
                most 10 levels so far also enters one-hot (the number kept);
  ints-onehot   the same rule, the number dropped (one-hot only).
"""
import argparse

from _riverbest import load_riverbest

ap = argparse.ArgumentParser()
ap.add_argument("--riverbest", default="../shared/checks/riverbest.py")
args = ap.parse_args()
rb = load_riverbest(args.riverbest)

import warnings  # noqa: E402

from river.datasets import synth  # noqa: E402

from okl.river import OKLRiverClassifier, OKLRiverRegressor  # noqa: E402

warnings.simplefilter("ignore", RuntimeWarning)  # hashed-column collisions of late levels (counted)
CAP = 10


class IntCodes:
    """The measured rule: an int value of a key with at most CAP levels seen so far is a code."""

    def __init__(self, keep_number):
        self.keep, self.levels = keep_number, {}

    def __call__(self, x):
        out = {}
        for k, v in x.items():
            if type(v) is int:
                seen = self.levels.setdefault(k, set())
                if v in seen or len(seen) < CAP:
                    seen.add(v)
                    out[(k, v)] = 1.0
                    if not self.keep:
                        continue
            out[k] = v
        return out


CODES = {"RandomTree": [f"x_cat_{i}" for i in range(5)], "Agrawal": ["elevel", "car", "zipcode"],
         "STAGGER": ["size", "color", "shape"], "ChickWeights": ["chick", "diet"], "Planes2D": None,
         "Phishing": None, "LED": None, "Mv": None}
CONFIGS = [("clf", "RandomTree", 1, 10_000), ("clf", "RandomTree", 2, 20_000), ("clf", "Agrawal", 1, 10_000),
           ("clf", "Agrawal", 2, 20_000), ("clf", "STAGGER", 1, 10_000), ("clf", "Phishing", 1, 10_000),
           ("clf", "LED", 1, 10_000), ("reg", "Planes2D", 1, 5_000), ("reg", "ChickWeights", 1, 20_000),
           ("reg", "Mv", 1, 5_000)]
ref = rb.load_ref()
print("| stream | seed / events | code keys declared | default | declared | ints-both | ints-onehot | best River model |")
print("|---|---|---|---|---|---|---|---|")
for task, stream, seed, n in CONFIGS:
    cls = OKLRiverClassifier if task == "clf" else OKLRiverRegressor
    key = rb.KEY[task]
    fmt = (lambda v: f"{100 * v:.2f}") if task == "clf" else (lambda v: f"{v:.4g}")
    cells = {}
    for variant in ("default", "declared", "ints-both", "ints-onehot"):
        if variant == "declared" and CODES[stream] is None:
            cells[variant] = "-"
            continue
        model = cls(seed=0, categorical=CODES[stream] if variant == "declared" else None)
        if stream == "Mv":  # the raw stream: three string features (riverbest one-hots them itself)
            events = synth.Mv(seed=seed).take(n)
        else:
            events = rb.make_stream(task, stream, seed, n)
        if variant.startswith("ints"):
            enc = IntCodes(keep_number=variant == "ints-both")
            events = ((enc(x), y) for x, y in events)
        cells[variant] = fmt(rb.interleaved(events, {"m": model}, rb.METRICS[task])["m"][key])
    best = ref["configs"][rb.config_key(task, stream, seed, n)]["best"]
    codes = ", ".join(CODES[stream]) if CODES[stream] else "(none)"
    length = "whole" if stream in rb.BUNDLED else f"{n:,}"
    print(f"| {stream} | s{seed} / {length} | {codes} | {cells['default']} | {cells['declared']} | {cells['ints-both']} "
          f"| {cells['ints-onehot']} | {best['name']} {fmt(best['value'])} |", flush=True)
