# Measurement behind docs/results/pros-n-kons.md ("the best any linear model in PROS-N-KONS's space makes").
# Run from the project root: PYTHONPATH=src OKL_DATA=../shared/datasets python docs/results/scripts/pnk_space_bound.py
# For PNK Table 2's KONS cells (features [0, 1] as the table streams them, sigma = 8, the paper's
# hyperparameters, zero reset), permutation 0: run PROS-N-KONS over the whole file, embed every row in
# its final dictionary's space (learner.embed, the Nystrom map the KONS learners predict with), and fit a
# batch linear SVM there (hinge, all rows, no intercept as the KONS models have none; C in {1, 100}, the
# lower training error kept). The paper's BATCH is "the best batch solution in the final space".
import time
import numpy as np
from sklearn.svm import LinearSVC
from okl.data import load_dataset, permutation
from okl.kernels import RBF
from okl.runtime.base import make

for name in ("ijcnn1", "codrna"):
    X, y = load_dataset(name)
    X, y = np.asarray(X, float), np.asarray(y, float)
    order = permutation(len(y), 0)
    X, y = X[order], y[order]
    for alpha in (1.0, 0.01):
        t0 = time.time()
        m = make("pros-n-kons", alpha=alpha, gamma=alpha, eps=0.5, beta=1.0, C=1.0, loss="hinge",
                 kernel=RBF(sigma=8.0), center_targets=False, reset="zero", scale=None, random_state=0)
        tr = m.run(X, y)
        online = 100 * float(np.mean(np.where(tr.decisions >= 0, 1.0, -1.0) != y)) if hasattr(tr, "decisions") \
            else float("nan")
        E = m.embed(X)
        best = None
        for C in (1.0, 100.0):
            svm = LinearSVC(C=C, fit_intercept=False, dual=False, max_iter=5000).fit(E, y)
            err = 100 * float(np.mean(svm.predict(E) != y))
            best = err if best is None else min(best, err)
        print(f"| {name} | {alpha:g} | {m.dictionary_size_} | {E.shape[1]} | {online:.2f} | {best:.2f} | "
              f"{time.time() - t0:.0f} s |", flush=True)
