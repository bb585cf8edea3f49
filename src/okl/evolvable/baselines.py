"""The feature-evolvable baselines of OPFES Table 2 (ALGORITHMS.md 7 "Baselines").

The OPFES paper gives one line per baseline; each class docstring states how that line is read
here. Shared by all of them (so that only the way old and new spaces are related differs from
OPFES):

* regularised hinge loss and OGD with tau_t = c / sqrt(t) (``step_size`` c, ``reg`` lambda), as in
  OPFES (:mod:`okl.evolvable.opfes`); ``clock`` "model" (default: each model counts its own
  rounds; a model that keeps learning in the current stage continues its count) or "global";
* the previous-stage model is frozen during the evolving stage (``evolving_update="freeze"``,
  as OPFES's default; "learn" keeps training it on x1);
* "ROGD" (Hou, Zhang & Zhou 2017, FESL's recovered OGD): on the evolving stage a ridge
  least-squares map Psi from a representation g(x2) of the new features to the old model's
  representation z1(x1) is learned in one pass from C12 = sum z1 g^T and C22 = sum g g^T,
  Psi = C12 (C22 + mu I)^-1 with mu = ``map_ridge`` * tr(C22)/dim(g) [I]; in the current stage
  the old model predicts on, and keeps learning from, the recovered z1^ = Psi g(x2);
* "FESL": the ROGD model and a model trained from scratch on the new space are combined with the
  exponential weights of OPFES Eq. 12 (same ``gamma`` rule, same ``omega_init`` = 1/2; FESL-c's
  weights in Hou et al. 2017 are this rule with a bounded loss).

Per-round costs: lin-* O(D); rff-* and align-FESL O(d D) for the features plus O(d1 d2) in the
current stage for the recovery z1^ = Psi z2 (matrix products per block of rounds); ker-* O(B D)
with B the buffer size.
"""

from __future__ import annotations

import math
import numpy as np
from okl._validation import check_int, check_nonnegative, check_positive
from okl.evolvable.base import register_evolvable
from okl.evolvable.opfes import draw_fourier, fourier_map
from okl.evolvable.baselines_common import _COMMON_DOC, _MappedBaseline  # noqa: F401
from okl.evolvable.kernel_baselines import (KerFESL, KerROGD, _kernel_decision, _kernel_update,  # noqa: F401
                                            kernel_ensemble_rounds, kernel_rounds)


# --------------------------------------------------------------------------------------------
# Sinha & Duchi (2016) kernel alignment weights


def alignment_weights(scores: np.ndarray, rho: float = 1.0, tol: float = 1e-12) -> np.ndarray:
    """Sinha & Duchi (2016) "Learning kernels with random features", Eq. (4) with the chi-square
    divergence: maximise sum_l q_l a_l over the simplex subject to
    D_chi2(q || uniform) = (1/N) sum_l (N q_l)^2 - 1 <= rho.

    The solution is q_l proportional to (a_l - tau)_+ with tau found by bisection so that the
    constraint is tight (or the vertex set when rho allows it).

    >>> q = alignment_weights(np.array([1.0, 2.0, 3.0, 4.0]), rho=0.2)
    >>> bool(abs(q.sum() - 1) < 1e-12), bool(np.all(np.diff(q) > 0))
    (True, True)
    >>> round(float(4 * (q ** 2).sum() - 1), 6)
    0.2
    """
    a = np.asarray(scores, dtype=np.float64)
    N = a.shape[0]
    if a.ndim != 1 or N < 1 or not np.isfinite(a).all():
        raise ValueError("alignment scores must be a finite non-empty vector")
    rho = check_nonnegative("rho", rho)
    if N == 1 or np.ptp(a) == 0 or rho == 0:
        return np.full(N, 1.0 / N)

    def chi2(tau):
        w = np.maximum(a - tau, 0.0)
        q = w / w.sum()
        return N * (q * q).sum() - 1.0, q

    top = np.sort(a)[::-1]
    # the most concentrated solution: all mass on the top entries (tau -> max a)
    lo = a.min() - (a.max() - a.min()) * (1.0 / max(rho, 1e-12) + 1.0) * N
    hi = top[0]
    value, q = chi2(lo)
    if value >= rho:  # even the near-uniform end violates (cannot happen for lo far enough)
        return q
    ties = a >= hi - 1e-15 * max(1.0, abs(hi))
    q_top = ties / ties.sum()
    if N * (q_top ** 2).sum() - 1.0 <= rho:
        return q_top
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        value, q = chi2(mid)
        if value > rho:
            hi = mid
        else:
            lo = mid
        if hi - lo <= tol * max(1.0, abs(hi)):
            break
    return chi2(lo)[1]



