"""What SkeGD and FORKS share: a KOGD buffer stage, then a feature map from an incremental sketch.

Both learners (:mod:`okl.learners.skegd`, :mod:`okl.learners.forks`; ALGORITHMS.md sections 3
and 4) run the same two-stage protocol and keep the same sketch state:

Stage 1 (KOGD, :func:`okl.learners.kogd.expansion_rounds`) until the first round with a nonzero
loss derivative once the buffer holds B points (the transition round T0).

Transition: the buffer is sketched (:class:`okl.linalg.IncrementalSketch`, SJLT S_p with s_p
columns in d blocks, s_m sampled landmarks); the subclass builds Q (s_m x k) so that
phi(x) = Q^T kappa_m(x), kappa_m(x) = [kappa(x, x~_j)]_j, and initialises its weights.

Stage 2: f_t = w^T phi(x_t); the features of a block of rows are computed with one matrix
product, up to the next possible *update round* (the map changes there), and a compiled loop of
the subclass runs the sequential steps. Update rounds come every rho rounds: with
``update_counter="rounds"`` at 0-based global round r with r mod rho = 0 (1-based t mod rho = 1);
with ``"margin_errors"`` a counter of rounds with l' != 0 fires when count mod rho = 1
(:func:`update_round_due`). The subclass folds x_t into the sketch and rebuilds the map there.

Shared sizes (library defaults): s_p = B, s_m = B, k = B, rho = max(1, floor(theta horizon))
with theta = 0.3 unless the subclass says otherwise, and horizon 10,000 when it is None.

Why not the papers' s_p = 3B/4, s_m = 0.2 s_p, k = 0.1 B (still reachable: pass ``s_p=3 * B // 4,
s_m=max(1, 3 * B // 20), k=max(1, B // 10)``)? The map phi(x) = Q^T kappa_m(x) has rank at most
k <= s_m, so with the papers' sizes (B = 100: 15 landmarks, rank 10) the learner is linear in 10
Nystrom-like features; on ijcnn1 no step rule (OGD, AdaGrad, either ONS form) gets below the
majority rate on such a map, while 100 features reach ~6 %. Raising s_m alone does not help:
Q = pinv(Phi_pm) V Sigma^{1/2} is a sketched least-squares solution that needs the sketch to
embed the s_m-dimensional span of the landmark columns (s_p >~ s_m); with s_p = 75, s_m = 50 the
kernel approximation error ||Phi Phi^T - K||_F / ||K||_F is 1.7-12 against 0.1-0.4 for Nystrom on
the same landmarks. So the defaults keep every buffer point as a landmark (s_m = B), a sketch
as wide as the buffer (s_p = B; with d >= 2 blocks, so that S_p has full rank, a Count Sketch
with d = 1 hits only ~(1 - 1/e) s_p columns) and the full rank k = B ("rank k = budget").
At the transition the map is then exact Nystrom on the buffer; the incremental sketch still
folds the update points in (a rank-2 change of Phi_pp, a rank-1 change of Phi_pm).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import kernel_features, kernel_features_rows
from okl._threads import one_blas_thread
from okl._validation import MAX_ABS_FEATURE, check_int
from okl.runtime.base import Arr, Learner, Num, StateSpec, drop_event_cache, event_state
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, Hyper
from okl.runtime.events import EventWork
from okl.learners.kogd import DONE, expansion_plan, expansion_rounds
from okl.components.maps.expansion import expansion_decision
from okl.linalg.sketch import IncrementalSketch

#: horizon assumed when neither ``rho`` nor ``horizon`` is given (rho = theta x 10,000; 3000 at
#: theta = 0.3, the paper's boundary between small and large data sets)
DEFAULT_HORIZON = 10_000
#: the papers' update cycle as a fraction of the horizon (rho = 0.3 T)
DEFAULT_THETA = 0.3

#: the sketch's sizes (SkeGD Alg. 1, FORKS Alg. 1): each bounded by the others' resolved values, so
#: :meth:`_Sketched._check_sizes` checks them after the rest, naming the bound
SKETCH_SIZES = (
    BUDGET.but(relation=True),
    Hyper("s_p", "int", "Columns of the sketch's Gaussian part (landmark candidates).", low=1, optional=True,
          none_means="the budget", symbol="s_p", relation=True),
    Hyper("s_m", "int", "Landmarks kept, at most the budget.", low=1, optional=True,
          none_means="min(budget, s_p)", symbol="s_m", relation=True),
    Hyper("d", "int", "The SJLT's blocks (non-zeros per column), at most s_p; not the input dimension.", low=1,
          optional=True, none_means="min(4, s_p)", symbol="d", relation=True),
    Hyper("k", "int", "The rank of the feature map, at most min(s_p, s_m).", low=1, optional=True,
          none_means="min(budget, s_m, s_p)", symbol="k", relation=True),
    Hyper("rho", "int", "Rounds between update rounds.", low=1, optional=True,
          none_means="max(1, floor(theta horizon))", symbol="rho", relation=True),
)

#: attributes of :class:`okl.linalg.IncrementalSketch` saved as ``sk_<key>_`` state
_SKETCH_KEYS = ("S_p", "points", "indices", "Phi_pp", "Phi_pm", "n_updates")
SKETCH_STATE_ATTRS = tuple("sk_" + key + "_" for key in _SKETCH_KEYS)


class SketchedLearner(Learner):
    """Base of :class:`okl.learners.skegd.SkeGD` and :class:`okl.learners.forks.FORKS`.

    Subclasses set the hyperparameters (``_check_sizes`` validates the shared ones), implement
    ``_transition(x, y, f, round_index)``, ``_update_round(x, y, f)`` and
    ``_sketched_rounds(Z, Y, out, round0) -> (j, counter)`` (the compiled stage-2 loop over
    features ``Z``, stopping *before learning* at the first update round j, or j = len(Z)), and
    may extend ``_start``, ``_count_stage1`` and ``diagnostics``. Their ``_state_attrs`` end with
    :data:`SKETCH_STATE_ATTRS`.
    """

    # ---- hyperparameters --------------------------------------------------------------------

    def _check_sizes(self, budget, s_p, s_m, d, k, rho, *, d_optional: bool) -> None:
        """Validate and set budget, s_p, s_m, d, k, rho (None = the default, except ``d`` when
        not ``d_optional``); the bounds use the resolved defaults of the others."""
        self.budget = check_int("budget", budget, 1)
        B = self.budget
        self.s_p = None if s_p is None else check_int("s_p", s_p, 1)
        sp = self.s_p_
        self.s_m = None if s_m is None else check_int(f"s_m (at most budget B = {B})", s_m, 1, B)
        sm = self.s_m_
        self.d = None if d is None and d_optional else check_int(f"d (at most s_p = {sp})", d, 1, sp)
        self.k = None if k is None else check_int(f"k (at most min(s_p, s_m) = {min(sp, sm)})", k, 1,
                                                  min(sp, sm))
        self.rho = None if rho is None else check_int("rho", rho, 1)

    # ---- resolved sizes ---------------------------------------------------------------------

    @property
    def s_p_(self) -> int:
        return self.s_p if self.s_p is not None else self.budget

    @property
    def s_m_(self) -> int:
        return self.s_m if self.s_m is not None else min(self.budget, self.s_p_)

    @property
    def d_(self) -> int:
        return self.d if self.d is not None else min(4, self.s_p_)

    @property
    def k_(self) -> int:
        return self.k if self.k is not None else min(self.budget, self.s_m_, self.s_p_)

    def _update_fraction(self) -> float:
        """theta of the default rho = max(1, floor(theta horizon))."""
        return DEFAULT_THETA

    @property
    def rho_(self) -> int:
        if self.rho is not None:
            return self.rho
        horizon = self.horizon if self.horizon is not None else DEFAULT_HORIZON
        return max(1, int(self._update_fraction() * horizon))

    # ---- state ------------------------------------------------------------------------------

    def _sketch_spec(self, k_high: int, **own) -> StateSpec:
        """The shared state declaration (buffer, map, counters, sketch) plus the subclass's
        ``own`` fields (feature dimension ``k`` in [0, ``k_high``])."""
        B, sp, sm, last = self.budget, self.s_p_, self.s_m_, self.n_seen_ - 1
        stage2 = ("Q_", "w_", "landmarks_", "transition_round_") + SKETCH_STATE_ATTRS
        d = self.d_
        return StateSpec(
            sizes={"k": (0, k_high), "nu": (1, B + self.n_seen_ + 1)},
            groups=(stage2,),
            fields={
                "SV_": Arr((B, "dim")), "alpha_": Arr(self.heads.out_shape(self, B)), "m_": Num(int, 0, (B, "n_seen")),
                "Q_": Arr((sm, "k"), optional=True), "w_": Arr(self.heads.out_shape(self, "k"), optional=True),
                "landmarks_": Arr((sm, "dim"), optional=True),
                "transition_round_": Num(int, 0, last, optional=True),
                "counter_": Num(int, 0, "n_seen"), "update_rounds_": Num(int, 0, "n_seen"),
                "sk_S_p_": Arr(("nu", sp), optional=True), "sk_points_": Arr(("nu", "dim"), optional=True),
                "sk_indices_": Arr((sm,), np.int64, low=0, high=B - 1, optional=True),
                "sk_Phi_pp_": Arr((sp, sp), optional=True), "sk_Phi_pm_": Arr((sp, sm), optional=True),
                "sk_n_updates_": Num(int, 0, "n_seen", optional=True),
                **own},
            rules=((lambda m: m.sk_S_p_ is None or bool(((m.sk_S_p_ != 0).sum(axis=1) == d).all()),
                    "sk_S_p_", f"every row must have exactly d = {d} nonzeros (an SJLT)"),
                   (lambda m: m.sk_indices_ is None or int(m.sk_indices_.max(initial=0)) < m.sk_S_p_.shape[0],
                    "sk_indices_", "indexes beyond the sketch list")))

    _rows_per_budget = 2  # (the support vectors, then the landmarks' copy in auto's engine)

    def _start(self, dim):
        self.SV_ = np.zeros((self.budget, dim))
        self.alpha_ = np.zeros(self.budget)
        self.m_ = 0
        self.Q_ = None
        self.w_ = None
        self.landmarks_ = None
        self.transition_round_ = None
        self.counter_ = 0
        self.update_rounds_ = 0
        for attr in SKETCH_STATE_ATTRS:
            setattr(self, attr, None)
        self._sketch = None

    def _new_sketch(self) -> IncrementalSketch:
        """The transition sketch of the B buffered points (draws S_p and the landmarks)."""
        return IncrementalSketch(self.kernel_, self.SV_[: self.m_].copy(), self.s_p_, self.s_m_, self.d_,
                                 self._rng, grow=self.grow_sketch)

    def _sketch_object(self) -> IncrementalSketch:
        """The live sketch; rebuilt from the saved arrays (no new draws) after :meth:`load`."""
        sk = getattr(self, "_sketch", None)
        if sk is None or sk.Phi_pp is not self.sk_Phi_pp_:
            state = {key: getattr(self, "sk_" + key + "_") for key in _SKETCH_KEYS}
            state.update(d=self.d_, grow=self.grow_sketch)
            sk = IncrementalSketch.from_arrays(self.kernel_, state, self._rng)
            self._sketch = sk
        return sk

    def _store_sketch(self, sk: IncrementalSketch) -> None:
        self._sketch = sk
        for key in _SKETCH_KEYS:
            setattr(self, "sk_" + key + "_", getattr(sk, key))

    # ---- feature map ------------------------------------------------------------------------

    def _features(self, X):
        return self.kernel_(X, self.landmarks_) @ self.Q_

    def _transfer_matrix(self, Q_old: np.ndarray) -> np.ndarray:
        """P (k_new x k_old) with phi_new(x~)^T P w ~ phi_old(x~)^T w on the landmarks x~: the least-
        squares change of feature coordinates after the map changed from Q_old to Q_ (the
        landmarks never change), pinv with the relative cut-off of :func:`okl.linalg.pinv` so an
        ill-conditioned new map cannot amplify the weights."""
        from okl.linalg.svd import PINV_RTOL, pinv
        Kmm = self.kernel_(self.landmarks_, self.landmarks_)
        return pinv(Kmm @ self.Q_, PINV_RTOL) @ (Kmm @ Q_old)

    @staticmethod
    def _anchored(f, phi: np.ndarray) -> np.ndarray:
        """The weight w = f phi / ||phi||^2 with w^T phi = f (0 when phi = 0); K outputs f (an
        array): the K x k rows f_o phi / ||phi||^2."""
        nn = float(phi @ phi)
        if np.ndim(f):
            return np.outer(f, phi) / nn if nn > 0.0 else np.zeros((len(f), len(phi)))
        return (f / nn) * phi if nn > 0.0 else np.zeros_like(phi)

    def _decision(self, x):
        if self.Q_ is None:
            return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)
        return float(self._features(x[None, :])[0] @ self.w_)

    # ---- per-event path (Learner.predict_one / learn_one) ------------------------------------

    def _event_ready(self) -> bool:
        """Stage 2 with a decision w^T phi(x) (FORKS's paper ONS form projects w first: no)."""
        return self.Q_ is not None

    def _event_plan(self, ev) -> EventWork:
        """The map's per-event work space, rebuilt when the map, the landmarks or the kernel
        changed (an update round makes a new map)."""
        w = ev.buf
        if w is None or w.Q is not self.Q_ or w.landmarks is not self.landmarks_ or w.kernel is not self.kernel_:
            m, k = self.Q_.shape
            w = ev.buf = EventWork(
                Q=self.Q_, landmarks=self.landmarks_, kernel=self.kernel_, Qc=np.ascontiguousarray(self.Q_),
                LT=np.ascontiguousarray(self.landmarks_.T), kb=np.empty(m), KB=np.empty((4, m)),
                Z=np.empty((1, k)), Y=np.empty(1), out=np.empty(1), spec=self.kernel_.spec())
        return w

    def _event_features(self, x, ev):
        if not self._event_ready():
            return None
        w = self._event_plan(ev)
        kind, a, b, c = w.spec
        ok, f = kernel_features(kind, a, b, c, w.LT, w.Qc.shape[0], w.Qc, self.w_, x, MAX_ABS_FEATURE, w.kb,
                                w.Z[0])
        if not ok:
            self.events.check_values(self, x)
        return f, w.Z

    def _event_learn(self, x, y, Z, ev):
        if not self._event_ready():
            return None
        if Z is None:
            Z = self._event_features(x, ev)[1]
        w = self._event_plan(ev)
        w.Y[0] = y
        j, counter = self._sketched_rounds(Z, w.Y, w.out, self.n_seen_)
        self.counter_ = int(counter)
        if j == 0:
            drop_event_cache(self)  # the map and the weights are replaced
            with one_blas_thread():
                self._update_round(x, y, w.out[0])
        return float(w.out[0])

    def compiled_plan(self):
        if self.Q_ is None:  # stage 1: the kernel expansion until the transition
            return expansion_plan(self)
        if not self._event_ready():
            return None
        return Plan("kernel", LT=self.landmarks_.T, P=self.Q_, kernel=self.kernel_.spec(), w="w_",
                    counts="counter_", rho=self.rho_, margin=self.update_counter == "margin_errors",
                    **self._fast_step())

    def _fast_step(self) -> dict:
        """The stage-2 step of :meth:`compiled_plan` (``step``, its constants and ``A``)."""
        raise NotImplementedError

    def _event_block(self, X, y, out):
        if not self._event_ready():
            return 0
        w = self._event_plan(event_state(self))
        Z = np.empty((X.shape[0], w.Qc.shape[1]))
        r = kernel_features_rows(*w.spec, w.LT, w.Qc.shape[0], w.Qc, X, MAX_ABS_FEATURE, w.KB, Z)
        if not r:
            return 0
        j, counter = self._sketched_rounds(Z[:r], y[:r], out[:r], self.n_seen_)
        self.counter_ = int(counter)
        if j == r:
            return r
        drop_event_cache(self)
        with one_blas_thread():  # an update round: the map changes after row j
            self._update_round(X[j], y[j], out[j])
        return j + 1

    def _event_heavy(self):
        return self.Q_ is None and self.m_ >= self.budget  # the transition may come

    # ---- rounds -----------------------------------------------------------------------------

    def _rows_to_compute(self, round_index: int) -> int:
        """How many rows of features to compute from 0-based round ``round_index`` on: at most a
        chunk, and not (much) past the next possible update round (the map changes there)."""
        rho = self.rho_
        if self.update_counter == "rounds":
            next_update = -(-round_index // rho) * rho
            return min(self.chunk_size, next_update - round_index + 1)
        if rho == 1:
            return self.chunk_size
        c = self.counter_
        next_count = c + 1 + (1 - (c + 1)) % rho
        return min(self.chunk_size, max(64, next_count - c))

    def _count_stage1(self, decisions, y, end) -> None:
        """Hook after the stage-1 rows ``decisions[:end]`` (transition round included)."""

    def _process(self, X, y):  # Learner.run holds BLAS to one thread (okl._threads)
        n = X.shape[0]
        out = np.empty(n)
        i = 0
        if self.Q_ is None:
            status, i, self.m_ = expansion_rounds(*self.kernel_.spec(), self.loss_.kind, self.eta, 0.0, X, y,
                                                  out, 0, self.SV_, self.alpha_, self.m_, self.budget, True)
            self._count_stage1(out, y, n if status == DONE else i + 1)
            if status == DONE:
                return out
            self._transition(X[i], y[i], out[i], self.n_seen_ + i)
            i += 1
        while i < n:
            e = min(n, i + self._rows_to_compute(self.n_seen_ + i))
            j, counter = self._sketched_rounds(self._features(X[i:e]), y[i:e], out[i:e], self.n_seen_ + i)
            self.counter_ = int(counter)
            if j == e - i:
                i = e
                continue
            row = i + j
            self._update_round(X[row], y[row], out[row])
            i = row + 1
        return out

    def _first_counted_round(self):
        return None if self.transition_round_ is None else self.transition_round_ + 1

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "stage": 1 if self.Q_ is None else 2,
                "transition_round": self.transition_round_, "update_rounds": int(self.update_rounds_),
                "sketch_points": 0 if self.sk_points_ is None else int(self.sk_points_.shape[0]),
                "features": 0 if self.Q_ is None else int(self.Q_.shape[1]), "rho": self.rho_}
