"""SkeGD: sketched online gradient descent with incremental randomized sketching.

Zhang & Liao, ICML 2019, sections 3-4 and Algorithm 1; ALGORITHMS.md section 3.

Stage 1 (KOGD, t <= T0)
    f_t(x) = sum_{i in V} alpha_i kappa(x_i, x); on a round with l'(f_t(x_t), y_t) != 0 and
    |V| < B the example joins the buffer V with alpha = -eta l' (hinge: eta y_t) (Alg. 1 l.5-7).

Transition (round T0: the first round with a nonzero loss derivative once |V| = B)
    Draw the SJLT S_p (B x s_p, d blocks) and the s_m sampled buffer points x~ (fixed forever),
    Phi_pp = S_p^T K_B S_p, Phi_pm = S_p^T K_B S_m (:class:`okl.linalg.IncrementalSketch`);
    rank-k SVD Phi_pp ~ V Sigma V^T; Q = Phi_pm^+ V Sigma^{1/2} (s_m x k);
    phi(x) = Q^T kappa_m(x) with kappa_m(x) = [kappa(x, x~_j)]_j (SkeGD Eq. 3-4).
    Re-anchor w = f_t(x_t) phi(x_t) / ||phi(x_t)||^2 (the KOGD prediction at x_t is kept, SkeGD 4)
    and take the gradient step below with (x_t, y_t).

Stage 2 (t > T0), every round
    f_t = w^T phi(x_t). On an *update round*: fold x_t into the sketch (rank-1 modifications of
    SkeGD 3), recompute the rank-k SVD and Q, compute phi_{t+1}(x_t) and re-anchor
    w_bar = f_t phi_{t+1}(x_t) / ||phi_{t+1}(x_t)||^2 (Alg. 1 l.14-18); otherwise w_bar = w.
    Then w <- w_bar - eta (l'(w_bar^T phi, y_t) phi + lambda w_bar)  (Eq. 6, Alg. 1 l.23).
    (If phi = 0 the re-anchored weight is 0, the pseudo-inverse of a zero vector.)

Paper vs code (ALGORITHMS.md 3 and 10) -- each difference is an option, paper reading by default:

========================  ====================================  ==================================
option                    paper (default)                       authors' codes
========================  ====================================  ==================================
``grow_sketch``           True: update points join the sketch   False: FORKS C++ keeps S_p and psi
                          list (nu = B + floor((T-B)/rho))      on the B buffer points
``update_counter``        "rounds": update when t mod rho = 1   "margin_errors": R and C++ count
                          (t = global 1-based round, stage 2    rounds with l' != 0 from round 1
                          only; rho = 1 updates every round)    (stage 1 and T0 included); update
                                                                when count mod rho = 1 on a stage-2
                                                                such round (rho = 1: never)
``reanchor``              True: re-anchor w at update rounds    False: FORKS C++ keeps w (the step
                                                                uses l'(f_t, y_t) with the new phi)
``svd``                   "exact" (LAPACK, double; the paper    "randomized": Halko et al., as the
                          asks for a rank-k SVD)                paper's complexity claims assume
``transition_rank``       "k"                                   "full": the R code keeps all s_p
                                                                components until the first update
``fold_transition``       False: the transition sketch covers   True: the R code folds x_T0 in
                          the B buffered points                 with one incremental update
``singular_vectors``      "left" (R code; Phi_pp is PSD when    "right" (C++), differs only when
                          the list grows, so left = right)      Phi_pp is indefinite
========================  ====================================  ==================================

Not reproduced: the C++ float32 Jacobi SVD / absolute pinv cut-off (ALGORITHMS.md 1.3; it
makes phi a noise-amplified map); the R code's wait when sum(kappa_m(x_t)) <= 1e-8.

Hyperparameters (paper 6.3 defaults): B = 100 (200 when T > 10,000), s_p = 3B/4,
s_m = 0.2 s_p, d = 4, k = 0.1B, rho = 0.3T, eta tuned in 10^[-5, 0] (we default to 0.2 as the
FORKS code and our KOGD stage; the R code uses 0.1/sqrt(T)), lambda tuned in 10^[-4, 1]
(default 0: the codes have no lambda).

Per-round cost: stage 1 O(B D); stage 2 regular round O(s_m D + s_m k) (kernel row to the s_m
sampled points, computed a chunk of rounds at a time between update rounds, then an O(k)
compiled step); update round O(nu D + nu s_p + s_p^2 s_m + s_p^3) (psi, a = S_p^T psi, the
rank-1 modifications, the SVD of Phi_pp and pinv(Phi_pm)); transition O(B^2 D + B^2 s_p + s_p^3).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import jit, linear_round, loss_derivative, ogd_step, sub_scaled
from okl.runtime.hyperparameters import ETA, HORIZON, KERNEL_LEARNER, LR, Hyper, accept
from okl.features.sketched import sketched_map
from okl.learners._sketched import DEFAULT_HORIZON, DEFAULT_THETA, SKETCH_SIZES, SKETCH_STATE_ATTRS, SketchedLearner
from okl.components.steps.update_rounds import update_round_due
from okl.runtime.base import Arr, register
from okl.learners.nogd import NOGD, STAGE2_STEPS
from okl.components.steps.adagrad import adagrad_step
from okl.linalg.sketch import IncrementalSketch
from okl.linalg.svd import SVD_METHODS, rank_k_svd

#: update cycle used when neither ``rho`` nor ``horizon`` is given (0.3 x 10,000, the paper's
#: boundary between small and large data sets)
DEFAULT_RHO_WITHOUT_HORIZON = max(1, int(DEFAULT_THETA * DEFAULT_HORIZON))  # = 3000


def _check_reanchor(reanchor):
    """SkeGD's ``reanchor``: "transfer", True or False."""
    if isinstance(reanchor, str):
        if reanchor != "transfer":
            raise ValueError(f"reanchor must be 'transfer', True or False, got {reanchor!r}")
        return reanchor
    return bool(reanchor)