# --------------------------------------------------------------------------------------------
# lin-ROGD / lin-FESL


@register_evolvable("lin-rogd")
class LinROGD(_MappedBaseline):
    """lin-ROGD (OPFES Sec. 5: "linear models and l2 distance for feature relationships",
    Hou et al. 2017). Read as: a linear model w1 on x1 trained by OGD; a ridge least-squares linear
    map x2 -> x1 from the evolving stage; in the current stage w1 predicts on and keeps learning
    from x1^ = Psi x2. With ``fit_intercept`` (default [I]: the paper's datasets are imbalanced and
    a linear model without intercept predicts through the origin) a constant feature 1 is
    appended to x1 and x2 (it is mapped to itself).

    Parameters
    ----------
    fit_intercept : bool, default True
    """ + _COMMON_DOC + """
    Per-round cost O(D1 D2) in the current stage (the recovery), O(D) otherwise.
    """

    def __init__(self, *, fit_intercept: bool = True, step_size: float = 1.0, reg: float = 1e-4,
                 gamma: float | None = None, kernel_bound: float = 2.0, horizon: int | None = None,
                 omega_init: float = 0.5, map_ridge: float = 1e-3, evolving_update: str = "freeze",
                 clock: str = "model", random_state: int | None = None):
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {fit_intercept!r}")
        self.fit_intercept = bool(fit_intercept)
        self._common_params(step_size, reg, gamma, kernel_bound, horizon, omega_init, map_ridge,
                            evolving_update, clock, random_state)

    def _old_repr(self, X1):
        if self.fit_intercept:
            return np.hstack([X1, np.ones((X1.shape[0], 1))])
        return np.array(X1, dtype=np.float64, copy=True)

    _map_input = _old_repr
    _new_repr = _old_repr

    def _old_dim(self, dim):
        return dim + int(self.fit_intercept)

    _map_dim = _old_dim
    _new_dim = _old_dim


@register_evolvable("lin-fesl")
class LinFESL(LinROGD):
    """lin-FESL (OPFES Sec. 5: "online ensemble of lin-ROGD and a linear model learned from
    scratch", Hou et al. 2017): lin-ROGD's recovered model and a linear OGD model on x2 started at
    0 in the current stage, combined by Eq. 12's exponential weights."""

    ensemble = True


# --------------------------------------------------------------------------------------------
# rff-ROGD / rff-FESL


class _RandomFeatureParams:
    def _rff_params(self, n_old_features, n_new_features, sigma, new_sigma):
        self.n_old_features = check_int("n_old_features", n_old_features, 1)
        self.n_new_features = check_int("n_new_features", n_new_features, 1)
        self.sigma = check_positive("sigma", sigma)
        self.new_sigma = None if new_sigma is None else check_positive("new_sigma", new_sigma)

    def _draw_old(self, dim):
        self.u1_, self.b1_ = draw_fourier(self._rng, self.n_old_features, dim, self.sigma)

    def _draw_new(self, dim):
        width = self.sigma if self.new_sigma is None else self.new_sigma
        self.u2_, self.b2_ = draw_fourier(self._rng, self.n_new_features, dim, width)

    def _old_repr(self, X1):
        Z = fourier_map(X1, self.u1_, self.b1_)
        Z *= 1.0 / math.sqrt(self.n_old_features)
        return Z

    def _map_input(self, X2):
        Z = fourier_map(X2, self.u2_, self.b2_)
        Z *= 1.0 / math.sqrt(self.n_new_features)
        return Z

    def _old_dim(self, dim):
        return self.n_old_features

    def _map_dim(self, dim):
        return self.n_new_features


@register_evolvable("rff-rogd")
class RffROGD(_RandomFeatureParams, _MappedBaseline):
    """rff-ROGD (OPFES Sec. 5: "random features and l2 distance for feature relationships", Lu et
    al. 2016). Read as: OGD on d1 Gaussian random Fourier features z1 = phi(x1)/sqrt(d1) (as OPFES's
    previous stage); on the evolving stage a ridge least-squares map from the new space's uniform
    random features z2 = phi(x2)/sqrt(d2) to z1 (the l2 distance between the two feature maps,
    OPFES Sec. 3.1); in the current stage w1 predicts on and keeps learning from z1^ = Psi z2.

    Parameters
    ----------
    n_old_features, n_new_features : int, default 1000
    sigma : float, default 1.0           Gaussian width (old space).
    new_sigma : float or None            width of the new-space features (None: sigma).
    """ + _COMMON_DOC + """
    Per-round cost O(d D) for the features and O(d1 d2) for the recovery (block matrix products).
    """

    def __init__(self, *, n_old_features: int = 1000, n_new_features: int = 1000, sigma: float = 1.0,
                 new_sigma: float | None = None, step_size: float = 1.0, reg: float = 1e-4,
                 gamma: float | None = None, kernel_bound: float = 2.0, horizon: int | None = None,
                 omega_init: float = 0.5, map_ridge: float = 1e-3, evolving_update: str = "freeze",
                 clock: str = "model", random_state: int | None = None):
        self._rff_params(n_old_features, n_new_features, sigma, new_sigma)
        self._common_params(step_size, reg, gamma, kernel_bound, horizon, omega_init, map_ridge,
                            evolving_update, clock, random_state)

    def _new_repr(self, X2):
        return self._map_input(X2)

    def _new_dim(self, dim):
        return self.n_new_features


