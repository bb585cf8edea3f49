"""Nystrom online gradient descent (NOGD; Lu, Hoi, Wang, Zhao & Liu, JMLR 2016).

ALGORITHMS.md section 6. Two stages:

1. KOGD (alpha_t = -eta l'(f, y) on rounds with a nonzero loss derivative) until B support
   vectors are stored.
2. At the first such round after that (the *transition*): K_B = kernel matrix of the B support
   vectors, top-k eigenpairs K_B ~ V_k D_k V_k^T, the map z(x) = D_k^{-1/2} V_k^T kappa_B(x) with
   kappa_B(x) = [kappa(x_i, x)]_{i <= B}, and w = D_k^{1/2} V_k^T alpha, which keeps the
   predictions of the expansion on the top-k eigenspace. Then OGD w <- w - eta l'(f, y) z(x),
   starting with the transition round itself (its gradient taken at the KOGD prediction).

Stage-2 step (``stage2``):

``"adagrad"`` (default for classification losses; the squared loss uses "ogd", see
    ``NOGD.stage2_``): diagonal AdaGrad (Duchi, Hazan & Singer 2011) on the Nystrom
    coordinates, G_j += g_j^2, w_j -= lr g_j / sqrt(G_j) with g = l'(f, y) z(x). The coordinates
    of z have very different scales (on the landmarks z_j = sqrt(d_j) v_j, so E z_j^2 ~ d_j / B
    follows the kernel spectrum), and a single OGD step learns the low-eigenvalue directions
    d_1 / d_j times slower; AdaGrad's per-coordinate step is invariant to that scale and needs no
    tuning to the data's spectrum. ``lr`` = 1 is the unit of the hinge margin: a coordinate
    moves by at most lr per round.
``"ogd"`` (the paper, Lu et al. 2016): w <- w - eta l'(f, y) z(x), eta shared with stage 1.

Defaults: B = 100, k = B (the paper's Nystrom map keeps the top-k eigenpairs, k <= B; with k = B
the map is exact Nystrom on the budget and the transition keeps the KOGD predictions exactly;
the SkeGD/FORKS tables used k = 0.1 B and LSOKL 0.2 B, reachable with ``k=``), eta = 0.2 for
stage 1 (KOGD), stage 2 AdaGrad with lr = 1 for classification losses and OGD with eta for the
squared loss (the paper's OGD with eta for every loss: ``stage2="ogd"``).
Per-round cost: O(B d + B k) (kernel row and projection, computed a block at a time) plus O(k)
compiled update; the transition costs O(B^2 d + B^3).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from okl._compiled import (class_steps, dot, jit, kernel_features, kernel_features_rows, linear_round, loss_derivative,
                           ogd_step, sub_scaled)
from okl._validation import MAX_ABS_FEATURE, check_int
from okl.linalg.svd import PINV_RTOL
from okl.runtime.base import Arr, Learner, Num, StateSpec, event_state, register
from okl.runtime.state import MAX_CLASSES
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, LR, Hyper, accept
from okl.runtime.events import EventWork
from okl.learners.fogd import ogd_rounds
from okl.learners.kogd import DONE, expansion_plan, expansion_rounds
from okl.components.maps.expansion import expansion_decision
from okl.components.steps.adagrad import adagrad_step


STAGE2_STEPS = ("adagrad", "ogd")


@jit
def adagrad_rounds(Z, Y, w, G, lr, shrink, lkind, out):
    """Test-then-train diagonal AdaGrad on precomputed features (``shrink`` multiplies w every
    round before the step; 1 = no decay)."""
    for i in range(Z.shape[0]):
        z = Z[i]
        g = linear_round(w, z, Y[i], lkind, out, i)
        if shrink != 1.0:
            for j in range(w.shape[0]):
                w[j] *= shrink
        if g != 0.0:
            adagrad_step(z, g, w, G, lr)


@jit
def nogd_step(z, f, y, w, G, lr, eta, ogd, lkind):
    """The stage-2 step of a round with features z and decision f = w.z: the step of
    :func:`adagrad_rounds` (``ogd`` False) or :func:`okl.learners.fogd.ogd_rounds` (True)."""
    g = loss_derivative(lkind, f, y)
    if g != 0.0:
        if ogd:
            sub_scaled(w, ogd_step(eta * g, z, lkind), z)
        else:
            adagrad_step(z, g, w, G, lr)


@jit
def nogd_event_learn(z, y, w, G, lr, eta, ogd, lkind):
    """learn_one after predict_one: the round on the cached features z (f = w.z as
    :func:`okl._compiled.linear_round` computes it); returns f."""
    f = dot(w, z)
    nogd_step(z, f, y, w, G, lr, eta, ogd, lkind)
    return f


@jit
def nogd_event_round(kind, a, b, c, SVT, MT, w, G, lr, eta, ogd, lkind, x, bound, y, kb, z):
    """One stage-2 round on one row, features included (the per-event path of learn_one without
    a predict_one before it): :func:`okl._compiled.kernel_features`, then :func:`nogd_step`.
    Returns (ok, f)."""
    ok, f = kernel_features(kind, a, b, c, SVT, SVT.shape[1], MT, w, x, bound, kb, z)
    if not ok:
        return False, 0.0
    nogd_step(z, f, y, w, G, lr, eta, ogd, lkind)
    return True, f


def top_eigen_map(K: np.ndarray, k: int, rtol: float = PINV_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs of the PSD matrix K as (M, root): M = D^{-1/2} V^T (k' x B) and
    root = D^{1/2} V^T (k' x B); eigenvalues at or below rtol * largest are dropped (k' <= k).

    The cut-off is that of every pseudo-inverse in okl (:data:`okl.linalg.svd.PINV_RTOL` =
    sqrt(eps) ~ 1.5e-8, MASS::ginv's). A kept direction's coordinate z_j = v_j^T kappa_B(x) /
    sqrt(d_j) carries the rounding of the kernel row (~ eps B lambda_max) amplified by 1/d_j
    relative to its size, so below that cut-off z_j is rounding rather than signal (~ 3e-6 relative
    at B = 200), and a wide kernel over 200 landmarks has many such eigenvalues: with sigma = 1 on
    codrna (B = 200, first 20,000 rows), 1e-10 kept all 200 and per-event decisions drifted 8.6e-10
    from run()'s; 1.5e-8 keeps 153, makes 4.23 % mistakes (4.24 % before) and drifts 3.1e-11."""
    B = K.shape[0]
    k = min(k, B)
    vals, vecs = scipy.linalg.eigh(K, subset_by_index=[B - k, B - 1])
    vals, vecs = vals[::-1], vecs[:, ::-1]
    keep = vals > rtol * max(vals[0], 0.0)
    vals, vecs = vals[keep], vecs[:, keep]
    return vecs.T / np.sqrt(vals)[:, None], vecs.T * np.sqrt(vals)[:, None]


