"""``auto``'s pool: the default members (:func:`default_pool`; why each family is in it: the module
docstring of :mod:`okl.ensemble.auto` and docs/results/auto-pool.md), the check of a given
``members`` list, the one draw of directions its FOGD members share, and the members' labels."""

from __future__ import annotations

import math
from typing import Any

from okl.runtime.base import Learner
from okl.learners.window import WIDTH_FACTOR as WINDOW_WIDTH

#: width multipliers of the default pool (times the centre width sigma_0)
WIDTHS = (0.5, 1.0, 2.0)
#: the L1 family's budget in auto's budgets B: D = 4 x 3B = 12B directions (auto's docstring: the
#: D at which River's RandomTree closes, paid for by cheaper rounds elsewhere)
L1_BUDGET_SCALE = 3


#: sparse rows: the width window came as a sparse matrix with fewer than this share of its columns
#: non-zero on average (above it a CSR row takes more memory than the dense row: an index and a
#: value a non-zero against one value a column; every LIBSVM file of ../shared/datasets but one-hot
#: encodings is above it: cod-rna 1.0, german 0.96, ijcnn1 0.59; one-hot adult 0.11, splice 0.25)
SPARSE_DENSITY = 0.5
#: the NAG member's rate: Vowpal Wabbit's default learning rate (``-l 0.5``)
NAG_ETA = 0.5


def default_pool(task: str, sparse: bool = False) -> list[tuple[str, float | None, dict[str, Any]]]:
    """The default members for ``task`` ("classification" or "regression") as
    (registry name, width multiplier or None, hyperparameters); see the module docstring.
    ``sparse``: the pool for sparse rows (:data:`SPARSE_DENSITY`; :func:`sparse_pool`)."""
    if sparse:
        return sparse_pool(task)
    cls = task == "classification"
    pool: list[tuple[str, float | None, dict[str, Any]]] = []
    for w in WIDTHS:
        for step in ((1.0, 3.0) if cls else (0.2, 0.5)):
            pool.append(("nogd", w, {"lr": step} if cls else {"eta": step}))
    for w in WIDTHS:
        pool.append(("forks", w, {}))
    for w in WIDTHS:
        pool.append(("fogd", w, {"eta": 1.0 if cls else 0.5}))
    for w in WIDTHS:  # the L1 (Laplacian) geometry: width from the window's mean L1 distance
        pool.append(("fogd", w, {"eta": 1.0 if cls else 0.5, "kernel": "laplacian",
                                 "budget_scale": L1_BUDGET_SCALE}))
    for eta in ((0.2, 1.0) if cls else (0.02, 0.2)):
        pool.append(("linear", None, {"eta": eta}))
    pool.append(("window", WINDOW_WIDTH, {}))  # the last rows, kernel-weighted: what neighbours learn
    # the affine family: the symlog map's curvature undone (a linear concept stays linear), and in
    # regression the pairwise products (what a degree-2 polynomial spans). Appended: a model file
    # names its members by their index in this list
    pool.append(("linear", None, {"eta": 0.05, "loss": "logistic", "scale": "affine"} if cls else
                 {"eta": 0.2, "degree": 2, "scale": "affine"}))
    return pool


def sparse_pool(task: str) -> list[tuple[str, float | None, dict[str, Any]]]:
    """The default members on sparse rows (one-hot codes, hashed text): the Nystrom family (NOGD's
    3 widths x 2 steps), the linear family's two OGD steps, the window, and a linear member with
    NAG, the normalised adaptive step of Vowpal Wabbit (``step="nag"``, eta :data:`NAG_ETA`;
    logistic loss in classification, VW's). FORKS, FOGD (Gaussian and L1) and the affine member
    are left out (the default pool filtered, in its order, then NAG). Why (docs/results/sparse.md,
    "auto's pool on sparse rows"): on sparse rows a
    linear model with per-feature adaptive steps is the learner to beat (rare features need their
    own, larger steps), and with it in the pool the left-out families never carried the mixture
    on the sparse streams measured, while they cost most of a round (FORKS's O(k^2) ONS step, the
    random features' D sines and cosines): on one-hot adult 15.33 % without them, 15.35 % with
    them, at 75,700 against 19,600 rounds/s; they were 36 of the 44 us of a default pool's round."""
    kept = [m for m in default_pool(task) if m[0] in ("nogd", "window") or (m[0] == "linear" and "scale" not in m[2])]
    nag = {"eta": NAG_ETA, "step": "nag", **({"loss": "logistic"} if task == "classification" else {})}
    return kept + [("linear", None, nag)]


