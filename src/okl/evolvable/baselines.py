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

from okl._compiled import jit, kernel_value
from okl._validation import check_choice, check_int, check_nonnegative, check_positive, check_random_state, check_real
from okl.evolvable.base import EvolvableLearner, register_evolvable
from okl.evolvable.opfes import (draw_fourier, ensemble_rounds, fourier_map, ogd_hinge_rounds, omega_of,
                                 theory_gamma)
from okl.kernels import RBF


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
# Templates


class _MappedBaseline(EvolvableLearner):
    """ROGD / FESL on explicit features (see the module docstring). Subclasses define the old
    representation z1(x1), the mapping input g(x2) and the new model's features z2(x2)."""

    ensemble: bool = False

    def _common_params(self, step_size, reg, gamma, kernel_bound, horizon, omega_init, map_ridge,
                       evolving_update, clock, random_state):
        self.step_size = check_positive("step_size", step_size)
        self.reg = check_nonnegative("reg", reg)
        self.gamma = None if gamma is None else check_nonnegative("gamma", gamma)
        self.kernel_bound = check_positive("kernel_bound", kernel_bound)
        self.horizon = None if horizon is None else check_int("horizon", horizon, 1)
        self.omega_init = check_real("omega_init", omega_init, 0.0, 1.0, low_open=True, high_open=True)
        self.map_ridge = check_positive("map_ridge", map_ridge)
        self.evolving_update = check_choice("evolving_update", evolving_update, ("freeze", "learn"))
        self.clock = check_choice("clock", clock, ("model", "global"))
        self.random_state = check_random_state(random_state)

    # representation hooks
    def _old_repr(self, X1):
        raise NotImplementedError

    def _map_input(self, X2):
        raise NotImplementedError

    def _new_repr(self, X2):
        raise NotImplementedError

    def _old_dim(self, dim):
        raise NotImplementedError

    def _map_dim(self, dim):
        raise NotImplementedError

    def _new_dim(self, dim):
        raise NotImplementedError

    def _draw_old(self, dim):
        pass

    def _draw_new(self, dim):
        pass

    def _finish_evolving(self):
        pass

    # stages
    def _start_old(self, dim):
        self._draw_old(dim)
        self.w1_ = np.zeros(self._old_dim(dim))
        self.clock1_ = np.zeros(1, dtype=np.int64)

    def _start_new(self, dim):
        if self.dim_old_ is None:
            self._start_old(1)
        self._draw_new(dim)
        g = self._map_dim(dim)
        self.C12_ = np.zeros((self.w1_.shape[0], g))
        self.C22_ = np.zeros((g, g))
        self.map_ = np.zeros((self.w1_.shape[0], g))
        self.w2_ = np.zeros(self._new_dim(dim))
        self.clocks_ = np.zeros(2, dtype=np.int64)
        self.log_odds_ = np.array([math.log((1.0 - self.omega_init) / self.omega_init)])
        self.gamma_ = 0.0

    def _previous(self, X1, y):
        out = np.empty(X1.shape[0])
        if self.clock == "global":
            self.clock1_[0] = self.n_seen_
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            ogd_hinge_rounds(self._old_repr(X1[s:e]), y[s:e], self.w1_, self.step_size, self.reg, self.clock1_,
                             out[s:e])
        return out

    def _decide_previous(self, x1):
        return float(self._old_repr(x1[None, :])[0] @ self.w1_)

    def _evolving(self, X1, X2, y):
        out = np.empty(X1.shape[0])
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Z1 = self._old_repr(X1[s:e])
            G = self._map_input(X2[s:e])
            self.C12_ += Z1.T @ G
            self.C22_ += G.T @ G
            self._evolving_extra(Z1, X2[s:e], G, y[s:e])
            if self.evolving_update == "learn":
                if self.clock == "global":
                    self.clock1_[0] = self.n_seen_ + s
                ogd_hinge_rounds(Z1, y[s:e], self.w1_, self.step_size, self.reg, self.clock1_, out[s:e])
            else:
                out[s:e] = Z1 @ self.w1_
        return out

    def _evolving_extra(self, Z1, X2, G, y):
        pass

    def _decide_evolving(self, x1, x2):
        return self._decide_previous(x1)

    def _begin_current(self):
        g = self.C22_.shape[0]
        mu = self.map_ridge * max(np.trace(self.C22_) / g, 1e-12)
        A = self.C22_ + mu * np.eye(g)
        self.map_ = np.linalg.solve(A, self.C12_.T).T      # Psi = C12 (C22 + mu I)^-1
        self._finish_evolving()
        self.clocks_[0] = self.clock1_[0]
        self.clocks_[1] = 0
        if self.gamma is not None:
            self.gamma_ = self.gamma
        else:
            before = self.n_seen_
            t2 = self.horizon - before if self.horizon is not None and self.horizon > before else self.stage_counts_[0]
            self.gamma_ = theory_gamma(self.kernel_bound, self.reg, t2) if self.reg > 0 else 0.0
        self.C12_ = np.zeros((0, 0))
        self.C22_ = np.zeros((0, 0))

    def _current(self, X2, y):
        out = np.empty(X2.shape[0])
        mode = 0 if self.ensemble else 1
        if self.clock == "global":
            self.clocks_[:] = self.n_seen_
        for s in range(0, X2.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Zr = self._map_input(X2[s:e]) @ self.map_.T
            Zn = self._new_repr(X2[s:e]) if self.ensemble else Zr
            ensemble_rounds(Zr, Zn, y[s:e], self.w1_, self.w2_, self.step_size, self.reg, self.clocks_,
                            self.log_odds_, self.gamma_, mode, out[s:e])
        return out

    def _decide_current(self, x2):
        x = x2[None, :]
        f1 = float((self._map_input(x) @ self.map_.T)[0] @ self.w1_)
        if not self.ensemble:
            return f1
        f2 = float(self._new_repr(x)[0] @ self.w2_)
        omega = omega_of(float(self.log_odds_[0]))
        return omega * f1 + (1.0 - omega) * f2

    def diagnostics(self):
        out = {}
        if self.ensemble and getattr(self, "log_odds_", None) is not None:
            out["omega"] = omega_of(float(self.log_odds_[0]))
        return out


_COMMON_DOC = """
    step_size : float, default 1.0       c in tau_t = c / sqrt(t).
    reg : float, default 1e-4            lambda of the regularised hinge loss.
    gamma : float or None                Eq. 12 sensitivity; None: Thm 4.4's rule (as OPFES).
    kernel_bound : float, default 2.0    r^2 in that rule.
    horizon : int or None                expected stream length (for gamma's T2).
    omega_init : float, default 0.5
    map_ridge : float, default 1e-3      mu / (tr C22 / dim g) of the least-squares map.
    evolving_update : {"freeze", "learn"}, default "freeze"
    clock : {"model", "global"}, default "model"
    random_state : int or None
"""


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


# --------------------------------------------------------------------------------------------
# ker-ROGD / ker-FESL: budgeted kernel OGD with a reservoir-sampled buffer


@jit
def _kernel_decision(S, alpha, m, scale, kind, ka, kb, kc, x):
    s = 0.0
    for j in range(m):
        s += alpha[j] * kernel_value(kind, ka, kb, kc, S[j], x)
    return s * scale


@jit
def _kernel_update(S, alpha, istate, fstate, c, lam, x, y, f, u0, u1):
    """One OGD step of f = scale * sum alpha_j k(s_j, .) with a reservoir-sampled buffer.
    istate = [m (filled), k (candidates so far), clock]; fstate = [scale]."""
    B = S.shape[0]
    istate[2] += 1
    tau = c / math.sqrt(istate[2])
    shrink = 1.0 - tau * lam
    fstate[0] *= shrink
    if fstate[0] < 1e-150 or fstate[0] > 1e150:
        for j in range(istate[0]):
            alpha[j] *= fstate[0]
        fstate[0] = 1.0
    if y * f < 1.0 and fstate[0] != 0.0:
        istate[1] += 1
        coef = tau * y / fstate[0]
        if istate[0] < B:
            j = istate[0]
            istate[0] += 1
        elif u0 * istate[1] < B:
            j = min(int(u1 * B), B - 1)
        else:
            return
        for i in range(x.shape[0]):
            S[j, i] = x[i]
        alpha[j] = coef


@jit
def kernel_rounds(X, Y, S, alpha, istate, fstate, c, lam, kind, ka, kb, kc, R, out):
    """Test-then-train budgeted kernel OGD; R[i] = two uniforms for round i's reservoir draw."""
    for i in range(X.shape[0]):
        x = X[i]
        f = _kernel_decision(S, alpha, istate[0], fstate[0], kind, ka, kb, kc, x)
        out[i] = f
        _kernel_update(S, alpha, istate, fstate, c, lam, x, Y[i], f, R[i, 0], R[i, 1])


@jit
def kernel_ensemble_rounds(XA, XB, Y, SA, alphaA, istA, fstA, SB, alphaB, istB, fstB, c, lam,
                           kindA, aA, bA, cA, kindB, aB, bB, cB, R, log_odds, gamma, out):
    """ker-FESL current stage: h = omega fA + (1 - omega) fB; weights by Eq. 12 with hinge losses."""
    for i in range(Y.shape[0]):
        y = Y[i]
        fa = _kernel_decision(SA, alphaA, istA[0], fstA[0], kindA, aA, bA, cA, XA[i])
        fb = _kernel_decision(SB, alphaB, istB[0], fstB[0], kindB, aB, bB, cB, XB[i])
        a = log_odds[0]
        if a > 0:
            e = math.exp(-a)
            omega = e / (1.0 + e)
        else:
            omega = 1.0 / (1.0 + math.exp(a))
        out[i] = omega * fa + (1.0 - omega) * fb
        log_odds[0] = a + gamma * (max(0.0, 1.0 - y * fa) - max(0.0, 1.0 - y * fb))
        _kernel_update(SA, alphaA, istA, fstA, c, lam, XA[i], y, fa, R[i, 0], R[i, 1])
        _kernel_update(SB, alphaB, istB, fstB, c, lam, XB[i], y, fb, R[i, 2], R[i, 3])


@register_evolvable("ker-rogd")
class KerROGD(_MappedBaseline):
    """ker-ROGD (OPFES Sec. 5: "kernel model and l2 distance for feature relationships", Hou et al.
    2021, buffer of 10% of the dataset by reservoir sampling). Read as: kernel OGD (Gaussian width
    ``sigma``) on x1 whose support vectors live in a buffer of ``budget`` instances maintained by
    reservoir sampling over the margin-error rounds (a new support vector enters while the buffer
    has room, later the k-th one replaces a uniformly chosen slot with probability B/k); a ridge
    least-squares linear map x2 -> x1 from the evolving stage; in the current stage the kernel model
    predicts on, and keeps learning from, x1^ = Psi x2.

    Parameters
    ----------
    sigma : float, default 1.0           Gaussian width (old space).
    new_sigma : float or None            width of ker-FESL's new-space kernel (None: sigma).
    budget : int or None                 buffer size B; None: 10% of ``horizon`` (500 without it).
    """ + _COMMON_DOC + """
    The ensemble weights of ker-FESL use the hinge loss without the RKHS-norm term (computing
    ||f||_H^2 costs O(B^2) per round) [I].
    Per-round cost O(B D).
    """

    def __init__(self, *, sigma: float = 1.0, new_sigma: float | None = None, budget: int | None = None,
                 step_size: float = 1.0, reg: float = 1e-4, gamma: float | None = None,
                 kernel_bound: float = 2.0, horizon: int | None = None, omega_init: float = 0.5,
                 map_ridge: float = 1e-3, evolving_update: str = "freeze", clock: str = "model",
                 random_state: int | None = None):
        self.sigma = check_positive("sigma", sigma)
        self.new_sigma = None if new_sigma is None else check_positive("new_sigma", new_sigma)
        self.budget = None if budget is None else check_int("budget", budget, 1)
        self._common_params(step_size, reg, gamma, kernel_bound, horizon, omega_init, map_ridge,
                            evolving_update, clock, random_state)

    @property
    def budget_(self) -> int:
        if self.budget is not None:
            return self.budget
        return max(1, int(round(0.1 * self.horizon))) if self.horizon is not None else 500

    def _kspec(self, new=False):
        width = self.new_sigma if (new and self.new_sigma is not None) else self.sigma
        return RBF(sigma=width).spec()

    def _start_old(self, dim):
        B = self.budget_
        self.S1_ = np.zeros((B, dim))
        self.alpha1_ = np.zeros(B)
        self.ist1_ = np.zeros(3, dtype=np.int64)
        self.fst1_ = np.ones(1)

    def _start_new(self, dim):
        if self.dim_old_ is None:
            self._start_old(1)
        d1 = self.S1_.shape[1]
        self.C12_ = np.zeros((d1, dim))
        self.C22_ = np.zeros((dim, dim))
        self.map_ = np.zeros((d1, dim))
        B = self.budget_
        self.S2_ = np.zeros((B, dim))
        self.alpha2_ = np.zeros(B)
        self.ist2_ = np.zeros(3, dtype=np.int64)
        self.fst2_ = np.ones(1)
        self.log_odds_ = np.array([math.log((1.0 - self.omega_init) / self.omega_init)])
        self.gamma_ = 0.0

    def _run_old(self, X1, y, out):
        if self.clock == "global":
            self.ist1_[2] = self.n_seen_
        kind, a, b, c = self._kspec()
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            R = self._rng.random((X1[s:e].shape[0], 2))
            kernel_rounds(X1[s:e], y[s:e], self.S1_, self.alpha1_, self.ist1_, self.fst1_, self.step_size,
                          self.reg, kind, a, b, c, R, out[s:e])

    def _previous(self, X1, y):
        out = np.empty(X1.shape[0])
        self._run_old(X1, y, out)
        return out

    def _decide_previous(self, x1):
        kind, a, b, c = self._kspec()
        return float(_kernel_decision(self.S1_, self.alpha1_, self.ist1_[0], self.fst1_[0], kind, a, b, c, x1))

    def _evolving(self, X1, X2, y):
        out = np.empty(X1.shape[0])
        self.C12_ += X1.T @ X2
        self.C22_ += X2.T @ X2
        if self.evolving_update == "learn":
            self._run_old(X1, y, out)
        else:
            kind, a, b, c = self._kspec()
            for i in range(X1.shape[0]):
                out[i] = _kernel_decision(self.S1_, self.alpha1_, self.ist1_[0], self.fst1_[0], kind, a, b, c, X1[i])
        return out

    def _begin_current(self):
        g = self.C22_.shape[0]
        mu = self.map_ridge * max(np.trace(self.C22_) / g, 1e-12)
        self.map_ = np.linalg.solve(self.C22_ + mu * np.eye(g), self.C12_.T).T
        self.ist2_[:] = 0
        if self.gamma is not None:
            self.gamma_ = self.gamma
        else:
            before = self.n_seen_
            t2 = self.horizon - before if self.horizon is not None and self.horizon > before else self.stage_counts_[0]
            # the kernel models' losses are plain hinge losses: Thm 4.4's rule with lambda -> the
            # same value as the feature-based learners use (same reg)
            self.gamma_ = theory_gamma(self.kernel_bound, self.reg, t2) if self.reg > 0 else 0.0
        self.C12_ = np.zeros((0, 0))
        self.C22_ = np.zeros((0, 0))

    def _current(self, X2, y):
        out = np.empty(X2.shape[0])
        kA = self._kspec()
        kB = self._kspec(new=True)
        if self.clock == "global":
            self.ist1_[2] = self.n_seen_
            self.ist2_[2] = self.n_seen_
        for s in range(0, X2.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Xr = X2[s:e] @ self.map_.T
            if self.ensemble:
                R = self._rng.random((Xr.shape[0], 4))
                kernel_ensemble_rounds(Xr, X2[s:e], y[s:e], self.S1_, self.alpha1_, self.ist1_, self.fst1_,
                                       self.S2_, self.alpha2_, self.ist2_, self.fst2_, self.step_size, self.reg,
                                       *kA, *kB, R, self.log_odds_, self.gamma_, out[s:e])
            else:
                R = self._rng.random((Xr.shape[0], 2))
                kernel_rounds(Xr, y[s:e], self.S1_, self.alpha1_, self.ist1_, self.fst1_, self.step_size,
                              self.reg, *kA, R, out[s:e])
        return out

    def _decide_current(self, x2):
        kA = self._kspec()
        xr = x2 @ self.map_.T
        fa = float(_kernel_decision(self.S1_, self.alpha1_, self.ist1_[0], self.fst1_[0], *kA, xr))
        if not self.ensemble:
            return fa
        kB = self._kspec(new=True)
        fb = float(_kernel_decision(self.S2_, self.alpha2_, self.ist2_[0], self.fst2_[0], *kB, x2))
        omega = omega_of(float(self.log_odds_[0]))
        return omega * fa + (1.0 - omega) * fb

    def diagnostics(self):
        out = {"budget": self.budget_}
        if getattr(self, "ist1_", None) is not None:
            out["support_old"] = int(self.ist1_[0])
        if self.ensemble and getattr(self, "log_odds_", None) is not None:
            out["omega"] = omega_of(float(self.log_odds_[0]))
        return out


@register_evolvable("ker-fesl")
class KerFESL(KerROGD):
    """ker-FESL (OPFES Sec. 5: "online ensemble of ker-ROGD and kernel models learned from scratch",
    Hou et al. 2021): ker-ROGD's recovered kernel model and a budgeted kernel OGD model on x2 (its
    own reservoir buffer of the same size, width ``new_sigma``) started empty in the current stage,
    combined by Eq. 12's exponential weights on their hinge losses."""

    ensemble = True


__all__ = ["alignment_weights", "LinROGD", "LinFESL", "RffROGD", "RffFESL", "AlignFESL", "KerROGD", "KerFESL",
           "kernel_rounds", "kernel_ensemble_rounds"]
