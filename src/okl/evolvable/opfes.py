"""OPFES — one-pass feature-evolvable learning (Xing et al., ICML 2025, Algorithm 2; ALGORITHMS.md 7).

Random Fourier features (Eq. 1): phi(x, u, b) = sqrt(2) cos(<x, u> + b), u ~ N(0, sigma^-2 I),
b ~ U[0, 2 pi]; with a spectral density p on the simplex, z(x)_k = sqrt(p_k) phi(x, u_k, b_k), so
z(x)^T z(x') estimates the kernel (p = 1/d: the Gaussian kernel of width sigma).

Per-round loss (Sec. 2): l_t(w) = max(0, 1 - y_t <w, z(x_t)>) + (lambda/2) ||w||^2, and OGD
(Eq. 2, 9, 10): w <- w - tau_t grad l_t(w) = (1 - tau_t lambda) w + tau_t y z [y <w, z> < 1],
tau_t = c / sqrt(t).

Algorithm 2 (the state before round t's update makes round t's prediction, test-then-train):

1. Draw (u1, b1) x d1 for the old space at the first x1, (u2, b2) and (ul, bl) x d2 for the new
   space at the first x2 (frozen afterwards).
2. Previous stage: OGD of w1 on z1 = phi1 / sqrt(d1) (p1 uniform: the Gaussian K1).
3. Evolving stage: predict with w1; accumulate the KOM statistics (Eq. 7-8) M, v for K2 against
   K1, and M^l (1 x d2, m_l = sum_t y_t Phi^l_tl), v^l for K^l against the ideal kernel y y^T.
4. At the first current round: p2 and pl by Algorithm 1 (mirror descent, :mod:`okl.evolvable.kom`);
   model reuse w2 = U*^T w1 with U* = V W^T from the SVD M diag(sqrt p2) = V S W^T (Eq. 11,
   Prop. 4.1); wl = 0; omega = 1/2.
5. Current stage: h = omega <w2, z2> + (1 - omega) <wl, zl> (Eq. 12); then
   omega <- omega e^{-gamma L2} / (omega e^{-gamma L2} + (1 - omega) e^{-gamma Ll}) with the
   regularised losses L2 = l_t(w2), Ll = l_t(wl) of the pre-update models, and OGD on both.

Open points (ALGORITHMS.md 10.3), each an option with its default:

* ``kom_row_weight``: "p1" (Eq. 7 as printed, default) or "sqrt_p1" (what the exact identity
  ||sqrt(K1) sqrt(K2)||_* = ||diag(sqrt p1) Phi1^T Phi2 diag(sqrt p)||_* needs). With p1 = 1/d1
  the two differ by the factor sqrt(d1) on the nuclear term of f; the rotation U* is the same.
* ``kom_gradient``: "paper" (Lemma B.1, twice the derivative of f, default) or "exact".
* ``kom_step`` None: the App. B step sqrt(2 ln d2 / (T_M Te (1 + sqrt(d2)/eps))) with
  eps = ``kom_eps`` (the proof's lower bound on p; default 1/(10 d2) [I], the paper gives none);
  ``kom_floor`` = 1e-12 keeps p > 0.
* ``evolving_update``: "freeze" (w1_{T1} is reused, as Eq. 11 writes; default) or "learn"
  (w1 keeps learning on x1 during the evolving stage).
* ``omega_init`` = 1/2 [I]; ``new_sigma`` (width of the new-space features) None = ``sigma`` [I].
* ideal-kernel statistics: K* = y y^T has the single feature y with weight 1, so M^l is 1 x d2
  and ||M^l diag(sqrt p)||_* = sqrt(sum_l p_l m_l^2) [I].
* ``clock``: "model" (default [I]: each model's step counter counts the rounds it was trained;
  the reused w2 inherits w1's count, wl starts at 1) or "global" (t is the stream's round index).
* ``gamma`` None: Thm 4.4's sqrt(ln 2 / ((1 + 3 r^2 / (2 lambda)) T2)) with r^2 =
  ``kernel_bound`` (2 bounds ||z||^2 for sqrt(2) cos features with sum p = 1) and T2 =
  ``horizon`` - (rounds before the current stage); without ``horizon``, T2 = T1 (the protocol's
  T1 = T2).
* ``kom_rank_tol`` (default 1e-2 [I]): Algorithm 1 iterates on M's SVD truncated to the
  directions holding all but this fraction of its nuclear norm (0 = exact; every iteration then
  costs an eigendecomposition of size rank(M) ~ min(Te, d1, d2)). Measured at Te = 1000,
  d1 = d2 = 1000 on pol, adult and ijcnn1: 1e-2 keeps ranks 100-300 of 600-900 and gives the same
  p2 as 1e-3 (entropy and f equal to 1e-3 relative), 2-4x faster. The rotation U* always uses
  the exact M.

Ablations (OPFES Table 3): ``use_kom=False`` — no KOM at all: p2 = pl = uniform and no reuse (U*
comes from Algorithm 1's SVD, so w2 starts at 0); ``use_ideal_kernel=False`` — only the K2 model
(h = <w2, z2>); ``reuse_model=False`` — w2 starts at 0.

Hyperparameters (paper defaults, Sec. 5): d1 = d2 = 1000; T_M = 1000; widths in 2^[-6:6],
c in 10^[-4:2], lambda in 10^[-10:1] (chosen per dataset in the paper; here ``sigma`` = 1,
``step_size`` = 1, ``reg`` = 1e-4 unless given).

Cost per round: previous and current stages O(d D) for the features (computed a block of rounds
at a time by matrix products) plus O(d) per model in a compiled loop; evolving stage O(d1 d2) for
the statistics; the transition one SVD of M (d1 x d2) and T_M mirror-descent steps of
O(r^2 d2 + r^3), r the retained rank of M.

>>> import numpy as np
>>> from okl.evolvable import make_evolvable_stream
>>> rng = np.random.default_rng(0); X = rng.random((600, 6))
>>> y = np.where(X[:, :3].sum(1) + X[:, 3:].sum(1) > 3, 1.0, -1.0)
>>> s = make_evolvable_stream(X, y, seed=0)
>>> res = OPFES(n_old_features=100, n_new_features=100, kom_iterations=50, random_state=0).run(s)
>>> res.current_error_rate < 0.3
True
"""