@register("nogd")
class NOGD(Learner):
    """Nystrom online gradient descent.

    Parameters
    ----------
    budget : int, default 100
        Number B of support vectors kept in stage 1 (Nystrom landmarks).
    k : int or None, default None (= B)
        Number of eigen-directions kept at the transition, 1 <= k <= B (the SkeGD/FORKS tables:
        B // 10).
    eta : float, default 0.2
        Step of stage 1 (KOGD) and of stage 2 when ``stage2="ogd"``.
    stage2 : {"adagrad", "ogd"} or None, default None
        None: "adagrad" for classification losses, "ogd" for the squared loss (see ``stage2_``).
        Stage-2 step, see the module docstring ("ogd" is the paper's).
    lr : float, default 1.0
        AdaGrad rate (``stage2="adagrad"``).
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (NOGD is deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = NOGD(budget=100, kernel=okl.RBF(sigma=8), random_state=0)
    >>> trace = m.run(X, y)
    >>> trace.n_rounds, m.diagnostics()["stage"]
    (1000, 2)
    """

    _state_attrs = ("SV_", "alpha_", "m_", "M_", "w_", "G_", "transition_round_", "n_outputs_")
    _output_attrs = {"alpha_": -1.0, "w_": -1.0, "G_": 1.0}

    hyperparameters = (BUDGET, Hyper("k", "int", "Rank of the Nystrom map (at most budget).", low=1, optional=True,
                                     none_means="the budget", relation=True),
                       ETA, Hyper("stage2", "choice", "Stage 2's step.", choices=tuple(STAGE2_STEPS), optional=True,
                                  none_means="AdaGrad in classification, OGD in regression"),
                       LR, *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, k: int | None = None, eta: float = 0.2,
                 stage2: str | None = None, lr: float = 1.0, loss="hinge", kernel=None,
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        self.k = None if k is None else check_int("k", k, 1, self.budget)

    @property
    def k_(self) -> int:
        return self.k if self.k is not None else self.budget

    @property
    def stage2_(self) -> str:
        """The stage-2 step in use. Default: diagonal AdaGrad for the classification losses (their
        gradient is bounded, and AdaGrad's per-coordinate step absorbs the spread of the Nystrom
        coordinates' scales); OGD with ``eta`` for the squared loss, whose gradient 2 (f - y) z is
        proportional to the residual: with ||z||^2 <= kappa(x, x) = 1, eta = 0.2 < 1 / L = 1/2 is a
        stable LMS step, while AdaGrad's first steps have size ``lr`` per coordinate whatever the
        residual, and overshoot targets on a [0, 1] scale (measured, squared loss, library
        defaults: cpusmall 0.0145 AdaGrad vs 0.0055 OGD, cadata 0.0233 vs 0.0219)."""
        if self.stage2 is not None:
            return self.stage2
        return "ogd" if self.loss_.task == "regression" else "adagrad"

    @classmethod
    def paper_params(cls, budget):
        """The SkeGD/FORKS tables' NOGD: rank k = B / 10 and OGD with eta in stage 2."""
        return {**super().paper_params(budget), "k": max(1, budget // 10), "stage2": "ogd"}

    def _state_spec(self):
        B, last = self.budget, self.n_seen_ - 1
        stage2 = ("M_", "w_", "G_", "transition_round_")
        return StateSpec(sizes={"k": (0, self.k_)}, groups=(stage2,), fields={
            "SV_": Arr((B, "dim")), "alpha_": Arr(self.heads.out_shape(self, B)), "m_": Num(int, 0, (B, "n_seen")),
            "M_": Arr(("k", B), optional=True), "w_": Arr(self.heads.out_shape(self, "k"), optional=True),
            "G_": Arr(self.heads.out_shape(self, "k"), low=0.0, optional=True),
            "transition_round_": Num(int, 0, last, optional=True), "n_outputs_": Num(int, 0, MAX_CLASSES)})

    _rows_per_budget = 2  # (the support vectors, then the landmarks' copy in auto's engine)

    def _start(self, dim):
        self.SV_ = np.zeros((self.budget, dim))
        self.alpha_ = np.zeros(self.budget)
        self.m_ = 0
        self.M_ = None
        self.w_ = None
        self.G_ = None
        self.transition_round_ = None

    def _features(self, X):
        return self.kernel_(X, self.SV_) @ self.M_.T

    def _decision(self, x):
        if self.M_ is None:
            return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)
        return float(self._features(x[None, :])[0] @ self.w_)

    # ---- per-event path (Learner.predict_one / learn_one) ------------------------------------

    def _event_plan(self, ev) -> EventWork:
        """The stage-2 map's per-event work space, rebuilt when the map, the weights, the kernel,
        the loss or the stage-2 step changed."""
        w = ev.buf
        if w is None or w.M is not self.M_ or w.SV is not self.SV_ or w.weights is not self.w_ \
                or w.G is not self.G_ or w.kernel is not self.kernel_ or w.loss is not self.loss \
                or w.stage2 is not self.stage2:
            lo = self.events.loss(self, ev)
            w = ev.buf = EventWork(
                M=self.M_, SV=self.SV_, weights=self.w_, G=self.G_, kernel=self.kernel_, loss=self.loss,
                stage2=self.stage2, MT=np.ascontiguousarray(self.M_.T), SVT=np.ascontiguousarray(self.SV_.T),
                kb=np.empty(self.budget), KB=np.empty((4, self.budget)), z=np.empty(self.M_.shape[0]),
                spec=self.kernel_.spec(), lkind=lo.kind,
                ogd=self.stage2 == "ogd" or (self.stage2 is None and lo.task == "regression"))  # stage2_
        return w

    def _event_heavy(self):
        return self.M_ is None and self.m_ >= self.budget  # the transition may come

    def _event_features(self, x, ev):
        if self.M_ is None:
            return None
        w = self._event_plan(ev)
        kind, a, b, c = w.spec
        ok, f = kernel_features(kind, a, b, c, w.SVT, self.budget, w.MT, self.w_, x, MAX_ABS_FEATURE, w.kb, w.z)
        if not ok:
            self.events.check_values(self, x)
        return f, w.z

    def _event_learn(self, x, y, z, ev):
        if self.M_ is None:
            return None
        w = self._event_plan(ev)
        if z is not None:
            return nogd_event_learn(z, y, self.w_, self.G_, self.lr, self.eta, w.ogd, w.lkind)
        kind, a, b, c = w.spec
        ok, f = nogd_event_round(kind, a, b, c, w.SVT, w.MT, self.w_, self.G_, self.lr, self.eta, w.ogd, w.lkind,
                                 x, MAX_ABS_FEATURE, y, w.kb, np.empty(w.z.shape[0]))
        if not ok:
            self.events.check_values(self, x)
        return f

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def compiled_plan(self):
        if self.M_ is None:  # stage 1: the kernel expansion until the transition
            return expansion_plan(self)
        return Plan("kernel", self.stage2_, LT=self.SV_.T, P=self.M_.T, kernel=self.kernel_.spec(), w="w_",
                    A="G_", eta=self.eta, lr=self.lr)

    def _event_block(self, X, y, out):
        if self.M_ is None:
            return 0
        w = self._event_plan(event_state(self))
        Z = np.empty((X.shape[0], w.MT.shape[1]))
        r = kernel_features_rows(*w.spec, w.SVT, self.budget, w.MT, X, MAX_ABS_FEATURE, w.KB, Z)
        if r:
            if w.ogd:
                ogd_rounds(Z[:r], y[:r], self.w_, self.eta, w.lkind, out[:r])
            else:
                adagrad_rounds(Z[:r], y[:r], self.w_, self.G_, self.lr, 1.0, w.lkind, out[:r])
        return r

    def _eigen_map(self) -> tuple[np.ndarray, np.ndarray]:
        """The transition's (M, root) of :func:`top_eigen_map` on the support vectors' kernel
        matrix: a function of (kernel, k, support vectors) only, so members whose stage 1 kept the
        same support vectors can share it (auto's NOGD pair at one width)."""
        return top_eigen_map(self.kernel_(self.SV_, self.SV_), self.k_)

    def transition_work(self):
        # (the eigen-map depends on the kernel, k and the support vectors only)
        return (self.kernel_.spec(), self.k_, self.SV_[:self.m_].tobytes()), self._eigen_map

    def _transition(self, x, y, f, round_index, work=None):
        M, root = self._eigen_map() if work is None else (work[0].copy(), work[1])
        self.M_, self.w_ = M, root @ self.alpha_ if not self.n_outputs_ else self.alpha_ @ root.T
        self.transition_round_ = round_index
        self.G_ = np.zeros_like(self.w_)
        z = np.ascontiguousarray(self._features(x[None, :])[0])
        if self.n_outputs_:  # K outputs (auto's engine): each takes its own step
            g = np.empty(self.n_outputs_)
            class_steps(self.loss_.kind, np.asarray(f, dtype=float), int(y), 1.0, g)
            for o in range(self.n_outputs_):
                if self.stage2_ == "ogd":
                    sub_scaled(self.w_[o], ogd_step(self.eta * g[o], z, self.loss_.kind), z)
                elif g[o] != 0.0:
                    adagrad_step(z, g[o], self.w_[o], self.G_[o], self.lr)
            return
        g = self.loss_.derivative(f, y)
        if self.stage2_ == "ogd":
            sub_scaled(self.w_, ogd_step(self.eta * g, z, self.loss_.kind), z)
        elif g != 0.0:
            adagrad_step(z, g, self.w_, self.G_, self.lr)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        i = 0
        if self.M_ is None:
            status, i, self.m_ = expansion_rounds(*self.kernel_.spec(), self.loss_.kind, self.eta, 0.0,
                                                  X, y, out, 0, self.SV_, self.alpha_, self.m_,
                                                  self.budget, True)
            if status == DONE:
                return out
            self._transition(X[i], y[i], out[i], self.n_seen_ + i)
            i += 1
        for s in range(i, X.shape[0], self.chunk_size):
            e = min(s + self.chunk_size, X.shape[0])
            Z = self._features(X[s:e])
            if self.stage2_ == "ogd":
                ogd_rounds(Z, y[s:e], self.w_, self.eta, self.loss_.kind, out[s:e])
            else:
                adagrad_rounds(Z, y[s:e], self.w_, self.G_, self.lr, 1.0, self.loss_.kind, out[s:e])
        return out

    def _first_counted_round(self):
        return None if self.transition_round_ is None else self.transition_round_ + 1

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "stage": 1 if self.M_ is None else 2,
                "transition_round": self.transition_round_,
                "features": 0 if self.M_ is None else int(self.M_.shape[0])}
