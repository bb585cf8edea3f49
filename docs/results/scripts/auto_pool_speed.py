# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
"""What auto's speed costs in quality (issue 24: auto run() at 150,000 rounds/s): auto's default
pool against smaller ones, each at library defaults otherwise (``okl.make("auto", members=...,
random_state=0)``, ``loss="squared"`` on regression sets): rounds/s on all of codrna (permutation 0,
best of 2) and, on every staged set of docs/results/defaults.md, the mistake rate % (classification)
or the mean squared loss (regression) over permutation 0 (the first 50,000 rows of the long sets),
one run each. Pools: the default (14 members); without FORKS; NOGD with one step a width; the
default members at budget 50 (maps of rank 50); one width (sigma_0) per family."""
import time

import numpy as np
import okl
from okl.data import dataset_info, permutation
from okl.ensemble.auto import default_pool

SETS = ("german", "svmguide3", "spambase", "codrna", "ijcnn1", "svmguide1", "pol", "house16h", "elevators",
        "ailerons", "adult", "splice", "cpusmall", "cadata", "parkinson")


def pools(task):
    base = [list(m) for m in default_pool(task)]
    first_step = base[0][2]
    return {
        "default (14)": (base, 100),
        "no FORKS (11)": ([m for m in base if m[0] != "forks"], 100),
        "NOGD one step (11)": ([m for m in base if m[0] != "nogd" or m[2] == first_step], 100),
        "budget 50 (14)": (base, 50),
        "one width (6)": ([m for m in base if m[1] in (None, 1.0)], 100),
    }


def load(name):
    X, y = okl.load_dataset(name)
    p = permutation(len(y), 0)
    return np.ascontiguousarray(np.asarray(X, float)[p]), np.asarray(y, float)[p]


def cell(name, members, budget):
    X, y = load(name)
    X, y = X[:50_000], y[:50_000]
    task = dataset_info(name).task
    kw = {"loss": "squared"} if task == "regression" else {}
    trace = okl.make("auto", members=members, budget=budget, random_state=0, **kw).run(X, y)
    return f"{trace.mistake_rate:.2f}" if task != "regression" else f"{trace.mean_squared_loss:.4f}"


X, y = load("codrna")
labels = list(pools("classification"))
rates = {}
for label, (members, budget) in pools("classification").items():
    okl.make("auto", members=members, budget=budget, random_state=0).run(X[:3000], y[:3000])  # compile
    best = 0.0
    for _ in range(2):
        m = okl.make("auto", members=members, budget=budget, random_state=0)
        t0 = time.perf_counter()
        m.run(X, y)
        best = max(best, len(y) / (time.perf_counter() - t0))
    rates[label] = best
print("| pool | codrna rounds/s | " + " | ".join(SETS) + " |")
print("|---|---|" + "---|" * len(SETS))
for label in labels:
    cells = [cell(name, *pools(dataset_info(name).task)[label]) for name in SETS]
    print(f"| {label} | {rates[label]:,.0f} | " + " | ".join(cells) + " |", flush=True)