UPDATE_COUNTERS = ("rounds", "margin_errors")


@jit
def count_active_rounds(lkind, decisions, Y, end):
    """Number of rows r < end with a nonzero loss derivative at decisions[r]."""
    c = 0
    for r in range(end):
        if loss_derivative(lkind, decisions[r], Y[r]) != 0.0:
            c += 1
    return c


@jit
def sketched_rounds(Z, Y, w, G, step, shrink, adagrad, lkind, out, round0, counter, rho, count_margin_errors):
    """Stage-2 rounds on fixed features Z until the next update round.

    Row i: f = w.z (out[i]); if row i is an update round, return (i, counter) with nothing learned
    (the caller updates the sketch and takes the step); else w <- w shrink, then the step:
    ``adagrad`` false: w <- w - step l'(f, y) z (OGD, ``step`` = eta); true: diagonal AdaGrad with
    rate ``step`` (accumulators G). Update rounds: ``count_margin_errors`` false:
    (round0 + i) % rho == 0 (0-based global round); true: ``counter`` counts rows with l' != 0 and
    an update fires when counter % rho == 1. Returns (n, counter) when every row was processed.
    """
    n = Z.shape[0]
    for i in range(n):
        z = Z[i]
        g = linear_round(w, z, Y[i], lkind, out, i)
        due, counter = update_round_due(g, counter, round0 + i, rho, count_margin_errors)
        if due:
            return i, counter
        if shrink != 1.0:
            for j in range(w.shape[0]):
                w[j] *= shrink
        if g != 0.0:
            if adagrad:
                adagrad_step(z, g, w, G, step)
            else:
                sub_scaled(w, ogd_step(step * g, z, lkind), z)
    return n, counter


@jit
def sketched_ogd_rounds(Z, Y, w, eta, lam, lkind, out, round0, counter, rho, count_margin_errors):
    """:func:`sketched_rounds` with the OGD step w <- w (1 - eta lam) - eta l'(f, y) z."""
    return sketched_rounds(Z, Y, w, w, eta, 1.0 - eta * lam, False, lkind, out, round0, counter, rho,
                           count_margin_errors)


@jit
def sketched_adagrad_rounds(Z, Y, w, G, lr, shrink, lkind, out, round0, counter, rho, count_margin_errors):
    """:func:`sketched_rounds` with a diagonal AdaGrad step (``shrink`` = 1 - eta lam)."""
    return sketched_rounds(Z, Y, w, G, lr, shrink, True, lkind, out, round0, counter, rho, count_margin_errors)


