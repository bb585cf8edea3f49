"""OCDS — online learning from capricious data streams (He, Dong, Wu, Hu, Zhou & Wu, IJCAI 2019;
extended in TNNLS 2021), the last baseline of OPFES Table 2 (ALGORITHMS.md 7 "Baselines").

OPFES describes it in one line ("capricious streaming method with a linear model via generative
graphical model"; alpha and beta from 10^[-5:0] by cross validation). Neither the OCDS code nor
its paper text is in the store, so this is a documented reading [I] of the published method, as
the other baselines are:

* **Universal feature space.** Every feature ever seen gets a coordinate: u = [x1, x2] (D1 + D2);
  a round observes a contiguous block O of it (previous stage: x1, evolving: x1 and x2, current:
  x2), the rest M is unobserved.
* **Generative graph (feature relatedness).** A D x (D + 1) matrix G with zero diagonal
  reconstructs every feature affinely from the other observed ones: u^_j = g_j + sum_{k in O,
  k != j} G_jk u_k (g_j = G_jD, a bias: features in [0, 1] are not centred). It is learned online
  on the observed block by normalised least-mean-squares with ridge ``alpha`` on the links:
  for j in O, r_j = u^_j - u_j, G_jk <- G_jk - eta (r_j u_k + alpha G_jk) (k in O, k != j) and
  g_j <- g_j - eta r_j, eta = ``map_step`` / (1 + ||u_O||^2) (the 1 is the bias input). Links between old and new features can only be learned on
  evolving rounds (the only rounds that show both).
* **Two linear classifiers on the universal space**, hinge loss, OGD with tau_t = c / sqrt(t)
  (``step_size`` c), l2 regularisation ``reg`` (lambda, as every baseline) and an l1 penalty
  ``beta`` applied by soft-thresholding after each step (the sparsity term of OCDS; the intercept
  is not penalised):
  - w_r on the *completed* vector c(u): c_O = u_O, c_M = G_{M,O} u_O (the unobserved features
    reconstructed from the observed ones; in the current stage x1 is recovered from x2);
  - w_o on the observed vector only (unobserved coordinates 0).
  Both carry an intercept when ``fit_intercept`` (default, as lin-*).
* **Prediction** h = omega f_o + (1 - omega) f_r, omega updated by the exponential weights of
  OPFES Eq. 12 with the regularised hinge losses of the two pre-update models (the same rule and
  gamma as lin-FESL: Thm 4.4 with r^2 = ``kernel_bound``, T = ``horizon``; without a horizon
  the anytime form with T = t); ``ensemble=False`` predicts with w_r only. Test-then-train: the decision of round
  t is made before y_t is used, and both the classifiers and G learn from round t only after.

Per-round cost O(|O| D) for the reconstruction and O(|O|^2) for the graph update; one compiled loop
per block of rounds.

A hand-checkable case (one old and one new feature, no regularisation):

>>> import numpy as np
>>> from okl.evolvable import EvolvableStream
>>> s = EvolvableStream(np.array([[1.0], [1.0]]), np.array([[2.0], [2.0]]), np.array([1.0, 1.0, 1.0]), 1, 1, 1)
>>> m = OCDS(step_size=1.0, reg=0.0, beta=0.0, alpha=0.0, map_step=1.0, ensemble=False, fit_intercept=False)
>>> [round(float(v), 6) for v in m.run(s).decisions]
[0.0, 1.0, 0.833333]
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import jit
from okl._validation import check_nonnegative, check_positive, check_random_state, check_real
from okl.evolvable.base import EvolvableLearner, register_evolvable
from okl.evolvable.opfes import ensemble_omega, omega_of, theory_gamma


@jit
def _ocds_features(u, lo, hi, G, intercept, comp, obs):
    D = G.shape[0]
    for j in range(D):
        if lo <= j < hi:
            comp[j] = u[j]
            obs[j] = u[j]
        else:
            s = G[j, D]
            for k in range(lo, hi):
                s += G[j, k] * u[k]
            comp[j] = s
            obs[j] = 0.0
    comp[D] = intercept
    obs[D] = intercept


@jit
def _ocds_step(w, z, y, f, tau, lam, beta):
    n = w.shape[0]
    shrink = 1.0 - tau * lam
    active = y * f < 1.0
    for j in range(n):
        v = shrink * w[j]
        if active:
            v += tau * y * z[j]
        if beta > 0.0 and j < n - 1:
            t = tau * beta
            if v > t:
                v -= t
            elif v < -t:
                v += t
            else:
                v = 0.0
        w[j] = v


@jit
def ocds_rounds(U, lo, hi, Y, G, wr, wo, c, lam, beta, alpha, map_step, intercept, clock, log_odds,
                gamma, anytime, ensemble, out):
    """Test-then-train OCDS rounds on the universal vectors U (rows), observed block [lo, hi).
    ``anytime``: the weights' sensitivity is gamma / sqrt(t) (t = this round's index), else gamma."""
    D = G.shape[0]
    comp = np.empty(D + 1)
    obs = np.empty(D + 1)
    for i in range(U.shape[0]):
        u = U[i]
        y = Y[i]
        _ocds_features(u, lo, hi, G, intercept, comp, obs)
        fr = 0.0
        fo = 0.0
        for j in range(D + 1):
            fr += wr[j] * comp[j]
            fo += wo[j] * obs[j]
        if ensemble:
            g = gamma / math.sqrt(clock[0] + 1.0) if anytime else gamma
            a = log_odds[0]
            omega = ensemble_omega(a)
            out[i] = omega * fo + (1.0 - omega) * fr
            nr = 0.0
            no = 0.0
            for j in range(D + 1):
                nr += wr[j] * wr[j]
                no += wo[j] * wo[j]
            lr = max(0.0, 1.0 - y * fr) + 0.5 * lam * nr
            lo_ = max(0.0, 1.0 - y * fo) + 0.5 * lam * no
            log_odds[0] = a + g * (lo_ - lr)
        else:
            out[i] = fr
        clock[0] += 1
        tau = c / math.sqrt(clock[0])
        _ocds_step(wr, comp, y, fr, tau, lam, beta)
        if ensemble:
            _ocds_step(wo, obs, y, fo, tau, lam, beta)
        if hi - lo >= 2 and map_step > 0.0:
            nrm = 1.0
            for k in range(lo, hi):
                nrm += u[k] * u[k]
            eta = map_step / nrm
            for j in range(lo, hi):
                r = G[j, D] - u[j]
                for k in range(lo, hi):
                    if k != j:
                        r += G[j, k] * u[k]
                for k in range(lo, hi):
                    if k != j:
                        G[j, k] -= eta * (r * u[k] + alpha * G[j, k])
                G[j, D] -= eta * r


@register_evolvable("ocds")
class OCDS(EvolvableLearner):
    """OCDS (He et al. 2019/2021) as read in the module docstring.

    Parameters
    ----------
    step_size : float, default 1.0       c in tau_t = c / sqrt(t) (both classifiers).
    reg : float, default 1e-4            lambda (l2) of the regularised hinge loss.
    alpha : float, default 1e-3          ridge of the graph G's updates (OCDS's alpha) [I].
    beta : float, default 1e-5           l1 penalty of the classifiers (OCDS's beta) [I].
    map_step : float, default 0.5        NLMS step of G (eta = map_step / (1 + ||u_O||^2)) [I].
    fit_intercept : bool, default True
    ensemble : bool, default True        combine the observed and completed classifiers.
    gamma, kernel_bound, horizon, omega_init : as lin-FESL (Eq. 12's weights).
    random_state : int or None           unused (OCDS draws nothing); kept for the protocol.

    The classifier step is chosen like lin-*'s (``linear = True``: ``okl evolve`` gives it the
    tuned linear step size).
    """

    linear = True

    def __init__(self, *, step_size: float = 1.0, reg: float = 1e-4, alpha: float = 1e-3, beta: float = 1e-5,
                 map_step: float = 0.5, fit_intercept: bool = True, ensemble: bool = True,
                 gamma: float | None = None, kernel_bound: float = 2.0, horizon: int | None = None,
                 omega_init: float = 0.5, random_state: int | None = None):
        self.step_size = check_positive("step_size", step_size)
        self.reg = check_nonnegative("reg", reg)
        self.alpha = check_nonnegative("alpha", alpha)
        self.beta = check_nonnegative("beta", beta)
        self.map_step = check_real("map_step", map_step, 0.0, 2.0, high_open=True)
        for flag, value in (("fit_intercept", fit_intercept), ("ensemble", ensemble)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, got {value!r}")
        self.fit_intercept = bool(fit_intercept)
        self.ensemble = bool(ensemble)
        self.gamma = None if gamma is None else check_nonnegative("gamma", gamma)
        self.kernel_bound = check_positive("kernel_bound", kernel_bound)
        self.horizon = None if horizon is None else int(check_positive("horizon", horizon))
        self.omega_init = check_real("omega_init", omega_init, 0.0, 1.0, low_open=True, high_open=True)
        self.random_state = check_random_state(random_state)

    # ---- state -------------------------------------------------------------------------------

    def _start_old(self, dim):
        self.G_ = np.zeros((dim, dim + 1))
        self.wr_ = np.zeros(dim + 1)
        self.wo_ = np.zeros(dim + 1)
        self.clock_ = np.zeros(1, dtype=np.int64)
        self.log_odds_ = np.array([math.log((1.0 - self.omega_init) / self.omega_init)])

    def _start_new(self, dim):
        if self.dim_old_ is None:
            self._start_old(1)
            self.dim_old_ = 1
        d1 = self.G_.shape[0]
        D = d1 + dim
        G = np.zeros((D, D + 1))
        G[:d1, :d1] = self.G_[:, :d1]
        G[:d1, D] = self.G_[:, d1]
        self.G_ = G
        for name in ("wr_", "wo_"):
            w = getattr(self, name)
            setattr(self, name, np.concatenate([w[:d1], np.zeros(dim), w[d1:]]))

    def _gamma(self):
        """(gamma, anytime): the given gamma; Thm 4.4's with T = ``horizon``; without a horizon the
        anytime form gamma_t = Thm 4.4's with T = t (t the round index)."""
        if self.gamma is not None:
            return self.gamma, False
        if self.reg <= 0:
            return 0.0, False
        if self.horizon is not None:
            return theory_gamma(self.kernel_bound, self.reg, self.horizon), False
        return theory_gamma(self.kernel_bound, self.reg, 1), True

    def _run(self, U, lo, hi, y):
        out = np.empty(U.shape[0])
        ocds_rounds(np.ascontiguousarray(U, dtype=np.float64), lo, hi, np.ascontiguousarray(y, dtype=np.float64),
                    self.G_, self.wr_, self.wo_, self.step_size, self.reg, self.beta, self.alpha, self.map_step,
                    1.0 if self.fit_intercept else 0.0, self.clock_, self.log_odds_, *self._gamma(),
                    self.ensemble, out)
        return out

    def _universal(self, X1, X2):
        d1 = self.dim_old_
        n = (X1 if X1 is not None else X2).shape[0]
        if X2 is None:
            return X1, 0, d1
        U = np.zeros((n, self.G_.shape[0]))
        if X1 is not None:
            U[:, :d1] = X1
        U[:, d1:] = X2
        return U, (0 if X1 is not None else d1), self.G_.shape[0]

    # ---- stages -------------------------------------------------------------------------------

    def _previous(self, X1, y):
        U, lo, hi = self._universal(X1, None)
        return self._run(U, lo, hi, y)

    def _evolving(self, X1, X2, y):
        U, lo, hi = self._universal(X1, X2)
        return self._run(U, lo, hi, y)

    def _begin_current(self):
        pass

    def _current(self, X2, y):
        U, lo, hi = self._universal(None, X2)
        return self._run(U, lo, hi, y)

    def _decide(self, X1, X2):
        U, lo, hi = self._universal(X1, X2)
        D = self.G_.shape[0]
        comp, obs = np.empty(D + 1), np.empty(D + 1)
        _ocds_features(U[0], lo, hi, self.G_, 1.0 if self.fit_intercept else 0.0, comp, obs)
        fr = float(self.wr_ @ comp)
        if not self.ensemble:
            return fr
        omega = omega_of(float(self.log_odds_[0]))
        return omega * float(self.wo_ @ obs) + (1.0 - omega) * fr

    def _decide_previous(self, x1):
        return self._decide(x1[None, :], None)

    def _decide_evolving(self, x1, x2):
        return self._decide(x1[None, :], x2[None, :])

    def _decide_current(self, x2):
        return self._decide(None, x2[None, :])

    def diagnostics(self):
        out = {}
        if getattr(self, "log_odds_", None) is not None and self.ensemble:
            out["omega"] = omega_of(float(self.log_odds_[0]))
        if getattr(self, "G_", None) is not None and self.dim_new_ is not None:
            d1 = self.dim_old_
            out["cross_links"] = float(np.abs(self.G_[:d1, d1:]).sum())
        return out


__all__ = ["OCDS", "ocds_rounds"]
