"""The harness of the feature-evolvable learners: tuning, the paired runs over OPFES streams, the
table and the figure behind ``okl evolve`` (:mod:`okl.cli.evolve`) and ``okl reproduce opfes-*``.

``okl evolve --dataset pol --learners opfes,rff-fesl --runs 50`` builds, for each run r, the OPFES
stream of seed r (random half/half feature split and random order, :func:`make_evolvable_stream`),
runs every learner on it and prints the cumulative error rate over the current stage (mean +/- std
over runs), and plots CER against the number of current-stage instances (OPFES Fig. 4) to a PNG.
Progress goes to stderr.

Hyperparameters. The paper chose widths in 2^[-6:6], steps c in 10^[-4:2] and lambda in
10^[-10:1] per method and dataset without saying on what data. Here, unless ``--sigma`` and
``--step-size`` are given, :func:`tune_hyperparameters` picks them once per dataset on held-out
data: the first <= 5000 previous-stage rounds (old features only) of two tuning streams (seeds
10000 and 10001, never evaluation runs), by the mistake rate of OGD on d1 random Fourier
features over sigma in 2^[-3:2] x c in {1, 3, 10, 30, 100} (shared by OPFES, rff-*, align-FESL
and ker-*, whose kernel is the one the features approximate), and of linear OGD with intercept
over c in {0.01, ..., 10} (lin-*); lambda = 1e-4 for all.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from okl.evolvable.base import EvolvableResult, evolvable_class, evolvable_learners, make_evolvable
from okl.evolvable.opfes import draw_fourier, fourier_map, ogd_hinge_rounds
from okl.evolvable.stream import make_evolvable_stream

#: the order of OPFES Table 2
TABLE2_LEARNERS = ("opfes", "align-fesl", "rff-fesl", "rff-rogd", "ker-fesl", "ker-rogd", "lin-fesl", "lin-rogd",
                   "ocds")

TUNING_SEEDS = (10_000, 10_001)
SIGMA_GRID = tuple(float(s) for s in 2.0 ** np.arange(-3, 3))
STEP_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
LINEAR_STEP_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
DEFAULT_REG = 1e-4
#: the paper's grids (OPFES Sec. 5): widths 2^[-6:6], steps c in 10^[-4:2]
PAPER_SIGMA_GRID = tuple(float(s) for s in 2.0 ** np.arange(-6, 7))
PAPER_STEP_GRID = tuple(float(c) for c in 10.0 ** np.arange(-4, 3))


def _ogd_error(Z: np.ndarray, y: np.ndarray, step: float, reg: float) -> float:
    w = np.zeros(Z.shape[1])
    out = np.empty(y.shape[0])
    ogd_hinge_rounds(np.ascontiguousarray(Z), y, w, float(step), float(reg), np.zeros(1, dtype=np.int64), out)
    return float(np.mean(np.where(out >= 0.0, 1.0, -1.0) != y))


def tune_hyperparameters(X, y, *, n_features: int = 1000, seeds=TUNING_SEEDS, max_rows: int = 5000,
                         sigma_grid=SIGMA_GRID, step_grid=STEP_GRID, linear_step_grid=LINEAR_STEP_GRID,
                         reg: float = DEFAULT_REG) -> dict:
    """Per-dataset hyperparameters from the previous stage of held-out tuning streams (module docstring).

    Returns {"sigma", "step_size", "linear_step_size", "reg", "scores"}.
    """
    rff_scores: dict[tuple[float, float], list[float]] = {}
    lin_scores: dict[float, list[float]] = {}
    for seed in seeds:
        stream = make_evolvable_stream(X, y, seed=seed)
        X1, y1 = stream.previous()
        X1, y1 = X1[:max_rows], y1[:max_rows]
        if X1.shape[0] == 0:
            continue
        rng = np.random.default_rng(seed)
        for sigma in sigma_grid:
            U, b = draw_fourier(rng, n_features, X1.shape[1], sigma)
            Z = fourier_map(X1, U, b) / np.sqrt(n_features)
            for c in step_grid:
                rff_scores.setdefault((sigma, c), []).append(_ogd_error(Z, y1, c, reg))
        Zl = np.hstack([X1, np.ones((X1.shape[0], 1))])
        for c in linear_step_grid:
            lin_scores.setdefault(c, []).append(_ogd_error(Zl, y1, c, reg))
    if not rff_scores:
        return {"sigma": 1.0, "step_size": 1.0, "linear_step_size": 1.0, "reg": reg, "scores": {}}
    sigma, step = min(rff_scores, key=lambda k: (np.mean(rff_scores[k]), k[1], -k[0]))
    lin = min(lin_scores, key=lambda k: (np.mean(lin_scores[k]), k))
    return {"sigma": sigma, "step_size": step, "linear_step_size": lin, "reg": reg,
            "scores": {"rff": float(np.mean(rff_scores[(sigma, step)])), "linear": float(np.mean(lin_scores[lin]))}}


def learner_params(name: str, tuned: dict, overrides: dict | None = None, horizon: int | None = None) -> dict:
    """Hyperparameters for learner ``name`` from the tuned values (only those it accepts)."""
    accepted = inspect.signature(evolvable_class(name).__init__).parameters
    params = {"reg": tuned["reg"], "horizon": horizon}
    if name.startswith("lin-") or getattr(evolvable_class(name), "linear", False):
        params["step_size"] = tuned["linear_step_size"]
    else:
        params["step_size"] = tuned["step_size"]
        params["sigma"] = tuned["sigma"]
    params.update(overrides or {})
    return {k: v for k, v in params.items() if k in accepted and v is not None}


@dataclass
class EvolveRun:
    """CER of each learner on each run (and the mean current-stage curves)."""

    dataset: str
    learners: list[str]
    seeds: list[int]
    cer: dict[str, list[float]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    tuned: dict = field(default_factory=dict)
    stages: tuple[int, int, int] = (0, 0, 0)

    def mean_std(self, learner: str) -> tuple[float, float]:
        v = np.asarray(self.cer[learner])
        return float(v.mean()), float(v.std())


def evaluate(X, y, learners, *, runs: int, dataset: str = "", tuned: dict | None = None,
             overrides: dict | None = None, per_learner: dict | None = None, seeds=None,
             evolving_length: int | None = None, progress: bool = False, n_features: int | None = None,
             keep_curves: bool = True, new_columns=None) -> EvolveRun:
    """Run every learner on the OPFES streams of seeds 0..runs-1 (or ``seeds``), paired by seed.

    ``overrides`` apply to every learner (where accepted), ``per_learner[name]`` to one; ``name``
    may be a registered learner or "label=registered-name" (for ablations: the label names the
    column, ``per_learner[label]`` holds its switches). ``new_columns``: a fixed feature split
    (:func:`make_evolvable_stream`); None draws one per seed (the paper's protocol as printed).
    """
    learners = list(learners)
    specs = []
    for entry in learners:
        label, _, base = entry.partition("=")
        base = base or label
        if base not in evolvable_learners():
            raise ValueError(f"unknown evolvable learner {base!r}; registered: {', '.join(evolvable_learners())}")
        specs.append((label, base))
    if tuned is None:
        tuned = tune_hyperparameters(X, y, n_features=n_features or 1000)
    seeds = list(range(runs)) if seeds is None else list(seeds)
    out = EvolveRun(dataset, [s[0] for s in specs], seeds, tuned=tuned)
    sums: dict[str, np.ndarray] = {}
    for i, seed in enumerate(seeds):
        stream = make_evolvable_stream(X, y, seed=seed, evolving_length=evolving_length, new_columns=new_columns)
        out.stages = (stream.T1, stream.Te, stream.T2)
        for label, base in specs:
            extra = dict(overrides or {})
            extra.update((per_learner or {}).get(label, {}))
            if n_features is not None:
                extra.setdefault("n_old_features", n_features)
                extra.setdefault("n_new_features", n_features)
            params = learner_params(base, tuned, extra, horizon=stream.n_rounds)
            learner = make_evolvable(base, random_state=seed, **params)
            result: EvolvableResult = learner.run(stream)
            out.cer.setdefault(label, []).append(result.current_error_rate)
            out.seconds.setdefault(label, []).append(result.seconds)
            if keep_curves and stream.T2:
                curve = result.current_error_curve()
                sums[label] = sums.get(label, 0.0) + curve
            if progress:
                print(f"[{dataset}] run {i + 1}/{len(seeds)} seed {seed} {label}: CER {result.current_error_rate:.4f} "
                      f"({result.seconds:.1f}s)", file=sys.stderr, flush=True)
    out.curves = {k: v / len(seeds) for k, v in sums.items()}
    return out


def plot_curves(runs_by_dataset: dict[str, EvolveRun], path: Path, title: str = "") -> Path:
    """CER vs current-stage instances (OPFES Fig. 4), one panel per dataset."""
    from okl.plotting import pyplot

    plt = pyplot()

    n = len(runs_by_dataset)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax, (name, run) in zip(axes.flat, runs_by_dataset.items()):
        for label, curve in run.curves.items():
            ax.plot(np.arange(1, curve.shape[0] + 1), curve, label=label, lw=1.6 if label == "opfes" else 1.0)
        ax.set_title(f"{name} ({len(run.seeds)} runs)")
        ax.set_xlabel("instances of the current stage")
        ax.set_ylabel("CER")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def format_table(run: EvolveRun) -> str:
    lines = [f"dataset {run.dataset}: T1={run.stages[0]} Te={run.stages[1]} T2={run.stages[2]}, "
             f"{len(run.seeds)} runs (seeds {run.seeds[0]}..{run.seeds[-1]}); sigma={run.tuned.get('sigma')}, "
             f"c={run.tuned.get('step_size')}, linear c={run.tuned.get('linear_step_size')}, "
             f"lambda={run.tuned.get('reg')}",
             f"{'learner':<14} {'CER (mean ± std)':>20} {'time/run (s)':>13}"]
    for label in run.learners:
        m, s = run.mean_std(label)
        lines.append(f"{label:<14} {m:>11.4f} ± {s:.4f} {np.mean(run.seconds[label]):>13.2f}")
    return "\n".join(lines)


__all__ = ["tune_hyperparameters", "evaluate", "EvolveRun", "plot_curves", "format_table", "learner_params",
           "TABLE2_LEARNERS", "DEFAULT_REG", "PAPER_SIGMA_GRID", "PAPER_STEP_GRID"]