def _check_members(members):
    if members is None:
        return None
    if isinstance(members, (str, bytes)) or not hasattr(members, "__iter__"):
        raise ValueError(f"members must be None or a list of (name, width, params), got {members!r}")
    from okl.runtime.base import learners

    out = []
    for entry in members:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise ValueError(f"members: each entry must be (name, width multiplier or None, params), got {entry!r}")
        name, width, params = entry
        if not isinstance(name, str) or name not in learners(kind="streaming") or name == "auto":
            raise ValueError(f"members: unknown member learner {name!r}")
        if width is not None:
            if isinstance(width, bool) or not isinstance(width, (int, float)) or not (
                    math.isfinite(width) and width > 0):
                raise ValueError(f"members: the width multiplier must be a positive number or None, got {width!r}")
            width = float(width)
        if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
            raise ValueError(f"members: params must be a dict of hyperparameters, got {params!r}")
        scale = params.get("budget_scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"members: budget_scale must be a positive number (the member's budget in "
                             f"units of auto's), got {scale!r}")
        out.append([name, width, dict(params)])
    if not out:
        raise ValueError("members must name at least one member")
    return out


def _share_directions(pool: list[Learner]) -> None:
    """FOGD members whose kernels differ only in width take one draw of directions: the widest
    member's U, scaled by sigma_widest / sigma (exact for the pool's power-of-2 widths, so the
    engine computes the narrower members' features by the double angle; see the module
    docstring); generated directions: the widest member's seed."""
    groups: dict[tuple, list[Learner]] = {}
    for m in pool:
        sigma = getattr(getattr(m, "kernel_", None), "sigma", None)
        if m.name == "fogd" and sigma is not None:
            shape = m.U_.shape if m.U_ is not None else ("generated", m.n_components_)
            groups.setdefault((type(m.kernel_), shape), []).append(m)
    for members in groups.values():
        ref = max(members, key=lambda m: m.kernel_.sigma)
        for m in members:
            if m is not ref:
                if m.U_ is None:  # (generated: the widest member's seed; each scales by its own 1 / sigma)
                    m.direction_seed_ = ref.direction_seed_
                else:
                    m.U_ = ref.U_ * (ref.kernel_.sigma / m.kernel_.sigma)


def _label(name: str, width: float | None, params: dict[str, Any]) -> str:
    parts = [] if width is None else [f"sigma x{width:g}"]
    parts += [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()]
    return f"{name}({', '.join(parts)})"


#: the series pool's width multipliers (times the embedding's scale, std(series) sqrt(order)) and
#: noise-to-signal ratios: KAFBOX's grid is 4 widths x 2 noises around 4.2 std; its best cell on
#: Lorenz, Mackey-Glass 30 and Santa Fe sits at 2 std (docs/results/timeseries.md)
SERIES_WIDTHS = (0.5, 1.0, 2.0)
SERIES_NOISES = (1e-6, 1e-4, 1e-2)
#: the affine (linear autoregression) members' noise-to-signal ratios
AFFINE_NOISES = (1e-2, 1.0)


def series_pool() -> list[tuple[str, float | None, dict[str, Any]]]:
    """The members :class:`okl.timeseries.Forecaster` weighs at each horizon by default, as
    (registry name, width multiplier, hyperparameters): KRLS-T (the Gaussian-process filter that
    KAFBOX's time-series demos use) over :data:`SERIES_WIDTHS` x :data:`SERIES_NOISES`, with no
    forgetting (lambda 1), no input map and no target centring (the embedding's values are the
    series' own: a map or a centring would change the kernel's geometry, measured at 27-43 dB on
    the KAF series), and a linear member (the autoregression, for trends the kernel cannot
    extrapolate). The width multiplier is relative to std(series) sqrt(order), the typical distance
    between two embedded rows. When auto's engine runs KRLS-T these members are the same list."""
    pool: list[tuple[str, float | None, dict[str, Any]]] = []
    for w in SERIES_WIDTHS:
        for sn2 in SERIES_NOISES:
            pool.append(("krls-t", w, {"noise": sn2, "forgetting": 1.0, "center_targets": False, "scale": None}))
    for sn2 in AFFINE_NOISES:  # the affine kernel: KRLS-T is then recursive Bayesian linear regression
        pool.append(("krls-t", 1.0, {"noise": sn2, "forgetting": 1.0, "center_targets": False, "scale": None,
                                     "kernel": "affine"}))
    return pool
