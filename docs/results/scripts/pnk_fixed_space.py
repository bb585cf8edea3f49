# Measurement behind docs/results/pros-n-kons.md ("the same ONS without dictionary changes").
# Run from the project root: PYTHONPATH=src OKL_DATA=../shared/datasets python docs/results/scripts/pnk_fixed_space.py
# PNK Table 2's KONS cells ([0, 1] features, sigma = 8, the paper's hyperparameters, zero reset),
# permutation 0. Run the learner over the whole file; take its final dictionary's embedding E
# (learner.embed); then run the learner's own ONS rounds (okl.learners._kons_steps.kons_rounds: same loss,
# C = 1, curvature, projection) on E from w = 0, A = alpha I, with no dictionary change at all; and fit
# a batch linear SVM on E (hinge, no intercept, C in {1, 100}, the lower training error kept).
import time
import numpy as np
from sklearn.svm import LinearSVC
from okl.data import load_dataset, permutation
from okl.kernels import RBF
from okl.runtime.base import make
from okl.learners._kons_steps import kons_rounds

CASES = (("codrna", "b-kons", 0.01), ("ijcnn1", "b-kons", 0.01), ("codrna", "pros-n-kons", 1.0),
         ("codrna", "pros-n-kons", 0.01), ("ijcnn1", "pros-n-kons", 0.01))
data = {}
for name, learner, alpha in CASES:
    if name not in data:
        X, y = load_dataset(name)
        order = permutation(len(y), 0)
        data[name] = (np.asarray(X, float)[order], np.asarray(y, float)[order])
    X, y = data[name]
    t0 = time.time()
    extra = {"budget": 100} if learner == "b-kons" else {}
    m = make(learner, alpha=alpha, gamma=alpha, eps=0.5, beta=1.0, C=1.0, loss="hinge", kernel=RBF(sigma=8.0),
             center_targets=False, reset="zero", scale=None, random_state=0, **extra)
    tr = m.run(X, y)
    online = 100 * float(np.mean(np.where(np.asarray(tr.decisions) >= 0, 1.0, -1.0) != y))
    E = np.ascontiguousarray(m.embed(X))
    j = E.shape[1]
    v, w, out = np.zeros(j), np.zeros(j), np.empty(len(y))
    Ainv = np.eye(j) / m.alpha_
    kons_rounds(E, y, m.loss_.kind, m.C, 0.5 * m.curvature_, v, w, Ainv, np.zeros((0, 0)), False, False,
                m.reset_round_learns, m.gradient_step == "updated", out, np.empty(j), False)
    fixed = 100 * float(np.mean(np.where(out >= 0, 1.0, -1.0) != y))
    batch = min(100 * float(np.mean(LinearSVC(C=c, fit_intercept=False, dual=False, max_iter=5000).fit(E, y)
                                    .predict(E) != y)) for c in (1.0, 100.0))
    print(f"| {name} | {learner} | {alpha:g} | {m.dictionary_size_} | {online:.2f} | {fixed:.2f} | {batch:.2f} | "
          f"{time.time() - t0:.0f} s |", flush=True)
