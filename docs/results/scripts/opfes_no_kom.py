# Measurement behind docs/results/opfes-ablation-published.md ("why no KOM beats OPFES on the fixed split").
# Run from the project root: PYTHONPATH=src OKL_DATA=../shared/datasets python docs/results/scripts/opfes_no_kom.py [RUNS]
# The fixed split of `okl reproduce opfes-ablation --protocol published` (pol, new space = columns 0..23),
# the same tuned hyperparameters (okl.evolvable.harness.tune_hyperparameters, seeds 10,000 and 10,001),
# run seeds 0..RUNS-1 (default 10), d1 = d2 = 1000, T_M = 1000 as in the table.
import sys
import numpy as np
from scipy.stats import ttest_rel
from okl.data import load_dataset
from okl.evolvable import OPFES, make_evolvable_stream
from okl.evolvable.harness import learner_params, tune_hyperparameters
from okl.evolvable.opfes import fourier_map

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
X, y = load_dataset("pol")
X, y = np.asarray(X, float), np.asarray(y, float)
NEW = range(X.shape[1] - X.shape[1] // 2)
tuned = tune_hyperparameters(X, y, n_features=1000, seeds=(10_000, 10_001))
print("tuned", {k: tuned[k] for k in ("sigma", "step_size", "reg")}, flush=True)


class UniformDensity(OPFES):
    """KOM statistics collected, but Algorithm 1 returns the uniform density (the rotation U* is still
    computed from M at that density, so reuse stays on)."""

    def _kom_density(self, problem, te):
        d2 = self.n_new_features
        return np.full(d2, 1.0 / d2), {"uniform": True}


class KeepOnly(OPFES):
    """Algorithm 1 runs for both densities, then one of them is set back to uniform."""

    def __init__(self, *, keep, **kw):
        super().__init__(**kw)
        self.keep = keep

    def _transition(self):
        super()._transition()
        d2 = self.n_new_features
        if self.keep != "p2":
            self.p2_ = np.full(d2, 1.0 / d2)
        if self.keep != "pl":
            self.pl_ = np.full(d2, 1.0 / d2)


VARIANTS = {
    "opfes (KOM p2, pl; reuse)": (OPFES, {}),
    "(iii) no reuse (KOM p2, pl)": (OPFES, {"reuse_model": False}),
    "(i) no KOM (uniform p2, pl; no reuse)": (OPFES, {"use_kom": False}),
    "KOM p2 only (pl uniform; no reuse)": (KeepOnly, {"keep": "p2", "reuse_model": False}),
    "KOM pl only (p2 uniform; no reuse)": (KeepOnly, {"keep": "pl", "reuse_model": False}),
    "uniform p2, pl; reuse (U* at uniform p2)": (UniformDensity, {}),
    "(i) without the K^l model (uniform p2, one model from scratch)": (OPFES, {"use_kom": False,
                                                                           "use_ideal_kernel": False}),
}
cer = {k: [] for k in VARIANTS}
extra = {"previous-stage error of w1 (old space)": [], "reused w2 frozen, current stage": [],
         "entropy of KOM p2 (uniform: ln 1000 = 6.908)": [], "entropy of KOM pl": []}
for seed in range(RUNS):
    s = make_evolvable_stream(X, y, seed=seed, new_columns=NEW)
    for name, (cls, switches) in VARIANTS.items():
        params = learner_params("opfes", tuned, horizon=s.n_rounds)
        m = cls(random_state=seed, **params, **switches)
        r = m.run(s)
        cer[name].append(r.current_error_rate)
        if name.startswith("opfes"):
            extra["previous-stage error of w1 (old space)"].append(r.stage_error_rate("previous"))
            Z = fourier_map(s.X2[s.Te:], m.u2_, m.b2_) * np.sqrt(m.p2_)
            f = Z @ m.w2_initial_
            extra["reused w2 frozen, current stage"].append(float(np.mean(np.where(f >= 0, 1.0, -1.0)
                                                                          != s.y[s.T1 + s.Te:])))
            extra["entropy of KOM p2 (uniform: ln 1000 = 6.908)"].append(m.transition_["p2"]["entropy"])
            extra["entropy of KOM pl"].append(m.transition_["pl"]["entropy"])
    print(seed, {k: round(v[-1], 4) for k, v in cer.items()}, flush=True)

print(f"\npol, fixed split, {RUNS} runs (seeds 0..{RUNS - 1}), CER over the current stage (mean ± std):")
base = np.asarray(cer["(i) no KOM (uniform p2, pl; no reuse)"])
for k, v in cer.items():
    v = np.asarray(v)
    p = ttest_rel(v, base).pvalue if not np.allclose(v, base) else 1.0
    print(f"| {k} | {v.mean():.4f} ± {v.std():.4f} | {v.mean() - base.mean():+.4f} (paired p = {p:.2g}) |")
for k, v in extra.items():
    print(f"| {k} | {np.mean(v):.4f} ± {np.std(v):.4f} |")

# what a batch learner makes of each half (3-fold CV, histogram gradient boosting; generous bound)
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import cross_val_score
old = np.setdiff1d(np.arange(X.shape[1]), np.asarray(list(NEW)))
for tag, cols in (("new half (columns 0..23)", np.asarray(list(NEW))), ("old half (columns 24..47)", old)):
    acc = cross_val_score(HistGradientBoostingClassifier(max_iter=200, random_state=0), X[:, cols], y, cv=3)
    informative = int(np.sum(X[:, cols].std(0) > 0))
    print(f"| batch GBM error, {tag} | {1 - acc.mean():.4f} | non-constant columns {informative} |")