@register_evolvable("rff-fesl")
class RffFESL(RffROGD):
    """rff-FESL (OPFES Sec. 5: "online ensemble of rff-ROGD and random feature models learned from
    scratch", Hou et al. 2021): rff-ROGD's recovered model and an OGD model on the new space's
    random features z2 (the same features the map reads) started at 0, combined by Eq. 12."""

    ensemble = True


# --------------------------------------------------------------------------------------------
# align-FESL


@register_evolvable("align-fesl")
class AlignFESL(RffFESL):
    """align-FESL (OPFES Sec. 5: "random features and kernel alignment for feature and label
    relationships", Sinha & Duchi 2016). Read as rff-FESL whose from-scratch new-space model uses a
    learned kernel: the new space's random features z2 reweighted by q, q chosen on the evolving
    stage by Sinha & Duchi's alignment (``alignment_weights``, chi-square radius ``align_rho``)
    with the target K1/tr(K1) + y y^T/Te (feature and label relationships), whose scores are
    a_l = ||Z1^T Phi2_l||^2 / tr K1 + (y^T Phi2_l)^2 / Te — one pass, from C12 (the map's
    statistics) and the running sums y^T Phi2. The ROGD part is rff-ROGD's.

    Parameters (besides rff-FESL's)
    -------------------------------
    align_rho : float, default 1.0       chi-square radius rho [I].
    """

    def __init__(self, *, n_old_features: int = 1000, n_new_features: int = 1000, sigma: float = 1.0,
                 new_sigma: float | None = None, step_size: float = 1.0, reg: float = 1e-4,
                 gamma: float | None = None, kernel_bound: float = 2.0, horizon: int | None = None,
                 omega_init: float = 0.5, map_ridge: float = 1e-3, evolving_update: str = "freeze",
                 clock: str = "model", align_rho: float = 1.0, random_state: int | None = None):
        super().__init__(n_old_features=n_old_features, n_new_features=n_new_features, sigma=sigma,
                         new_sigma=new_sigma, step_size=step_size, reg=reg, gamma=gamma,
                         kernel_bound=kernel_bound, horizon=horizon, omega_init=omega_init, map_ridge=map_ridge,
                         evolving_update=evolving_update, clock=clock, random_state=random_state)
        self.align_rho = check_nonnegative("align_rho", align_rho)

    def _draw_new(self, dim):
        super()._draw_new(dim)
        self.q_ = np.full(self.n_new_features, 1.0 / self.n_new_features)
        self.label_sums_ = np.zeros(self.n_new_features)
        self.trace1_ = np.zeros(1)
        self.count_e_ = np.zeros(1, dtype=np.int64)

    def _evolving_extra(self, Z1, X2, G, y):
        # G = phi2 / sqrt(d2); alignment scores use phi2 = sqrt(d2) G
        self.label_sums_ += y @ G
        self.trace1_ += (Z1 * Z1).sum()
        self.count_e_ += Z1.shape[0]

    def _finish_evolving(self):
        te = int(self.count_e_[0])
        if te == 0:
            return
        d2 = self.n_new_features
        feat = (self.C12_ ** 2).sum(axis=0) * d2 / max(float(self.trace1_[0]), 1e-300)
        label = (self.label_sums_ ** 2) * d2 / te
        self.q_ = alignment_weights(feat + label, self.align_rho)

    def _new_repr(self, X2):
        Z = fourier_map(X2, self.u2_, self.b2_)
        Z *= np.sqrt(self.q_)
        return Z

    def diagnostics(self):
        out = super().diagnostics()
        if getattr(self, "q_", None) is not None:
            q = self.q_
            out["alignment_entropy"] = float(-(q * np.log(np.maximum(q, 1e-300))).sum())
        return out





__all__ = ["alignment_weights", "LinROGD", "LinFESL", "RffROGD", "RffFESL", "AlignFESL", "KerROGD", "KerFESL",
           "kernel_rounds", "kernel_ensemble_rounds"]
