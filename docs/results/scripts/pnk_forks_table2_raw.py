# Measurement behind docs/results/paper-tables.md (FORKS Table 2's PROS-N-KONS row, published protocol).
# Run from the project root: PYTHONPATH=src OKL_DATA=../shared/datasets python docs/results/scripts/pnk_forks_table2_raw.py
# The row's cells as `okl reproduce forks-table2 --protocol published` runs them (raw files, sigma = 8,
# PROS-N-KONS.paper_params: zero reset; cod-rna training file on its first 10,000 rounds), seeds 0 and 1
# (cod-rna: seed 0),
# against the same learner with one change each: reset="warm" (w kept across a dictionary change), and
# the ONS curvature 0.0125 instead of 0.125 (pros-n-kons.md: the step that sets PNK Table 2's cod-rna cells).
import numpy as np
from okl.data import load_dataset
from okl.eval import evaluate
from okl.runtime.base import learner_class

base = {**learner_class("pros-n-kons").paper_params(100), "loss": "hinge"}
VARIANTS = (("as in the table", {}), ("reset = warm", {"reset": "warm"}), ("curvature 0.0125", {"curvature": 0.0125}),
            ("both", {"reset": "warm", "curvature": 0.0125}))
import sys
ONLY = sys.argv[1:]  # dataset names to run (default: all); cod-rna: seed 0 only and three variants, for time
for name, rows, runs in (("german:raw", None, 2), ("svmguide3:raw", None, 2), ("codrna-train:raw", 10_000, 1)):
    if ONLY and name not in ONLY:
        continue
    X, y = load_dataset(name)
    cells = []
    for label, change in VARIANTS[:3] if runs == 1 else VARIANTS:
        s = evaluate("pros-n-kons", X, y, runs=runs, sigma=8.0, params={**base, **change}, max_rows=rows)
        sv = np.mean([t.diagnostics.get("dictionary_size", np.nan) for t in s.traces])
        cells.append(f"{s.metric.mean():.2f} ({sv:.0f})")
    print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