from __future__ import annotations

import math

import numpy as np

from okl._compiled import dot, jit
from okl._validation import (check_choice, check_int, check_nonnegative, check_positive, check_random_state,
                             check_real)
from okl.evolvable.base import EvolvableLearner, register_evolvable
from okl._threads import one_blas_thread
from okl.evolvable.kom import KOMProblem, KOMStatistics, default_kom_step, mirror_descent

SQRT2 = math.sqrt(2.0)


# --------------------------------------------------------------------------------------------
# Feature maps and compiled loops (shared with the baselines)


def draw_fourier(rng: np.random.Generator, n_features: int, dim: int, sigma: float):
    """Frozen random Fourier parameters: U (n x dim) ~ N(0, sigma^-2 I), b ~ U[0, 2 pi]."""
    U = rng.standard_normal((n_features, dim)) / sigma
    b = rng.uniform(0.0, 2.0 * np.pi, n_features)
    return U, b


def fourier_map(X: np.ndarray, U: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Phi = sqrt(2) cos(X U^T + b), one row per instance (OPFES Eq. 1 without sqrt(p))."""
    P = X @ U.T
    P += b
    np.cos(P, out=P)
    P *= SQRT2
    return P


@jit
def hinge_ogd_step(w, z, y, f, c, lam, clocks, which):
    """One step of OGD on the regularised hinge loss at decision value f: t = clocks[which] + 1,
    tau = c / sqrt(t), w <- (1 - tau lam) w + tau y z [y f < 1]."""
    clocks[which] += 1
    tau = c / math.sqrt(clocks[which])
    shrink = 1.0 - tau * lam
    if y * f < 1.0:
        g = tau * y
        for j in range(w.shape[0]):
            w[j] = shrink * w[j] + g * z[j]
    elif shrink != 1.0:
        for j in range(w.shape[0]):
            w[j] *= shrink


@jit
def ogd_hinge_rounds(Z, Y, w, c, lam, clock, out):
    """Test-then-train OGD on the regularised hinge loss: f = w.z; t = clock + 1;
    w <- (1 - tau lam) w + tau y z [y f < 1], tau = c / sqrt(t)."""
    for i in range(Z.shape[0]):
        z = Z[i]
        f = dot(w, z)
        out[i] = f
        hinge_ogd_step(w, z, Y[i], f, c, lam, clock, 0)


@jit
def ensemble_rounds(Z2, ZL, Y, w2, wl, c, lam, clocks, log_odds, gamma, mode, out):
    """OPFES current stage (Eq. 9, 10, 12). ``log_odds[0]`` = ln((1 - omega)/omega).

    mode 0: h = omega f2 + (1 - omega) fl with the exponential weights; 1: h = f2 only (wl not
    trained); 2: h = fl only. Both models take one OGD step per round (mode 0)."""
    for i in range(Y.shape[0]):
        y = Y[i]
        z2 = Z2[i]
        zl = ZL[i]
        f2 = dot(w2, z2) if mode != 2 else 0.0
        fl = dot(wl, zl) if mode != 1 else 0.0
        if mode == 0:
            a = log_odds[0]
            omega = ensemble_omega(a)
            out[i] = omega * f2 + (1.0 - omega) * fl
            l2 = max(0.0, 1.0 - y * f2) + 0.5 * lam * dot(w2, w2)
            ll = max(0.0, 1.0 - y * fl) + 0.5 * lam * dot(wl, wl)
            log_odds[0] = a + gamma * (l2 - ll)
        elif mode == 1:
            out[i] = f2
        else:
            out[i] = fl
        if mode != 2:
            hinge_ogd_step(w2, z2, y, f2, c, lam, clocks, 0)
        if mode != 1:
            hinge_ogd_step(wl, zl, y, fl, c, lam, clocks, 1)


def omega_of(log_odds: float) -> float:
    """omega from ln((1 - omega)/omega)."""
    if log_odds > 0:
        e = math.exp(-log_odds)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(log_odds))


@jit
def ensemble_omega(a):
    """:func:`omega_of` inside the compiled loops."""
    if a > 0:
        e = math.exp(-a)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(a))


def transition_gamma(learner) -> float:
    """The ensemble rate of stage 2: ``learner.gamma`` if given, else :func:`theory_gamma` over the
    rounds expected in stage 2 (``horizon`` minus the rounds seen, or as many as stage 1 had);
    0 without regularisation."""
    if learner.gamma is not None:
        return learner.gamma
    before = learner.n_seen_
    t2 = learner.horizon - before if learner.horizon is not None and learner.horizon > before else learner.stage_counts_[0]
    return theory_gamma(learner.kernel_bound, learner.reg, t2) if learner.reg > 0 else 0.0


def theory_gamma(kernel_bound: float, reg: float, t2: int) -> float:
    """Thm 4.4: gamma = sqrt(ln 2 / ((1 + 3 r^2 / (2 lambda)) T2))."""
    return math.sqrt(math.log(2.0) / ((1.0 + 3.0 * kernel_bound / (2.0 * reg)) * max(t2, 1)))


def check_ogd_params(step_size, reg):
    c = check_positive("step_size", step_size)
    lam = check_nonnegative("reg", reg)
    return c, lam


# --------------------------------------------------------------------------------------------
# the old space's model (OPFES and the mapped baselines)


class OldSpaceOGD(EvolvableLearner):
    """An evolvable learner whose old space's model is a linear w1 (``w1_``, its clock
    ``clock1_``) on the features z1 = :meth:`_old_repr` (x1), learned by :func:`ogd_hinge_rounds`:
    OPFES and the mapped baselines (:mod:`okl.evolvable.baselines_common`). The previous stage
    learns it; the evolving stage learns it as well (:meth:`_learn_old`) with
    ``evolving_update="learn"``, else predicts with it. O(d1) a row besides the features."""

    def _old_repr(self, X1):
        """z1 of the rows of X1 (a new array)."""
        raise NotImplementedError

    def _learn_old(self, Z1, Y, start, out) -> None:
        """w1 learns the rows Z1 = z1(x1), decisions into ``out``; with ``clock="global"`` its
        clock is first set to the rounds seen before them (``n_seen_ + start``, ``start`` the rows
        of this stage before them)."""
        if self.clock == "global":
            self.clock1_[0] = self.n_seen_ + start
        ogd_hinge_rounds(Z1, Y, self.w1_, self.step_size, self.reg, self.clock1_, out)

    def _previous(self, X1, y):
        out = np.empty(X1.shape[0])
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            # (with clock="global", n_seen_ + s is where the chunk before left the clock: a round a row)
            self._learn_old(self._old_repr(X1[s:e]), y[s:e], s, out[s:e])
        return out

    def _decide_previous(self, x1):
        return float(self._old_repr(x1[None, :])[0] @ self.w1_)


# --------------------------------------------------------------------------------------------
# OPFES


@register_evolvable("opfes")
class OPFES(OldSpaceOGD):
    """One-pass feature-evolvable learning (OPFES Algorithm 2). See the module docstring.

    Parameters
    ----------
    n_old_features, n_new_features : int, default 1000
        d1 and d2 random Fourier features (Sec. 5).
    sigma : float, default 1.0
        Gaussian width of the old-space kernel K1 (frequencies N(0, sigma^-2 I)).
    new_sigma : float or None
        Width of the new-space features of K2 and K^l (None: ``sigma``).
    step_size : float, default 1.0
        c in tau_t = c / sqrt(t) for every model.
    reg : float, default 1e-4
        lambda of the regularised hinge loss.
    gamma : float or None
        Sensitivity of the combination (Eq. 12); None: Thm 4.4 (see module docstring).
    kernel_bound : float, default 2.0
        r^2 in Thm 4.4's gamma.
    horizon : int or None
        Expected stream length T1 + Te + T2 (for gamma's T2).
    omega_init : float in (0, 1), default 0.5
    kom_iterations : int, default 1000
        T_M of Algorithm 1.
    kom_step : float or None
        eta_M; None: App. B's formula with ``kom_eps``.
    kom_eps : float or None
        eps of that formula; None: 1 / (10 d2).
    kom_floor : float, default 1e-12
    kom_row_weight : {"p1", "sqrt_p1"}, default "p1"
    kom_gradient : {"paper", "exact"}, default "paper"
    kom_iterate : {"last", "average"}, default "last"
    kom_rank_tol : float in [0, 1), default 1e-2
    evolving_update : {"freeze", "learn"}, default "freeze"
    clock : {"model", "global"}, default "model"
    use_kom, use_ideal_kernel, reuse_model : bool, default True
        Ablation switches (Table 3).
    random_state : int or None
    """

    def __init__(self, *, n_old_features: int = 1000, n_new_features: int = 1000, sigma: float = 1.0,
                 new_sigma: float | None = None, step_size: float = 1.0, reg: float = 1e-4,
                 gamma: float | None = None, kernel_bound: float = 2.0, horizon: int | None = None,
                 omega_init: float = 0.5, kom_iterations: int = 1000, kom_step: float | None = None,
                 kom_eps: float | None = None, kom_floor: float = 1e-12, kom_row_weight: str = "p1",
                 kom_gradient: str = "paper", kom_iterate: str = "last", kom_rank_tol: float = 1e-2,
                 evolving_update: str = "freeze", clock: str = "model", use_kom: bool = True,
                 use_ideal_kernel: bool = True, reuse_model: bool = True, random_state: int | None = None):
        self.n_old_features = check_int("n_old_features", n_old_features, 1)
        self.n_new_features = check_int("n_new_features", n_new_features, 1)
        self.sigma = check_positive("sigma", sigma)
        self.new_sigma = None if new_sigma is None else check_positive("new_sigma", new_sigma)
        self.step_size, self.reg = check_ogd_params(step_size, reg)
        self.gamma = None if gamma is None else check_nonnegative("gamma", gamma)
        self.kernel_bound = check_positive("kernel_bound", kernel_bound)
        self.horizon = None if horizon is None else check_int("horizon", horizon, 1)
        self.omega_init = check_real("omega_init", omega_init, 0.0, 1.0, low_open=True, high_open=True)
        self.kom_iterations = check_int("kom_iterations", kom_iterations, 0)
        self.kom_step = None if kom_step is None else check_nonnegative("kom_step", kom_step)
        self.kom_eps = None if kom_eps is None else check_positive("kom_eps", kom_eps)
        self.kom_floor = check_real("kom_floor", kom_floor, 0.0, 1.0 / self.n_new_features, high_open=True)
        self.kom_row_weight = check_choice("kom_row_weight", kom_row_weight, ("p1", "sqrt_p1"))
        self.kom_gradient = check_choice("kom_gradient", kom_gradient, ("paper", "exact"))
        self.kom_iterate = check_choice("kom_iterate", kom_iterate, ("last", "average"))
        self.kom_rank_tol = check_real("kom_rank_tol", kom_rank_tol, 0.0, 1.0, high_open=True)
        self.evolving_update = check_choice("evolving_update", evolving_update, ("freeze", "learn"))
        self.clock = check_choice("clock", clock, ("model", "global"))
        for flag in ("use_kom", "use_ideal_kernel", "reuse_model"):
            value = locals()[flag]
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{flag} must be True or False, got {value!r}")
            setattr(self, flag, bool(value))
        self.random_state = check_random_state(random_state)

    # ---- stages -----------------------------------------------------------------------------

    def _start_old(self, dim):
        self.u1_, self.b1_ = draw_fourier(self._rng, self.n_old_features, dim, self.sigma)
        self.w1_ = np.zeros(self.n_old_features)
        self.clock1_ = np.zeros(1, dtype=np.int64)
        self.scale1_ = 1.0 / math.sqrt(self.n_old_features)   # sqrt(p1), p1 = 1/d1

    def _start_new(self, dim):
        if self.dim_old_ is None:  # a stream without old features: an empty old model
            self._start_old(1)
        d2 = self.n_new_features
        width = self.sigma if self.new_sigma is None else self.new_sigma
        self.u2_, self.b2_ = draw_fourier(self._rng, d2, dim, width)
        self.ul_, self.bl_ = draw_fourier(self._rng, d2, dim, width)
        p1 = 1.0 / self.n_old_features
        row = p1 if self.kom_row_weight == "p1" else math.sqrt(p1)
        self.stats2_ = KOMStatistics(np.full(self.n_old_features, row), d2)
        self.statsl_ = KOMStatistics(np.ones(1), d2)
        self.p2_ = np.full(d2, 1.0 / d2)
        self.pl_ = np.full(d2, 1.0 / d2)
        self.w2_ = np.zeros(d2)
        self.wl_ = np.zeros(d2)
        self.clocks_ = np.zeros(2, dtype=np.int64)
        self.log_odds_ = np.array([math.log((1.0 - self.omega_init) / self.omega_init)])
        self.gamma_ = 0.0
        self.transition_ = {}

    def _old_repr(self, X1):
        Z = fourier_map(X1, self.u1_, self.b1_)
        Z *= self.scale1_
        return Z

    def _evolving(self, X1, X2, y):
        out = np.empty(X1.shape[0])
        for s in range(0, X1.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Phi1 = fourier_map(X1[s:e], self.u1_, self.b1_)
            self.stats2_.update(Phi1, fourier_map(X2[s:e], self.u2_, self.b2_))
            self.statsl_.update(y[s:e, None], fourier_map(X2[s:e], self.ul_, self.bl_))
            if self.evolving_update == "learn":
                self._learn_old(Phi1 * self.scale1_, y[s:e], s, out[s:e])
            else:
                out[s:e] = (Phi1 @ self.w1_) * self.scale1_
        return out

    def _decide_evolving(self, x1, x2):
        return self._decide_previous(x1)

    def _kom_density(self, problem: KOMProblem, te: int) -> tuple[np.ndarray, dict]:
        d2 = self.n_new_features
        eps = self.kom_eps if self.kom_eps is not None else 1.0 / (10.0 * d2)
        step = self.kom_step if self.kom_step is not None else default_kom_step(d2, te, self.kom_iterations, eps)
        res = mirror_descent(problem=problem, iterations=self.kom_iterations, step=step, floor=self.kom_floor,
                             gradient=self.kom_gradient, iterate=self.kom_iterate)
        p = res.p
        info = {"step": step, "rank": problem.rank, "exact_rank": problem.exact_rank,
                "entropy": float(-(p * np.log(np.maximum(p, 1e-300))).sum()),
                "objective_uniform": problem.objective(np.full(d2, 1.0 / d2)), "objective": problem.objective(p)}
        return p, info

    def _begin_current(self):
        with one_blas_thread():
            self._transition()

    def _transition(self):
        if self.dim_new_ is None:
            raise RuntimeError("_begin_current before the new space started")  # pragma: no cover
        d2 = self.n_new_features
        te = self.stats2_.count
        info = {"Te": te}
        problem2 = None
        if self.use_kom and te > 0:
            problem2 = KOMProblem(self.stats2_.M, self.stats2_.v, self.kom_rank_tol)
            self.p2_, info["p2"] = self._kom_density(problem2, te)
        if self.use_ideal_kernel and self.use_kom and te > 0:
            problemL = KOMProblem(self.statsl_.M, self.statsl_.v, 0.0)
            self.pl_, info["pl"] = self._kom_density(problemL, te)
        if self.reuse_model and self.use_kom and problem2 is not None:
            V, W = problem2.rotation(self.p2_)
            self.w2_ = W @ (V.T @ self.w1_)
            self.clocks_[0] = self.clock1_[0]
            info["reused_rank"] = V.shape[1]
        else:
            self.w2_ = np.zeros(d2)
            self.clocks_[0] = 0
        self.w2_initial_ = self.w2_.copy()   # the reused model, kept for inspection (Lemma 4.2)
        self.wl_ = np.zeros(d2)
        self.clocks_[1] = 0
        self.gamma_ = transition_gamma(self)
        info["gamma"] = self.gamma_
        self.transition_ = info
        # the statistics are no longer needed: free the d1 x d2 matrix
        self.stats2_ = KOMStatistics(np.zeros(0), 0)
        self.statsl_ = KOMStatistics(np.zeros(0), 0)

    def _mode(self):
        return 0 if self.use_ideal_kernel else 1

    def _current(self, X2, y):
        out = np.empty(X2.shape[0])
        s2, sl = np.sqrt(self.p2_), np.sqrt(self.pl_)
        mode = self._mode()
        if self.clock == "global":
            self.clocks_[:] = self.n_seen_
        for s in range(0, X2.shape[0], self.chunk_size):
            e = s + self.chunk_size
            Z2 = fourier_map(X2[s:e], self.u2_, self.b2_) * s2
            ZL = fourier_map(X2[s:e], self.ul_, self.bl_) * sl if mode == 0 else Z2
            ensemble_rounds(Z2, ZL, y[s:e], self.w2_, self.wl_, self.step_size, self.reg, self.clocks_,
                            self.log_odds_, self.gamma_, mode, out[s:e])
        return out

    def _decide_current(self, x2):
        x = x2[None, :]
        f2 = float((fourier_map(x, self.u2_, self.b2_)[0] * np.sqrt(self.p2_)) @ self.w2_)
        if self._mode() == 1:
            return f2
        fl = float((fourier_map(x, self.ul_, self.bl_)[0] * np.sqrt(self.pl_)) @ self.wl_)
        omega = omega_of(float(self.log_odds_[0]))
        return omega * f2 + (1.0 - omega) * fl

    def diagnostics(self):
        out = {"features_old": self.n_old_features, "features_new": self.n_new_features}
        if getattr(self, "transition_", None):
            out["transition"] = self.transition_
        if getattr(self, "log_odds_", None) is not None:
            out["omega"] = omega_of(float(self.log_odds_[0]))
        return out


__all__ = ["OPFES", "OldSpaceOGD", "draw_fourier", "fourier_map", "ogd_hinge_rounds", "ensemble_rounds", "theory_gamma",
           "omega_of"]
