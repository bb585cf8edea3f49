# Measurement behind docs/results/pros-n-kons.md: the ONS step in B-KONS's final 100-point space.
# Run from the project root: PYTHONPATH=src OKL_DATA=../shared/datasets python docs/results/scripts/pnk_curvature_probe.py
# As pnk_fixed_space.py (B-KONS, alpha = gamma = 0.01, permutation 0, the final dictionary's embedding,
# ONS rounds without any dictionary change), with the curvature sigma_t of A += (sigma_t / 2) g g^T
# varied around the learner's 1/(8 C^2) = 0.125 (hinge; the FORKS code's constant).
import numpy as np
from okl.data import load_dataset, permutation
from okl.kernels import RBF
from okl.runtime.base import make
from okl.learners._kons_steps import kons_rounds

for name in ("codrna", "ijcnn1"):
    X, y = load_dataset(name)
    order = permutation(len(y), 0)
    X, y = np.asarray(X, float)[order], np.asarray(y, float)[order]
    m = make("b-kons", budget=100, alpha=0.01, gamma=0.01, eps=0.5, beta=1.0, C=1.0, loss="hinge",
             kernel=RBF(sigma=8.0), center_targets=False, reset="zero", scale=None, random_state=0)
    m.run(X, y)
    E = np.ascontiguousarray(m.embed(X))
    j = E.shape[1]
    cells = []
    for curv in (1.0, 0.125, 0.0125, 0.00125, 0.000125):
        v, w, out = np.zeros(j), np.zeros(j), np.empty(len(y))
        kons_rounds(E, y, m.loss_.kind, m.C, 0.5 * curv, v, w, np.eye(j) / m.alpha_, np.zeros((0, 0)), False,
                    False, m.reset_round_learns, m.gradient_step == "updated", out, np.empty(j), False)
        cells.append(f"{100 * float(np.mean(np.where(out >= 0, 1.0, -1.0) != y)):.2f}")
    print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
