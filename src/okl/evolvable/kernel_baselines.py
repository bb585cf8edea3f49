"""ker-ROGD and ker-FESL: budgeted kernel OGD with a reservoir-sampled buffer, over the shared
baseline machinery of :mod:`okl.evolvable.baselines_common` (see :mod:`okl.evolvable.baselines`)."""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import jit, kernel_value
from okl._validation import check_int, check_positive
from okl.evolvable.base import register_evolvable
from okl.evolvable.baselines_common import _MappedBaseline, _COMMON_DOC
from okl.evolvable.opfes import ensemble_omega, omega_of, transition_gamma
from okl.kernels import RBF


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
        omega = ensemble_omega(a)
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
        # the kernel models' losses are plain hinge losses: Thm 4.4's rule with lambda -> the
        # same value as the feature-based learners use (same reg)
        self.gamma_ = transition_gamma(self)
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