@register("skegd")
class SkeGD(SketchedLearner):
    """Sketched online gradient descent (SkeGD, Zhang & Liao 2019).

    Parameters
    ----------
    budget : int, default 100
        B, buffer size of the KOGD stage (paper: 100 if T <= 10,000 else 200).
    s_p : int or None, default None (= B; paper 3B/4, see :mod:`okl.learners._sketched`)
        SJLT sketch size, 1 <= s_p.
    s_m : int or None, default None (= min(B, s_p); paper max(1, s_p // 5), tau = 0.2)
        Number of sampled buffer points (the feature map's landmarks), 1 <= s_m <= B.
    d : int or None, default None (= min(4, s_p))
        SJLT blocks, 1 <= d <= s_p.
    k : int or None, default None (= min(B, s_m, s_p); paper min(max(1, B // 10), s_m))
        Rank of the SVD of Phi_pp (feature dimension), 1 <= k <= min(s_p, s_m).
    rho : int or None, default None (= max(1, floor(0.3 horizon)))
        Update cycle. With ``horizon`` None as well, rho = 3000.
    horizon : int or None
        Expected stream length T (the harness passes T); only used for the default rho.
    eta : float, default 0.2
        Step size of stage 1 (KOGD) and of stage 2 when ``stage2="ogd"``.
    stage2 : {"adagrad", "ogd"} or None, default None
        None: "adagrad" for classification losses, "ogd" for the squared loss (see ``stage2_``).
        Stage-2 step: diagonal AdaGrad with rate ``lr`` (library default for classification
        losses, as NOGD: the sketched coordinates have the spread of scales of the kernel
        spectrum), or the paper's OGD (Eq. 6) with ``eta`` (the default for the squared loss).
    lr : float, default 1.0
        AdaGrad rate (a coordinate moves by at most lr per round, the unit of the hinge margin).
    lam : float, default 0.0
        The paper's regularizer lambda in L_t(w) = l_t(w) + lambda/2 ||w||^2 (stage 2).
    loss : str or Loss, default "hinge"
    kernel : Kernel or None, default None (a Gaussian whose width is chosen from the first rows)
    reanchor : "transfer", True or False, default "transfer"
        At update rounds: "transfer" (library default) maps the weights to the new feature
        coordinates, w_new = P w_old with P the least-squares fit of the old features by the new
        ones on the fixed landmarks (``_transfer_matrix``), which keeps the predictor's values on
        the landmarks (exactly when the new map has rank s_m, as with the default k = s_m = B); True is
        the paper's re-anchoring w_bar = f_t phi / ||phi||^2, which keeps only f_t(x_t) and throws
        the learned weights away every rho rounds (ijcnn1, library defaults otherwise: 9.6 %
        with True against 6.6 % without any update); False keeps w as is (FORKS C++).
    grow_sketch, update_counter, svd, transition_rank, fold_transition, singular_vectors
        Paper/code variants, see the module docstring (defaults: True, "rounds", "exact",
        "k", False, "left").
    [[center_targets, scale]]
    random_state : int or None
        Seeds the SJLT, the sampled points and (``svd="randomized"``) the SVD seeds.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = SkeGD(budget=100, horizon=1000, kernel=okl.RBF(sigma=2), random_state=0)
    >>> trace = m.run(X, y)
    >>> m.diagnostics()["stage"], m.diagnostics()["features"]
    (2, 100)
    """

    _state_attrs = ("SV_", "alpha_", "m_", "Q_", "w_", "G_", "landmarks_", "transition_round_", "counter_",
                    "update_rounds_") + SKETCH_STATE_ATTRS

    hyperparameters = (*SKETCH_SIZES, HORIZON, ETA,
                       Hyper("lam", "real", "The weights' regulariser: w shrinks by 1 - eta lam a round.", low=0.0,
                             symbol="lambda"),
                       Hyper("stage2", "choice", "Stage 2's step.", choices=STAGE2_STEPS, optional=True,
                             none_means="AdaGrad in classification, OGD in regression"),
                       LR, Hyper("grow_sketch", "bool", "Grow the sketch with the stream (the code) or not."),
                       Hyper("update_counter", "choice", "What rho counts.", choices=UPDATE_COUNTERS),
                       Hyper("reanchor", "any", "At an update round: 'transfer' the weights, True re-anchor, "
                             "False keep.", custom=_check_reanchor),
                       Hyper("svd", "choice", "The SVD of the update rounds.", choices=tuple(SVD_METHODS)),
                       Hyper("transition_rank", "choice", "The map's rank at the transition.", choices=("k", "full")),
                       Hyper("fold_transition", "bool", "Fold the transition's map into the first update round."),
                       Hyper("singular_vectors", "choice", "Which singular vectors map the features.",
                             choices=("left", "right")),
                       *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100, s_p: int | None = None, s_m: int | None = None,
                 d: int | None = None, k: int | None = None, rho: int | None = None,
                 horizon: int | None = None, eta: float = 0.2, lam: float = 0.0,
                 stage2: str | None = None, lr: float = 1.0, loss="hinge",
                 kernel=None, grow_sketch: bool = True, update_counter: str = "rounds",
                 reanchor="transfer", svd: str = "exact", transition_rank: str = "k",
                 fold_transition: bool = False, singular_vectors: str = "left",
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        self._check_sizes(budget, s_p, s_m, d, k, rho, d_optional=True)
        if self.eta * self.lam >= 1.0:
            raise ValueError(f"eta * lam must be < 1 so the weights shrink, got {self.eta * self.lam}")
        if self.transition_rank == "full" and self.reanchor is not True:
            raise ValueError("transition_rank='full' needs reanchor=True (the feature dimension "
                             "changes from s_p to k at the first update round)")

    # ---- resolved sizes (s_p_, s_m_, k_, rho_: SketchedLearner) --------------------------------

    @property
    def d_(self) -> int:
        return self.d if self.d is not None else min(4, self.s_p_)

    # ---- maps -------------------------------------------------------------------------------

    def _refresh_map(self, sk: IncrementalSketch, rank: int) -> None:
        U, sig, Vt = rank_k_svd(sk.Phi_pp, rank, self.svd, self._rng, symmetric=True)
        V = U if self.singular_vectors == "left" else Vt.T
        self.Q_ = sketched_map(sk.Phi_pm, V, sig)
        self.landmarks_ = sk.landmarks

    @classmethod
    def paper_params(cls, budget):
        """SkeGD's sizes s_p = 3B/4, s_m = s_p/5, k = B/10, OGD in stage 2, re-anchoring at updates."""
        sp = max(1, 3 * budget // 4)
        return {**super().paper_params(budget), "s_p": sp, "s_m": min(budget, max(1, sp // 5)), "k": min(max(1, budget // 10), max(1, sp // 5)),
                "stage2": "ogd", "reanchor": True}

    #: the stage-2 step in use: NOGD's rule (:attr:`okl.learners.nogd.NOGD.stage2_`)
    stage2_ = NOGD.stage2_

    def _state_spec(self):
        k_high = max(self.k_, self.s_p_) if self.transition_rank == "full" else self.k_
        return self._sketch_spec(k_high, G_=Arr(("k",), low=0.0, optional=True))

    def _start(self, dim):
        super()._start(dim)
        self.G_ = None

    def _anchored_step(self, x, y, f, anchor):
        """w_bar (re-anchored to f at x if ``anchor``), then w <- w_bar (1 - eta lam) - step."""
        phi = np.ascontiguousarray(self._features(x[None, :])[0])
        if anchor:
            w_bar = self._anchored(f, phi)
            g = self.loss_.derivative(float(w_bar @ phi), y)
        else:
            w_bar = self.w_
            g = self.loss_.derivative(f, y)
        if self.G_ is None or self.G_.shape != w_bar.shape:
            self.G_ = np.zeros_like(w_bar)
        if self.stage2_ == "ogd":
            step = ogd_step(self.eta * g, phi, self.loss_.kind)
            self.w_ = w_bar * (1.0 - self.eta * self.lam) - step * phi
        else:
            self.w_ = np.ascontiguousarray(w_bar * (1.0 - self.eta * self.lam))
            if g != 0.0:
                adagrad_step(phi, g, self.w_, self.G_, self.lr)

    # ---- rounds -----------------------------------------------------------------------------

    def _transition(self, x, y, f, round_index):
        sk = self._new_sketch()
        if self.fold_transition:
            sk.update(x)
        self._store_sketch(sk)
        self._refresh_map(sk, self.s_p_ if self.transition_rank == "full" else self.k_)
        self.transition_round_ = int(round_index)
        self._anchored_step(x, y, f, True)

    def _update_round(self, x, y, f):
        sk = self._sketch_object()
        sk.update(x)
        self._store_sketch(sk)
        Q_old = self.Q_
        self._refresh_map(sk, self.k_)
        if self.reanchor == "transfer":
            self.w_ = np.ascontiguousarray(self._transfer_matrix(Q_old) @ self.w_)
        self._anchored_step(x, y, f, self.reanchor is True)
        self.update_rounds_ += 1

    def _count_stage1(self, decisions, y, end):
        if self.update_counter == "margin_errors":
            self.counter_ += int(count_active_rounds(self.loss_.kind, decisions, y, end))

    def compiled_plan(self):
        if self.Q_ is None and self.update_counter == "margin_errors":
            return None  # _count_stage1 counts the stage-1 rounds
        return super().compiled_plan()

    def _fast_step(self):
        return dict(step=self.stage2_, A="G_", eta=self.eta, lr=self.lr, shrink=1.0 - self.eta * self.lam)

    def _sketched_rounds(self, Z, Y, out, round0):
        if self.stage2_ == "adagrad":
            return sketched_adagrad_rounds(Z, Y, self.w_, self.G_, self.lr, 1.0 - self.eta * self.lam,
                                           self.events.loss(self).kind, out, round0, self.counter_, self.rho_,
                                           self.update_counter == "margin_errors")
        return sketched_ogd_rounds(Z, Y, self.w_, self.eta, self.lam, self.events.loss(self).kind, out, round0,
                                   self.counter_, self.rho_, self.update_counter == "margin_errors")
