"""Speed of okl's learners against the loop a Python user would otherwise write.

Peer: scikit-learn ``RBFSampler`` (random Fourier features) or ``Nystroem`` (fitted on the first B
examples) feeding ``SGDClassifier.partial_fit`` one example at a time, test-then-train (the
decision value is taken before the example is learned). Everything runs in one process on the same
rows of codrna (permutation 0), so the printed ratios compare like with like.

    python benchmarks/speed.py --data-dir ../shared/datasets [--rows 50000] [--learners fogd,nogd]

Printed per learner: mistake rate over every round, rounds/s, and the ratio of rounds/s to the
scikit-learn loop with the matching feature map (random features for FOGD, Nystroem otherwise).
The first call of each learner compiles its Numba loops; that warm-up run is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import okl
from okl.data import permutation
from okl.eval import learner_params

# learner -> (budget, peer feature map); budgets as in the issues' speed targets
LEARNERS = {
    "fogd": (100, "rff"), "nogd": (100, "nystroem"), "skegd": (200, "nystroem"), "forks": (200, "nystroem"),
    "rbp": (200, "nystroem"), "forgetron": (200, "nystroem"), "projectron": (200, "nystroem"),
    "projectron++": (200, "nystroem"), "bpa-s": (200, "nystroem"), "bogd": (200, "nystroem"),
    "pros-n-kons": (100, "nystroem"), "b-kons": (100, "nystroem"), "linear": (100, "nystroem"),
}


def sklearn_loop(X, y, kind: str, budget: int, sigma: float, seed: int = 0, max_rows: int | None = None):
    """Test-then-train with a scikit-learn feature map and SGDClassifier.partial_fit per example."""
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.linear_model import SGDClassifier

    gamma = 1.0 / (2.0 * sigma**2)
    if kind == "rff":
        fmap = RBFSampler(gamma=gamma, n_components=8 * budget, random_state=seed).fit(X[:1])
    else:
        fmap = Nystroem(gamma=gamma, n_components=budget, random_state=seed).fit(X[:budget])
    clf = SGDClassifier(loss="hinge", learning_rate="constant", eta0=0.2, alpha=1e-6, random_state=seed)
    n = len(y) if max_rows is None else min(len(y), max_rows)
    mistakes = 0
    fitted = False
    t0 = time.perf_counter()
    for t in range(n):
        z = fmap.transform(X[t : t + 1])
        f = clf.decision_function(z)[0] if fitted else 0.0
        mistakes += (1.0 if f >= 0 else -1.0) != y[t]
        clf.partial_fit(z, y[t : t + 1], classes=np.array([-1.0, 1.0]))
        fitted = True
    seconds = time.perf_counter() - t0
    return 100.0 * mistakes / n, n / seconds


def okl_run(name, X, y, budget, sigma, seed=0):
    params = learner_params(name, len(y), seed, budget, okl.RBF(sigma=sigma), "hinge")
    okl.make(name, **params).run(X[:500], y[:500])  # compile (cached afterwards)
    trace = okl.make(name, **params).run(X, y)
    return trace.mistake_rate, len(y) / trace.seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir")
    ap.add_argument("--dataset", default="codrna")
    ap.add_argument("--rows", type=int, default=None, help="rows of permutation 0 for okl (default all)")
    ap.add_argument("--peer-rows", type=int, default=20000,
                    help="rows for the scikit-learn loops (they run ~1,000 rounds/s; rate is per round)")
    ap.add_argument("--learners", default=",".join(n for n in LEARNERS if n in okl.learners()))
    ap.add_argument("--sigma", type=float, default=None)
    args = ap.parse_args(argv)

    X, y = okl.load_dataset(args.dataset, args.data_dir)
    p = permutation(len(y), 0)
    if args.rows:
        p = p[: args.rows]
    X, y = X[p], y[p]
    sigma = args.sigma or okl.data.dataset_info(args.dataset).sigma
    print(f"{args.dataset}: {len(y)} rounds (permutation 0), sigma = {sigma:g}; "
          f"scikit-learn loops on the first {min(args.peer_rows, len(y))} rounds")
    peers = {}
    rows = []
    for name in args.learners.split(","):
        budget, kind = LEARNERS.get(name, (200, "nystroem"))
        key = (kind, budget)
        if key not in peers:
            peers[key] = sklearn_loop(X, y, kind, budget, sigma, max_rows=args.peer_rows)
            pm, pr = peers[key]
            print(f"  sklearn {kind:<9} B={budget:<4} mistake {pm:6.2f} %  {pr:10.0f} rounds/s", flush=True)
        mistake, rate = okl_run(name, X, y, budget, sigma)
        pm, pr = peers[key]
        rows.append((name, budget, mistake, rate, rate / pr, kind, pm))
        print(f"  okl {name:<13} B={budget:<4} mistake {mistake:6.2f} %  {rate:10.0f} rounds/s  "
              f"{rate / pr:7.1f}x sklearn-{kind} (mistake {pm:.2f} %)", flush=True)
    return rows


if __name__ == "__main__":
    main()
