"""How much a random_state's numbers move between BLAS kernels and NumPy dispatch levels: every
stream learner's run() decisions on german and the first 3,000 rows of svmguide1 (library
defaults, seed 0), each in a child process under another OpenBLAS kernel / NumPy's baseline
dispatch, against the same run in the default environment (README, "Same numbers").

    python docs/results/scripts/machine_independence.py
"""
import json
import os
import subprocess
import sys

import numpy as np

CHILD = r"""
import json, sys, numpy as np, okl
out = {}
for ds, n in (("german", None), ("svmguide1", 3000)):
    X, y = okl.load_dataset(ds, data_dir=sys.argv[1])
    X, y = X[:n], y[:n]
    for name in okl.learners(kind="streaming"):
        r = okl.make(name, random_state=0).run(X, y)
        out[f"{ds}/{name}"] = [float(v) for v in np.ravel(r.decisions)]
json.dump(out, sys.stdout)
"""
ENVS = {"default": {}, "Prescott": {"OPENBLAS_CORETYPE": "Prescott"},
        "Sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge"},
        "numpy-baseline": {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}}


def run(env):
    r = subprocess.run([sys.executable, "-c", CHILD, os.environ.get("OKL_DATA", "../shared/datasets")],
                       env={**os.environ, **env}, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout)


base = run({})
print("| learner / set | " + " | ".join(e for e in ENVS if e != "default") + " |")
print("|---|" + "---|" * (len(ENVS) - 1))
others = {e: run(v) for e, v in ENVS.items() if e != "default"}
for key, ref in base.items():
    ref = np.array(ref)
    cells = []
    for e, res in others.items():
        got = np.array(res[key])
        diff = np.max(np.abs(got - ref)) if len(got) else 0.0
        signs = int(np.sum(np.sign(got) != np.sign(ref)))
        cells.append("same bits" if diff == 0 else f"{diff:.1e} ({signs} signs)")
    print(f"| {key} | " + " | ".join(cells) + " |")
