"""``auto``: one learner that runs a pool of widths, steps and learner families and mixes them online.

A user with a new stream does not know which learner, kernel width or step to use. ``auto`` runs a
fixed *pool* of okl learners side by side and predicts with an online aggregation of their
decisions (the Raker / AdaRaker idea of Shen, Chen & Giannakis, JMLR 2019 -- a dictionary of
kernels, one learner per kernel, exponentially updated weights -- extended to several learner
families and steps, with a learning rate that needs no tuning and a share step that follows a
changing best member; in regression, a stacking layer beside the mixture). What each choice
measured: docs/results/auto-design.md (this docstring's longer predecessor) and auto-pool.md.

Pool (built from the stream's own scale; every member predicts before the label and learns every
round, as it would alone)
    The centre width sigma_0 is chosen like every okl learner's (:func:`okl.kernels.scale_sigma`
    over the first :data:`~okl.kernels.WIDTH_WINDOW` rows, which the window member's smoother
    predicts meanwhile and which are then replayed; a kernel given: its width), and the widths
    are sigma_0 x {1/2, 1, 2}:

    ==============  =======================================  =========================================
    family          classification (hinge)                   regression (squared loss)
    ==============  =======================================  =========================================
    NOGD (Nystrom)  3 widths x AdaGrad rate lr in {1, 3}      3 widths x eta in {0.2, 0.5}
    FORKS (sketch)  3 widths (second-order, its own step)     3 widths
    FOGD (random    3 widths, eta = 1 (the fast step)         3 widths, eta = 0.5 (the fast step)
    features)
    FOGD, L1        3 L1 widths, eta = 1, D = 12B directions  3 L1 widths, eta = 0.5, D = 12B
    (Laplacian)
    linear          eta in {0.2, 1}                           eta in {0.02, 0.2}
    window          the last 2B rows, width sigma_0 / 4       the same (targets)
    affine          linear on scale="affine" inputs,          the same, degree 2 while
                    logistic loss, eta = 0.05                 d (d + 1) / 2 <= 8B, eta = 0.2
    ==============  =======================================  =========================================

    Why: the Gaussian width is known from unlabelled rows only to a factor 2; the L1 family
    (exp(-||x - x'||_1 / sigma_1), sigma_1 = E||x - x'||_1 / 2, Cauchy random features) fits
    rule-structured streams (thresholds on single features, categorical codes), and its kernel,
    not smooth, needs more directions (12B against 4B); the window member (Nadaraya-Watson over
    the last 2B rows) follows classes in many small moving regions that a bounded model outruns;
    the affine member undoes the curvature of auto's symlog input map for linear concepts. FOGD's
    eta = 1 (hinge) is the passive-aggressive step for ||z|| = 1, eta = 0.5 (squared) the
    normalised-LMS step (2 eta ||z||^2 = 1); NOGD's lr = 3 lets a coordinate cross the margin in
    one step. The L1 members leave the pool when a kernel is given, the window member with three
    or more classes, the affine member without auto's input map. Every member takes ``budget``
    and a ``random_state`` derived from auto's generator.

    Sparse rows (the width window came as a SciPy sparse matrix, fewer than
    :data:`~okl.ensemble.pool.SPARSE_DENSITY` = 1/2 of its columns non-zero: one-hot codes,
    hashed text): the pool of :func:`~okl.ensemble.pool.sparse_pool` -- NOGD's 3 widths x 2
    steps, the two linear OGD steps, the window, and a linear member with NAG, Vowpal Wabbit's
    normalised adaptive step (``step="nag"``, eta = 0.5; logistic loss in classification). A
    linear model with per-feature adaptive steps is the learner to beat on such rows, and with it
    the other families never carried the mixture on the sparse streams measured while costing most
    of a round (docs/results/sparse.md). ``sparse_pool_`` records the choice (model files keep it).
    Rows wider than :data:`~okl.ensemble.hashing.HASH_WIDTH` = 2^20 columns are hashed into 2^20 on
    every path (signed feature hashing, :mod:`okl.ensemble.hashing`: memory O(2^20), not O(d)).

Aggregation (every round; no hindsight)
    Member decisions are clipped to where the loss is informative ([-1, 1] for labels, the
    targets' range so far for regression), giving c_i; the prediction is f = sum_i w_i c_i. Each
    member pays l_i = (1 - y c_i) / 4 + [sign(c_i) != y] / 2 (classification: half the clipped
    hinge, half the 0-1 loss, so mistakes(auto) <= 4 sum_t sum_i w_ti l_ti), or (c_i - y)^2
    (regression). With K classes each member's K one-vs-rest outputs pay half the mean clipped
    hinge plus half the argmax's 0-1 loss (mistakes <= 2K sum_t sum_i w_ti l_ti). Weights:
    w_i ~ exp(-eta_t Lbar_i) with AdaHedge's rate eta_t = ln N / Delta_{t-1} (de Rooij, van
    Erven, Grunwald & Koolen, JMLR 2014: no tuning, invariant to the losses' scale, regret
    O(sqrt(L* ln N) + ln N)), then a fixed-share step w <- (1 - alpha_t) w + alpha_t / N,
    alpha_t = 1 / (t + 1) (Herbster & Warmuth 1998; Koolen & de Rooij 2013), stored back as
    effective losses Lbar_i = -ln w_i / eta. A member whose decision becomes non-finite leaves
    the pool; auto fails only if every member does.

    Regression's stacking layer (:mod:`okl.engine.aggregation`): an affine combination can beat
    every convex one where members err in different directions, so a ridge regression (recursive
    least squares, O(N^2) a round) of the residual y - f on the deviations r_i = c_i - f, with
    lambda = :data:`~okl.engine.aggregation.STACK_RIDGE` x the first window's target variance
    (unit-free), predicts s = f + v . r, clipped; a two-expert AdaHedge with fixed share weighs f
    and s, and auto predicts (1 - u) f + u s, u = 0 while the stack's cumulative loss is not below
    the mixture's (spiky targets slow AdaHedge's weights). ``diagnostics()["stack_share"]`` is u.

Shared work: NOGD's two steps at one width share their stage 1 and Nystrom map (classification);
the FOGD members of a family draw their directions once (the widest member's U, the others U x 2
and U x 4: features by the double angle, within a few ulp), so their random-feature errors are
correlated across widths, each still an exact FOGD.

Cost: one round is one round of every member plus an O(N) aggregation (O(N^2) more for the stacking
layer in regression), in one compiled call per event (:mod:`okl.engine.core`, :class:`okl.engine.roots.AutoPlan`);
transitions and FORKS's update rounds run in the members' Python. ``run``, ``learn_many`` and
``okl stream`` take the same per-row arithmetic, so per-event decisions equal run()'s bit for bit.
N = 19 members by default (10 on sparse rows). Memory is the members' (bounded by the budget) plus
O(N) (O(N^2) in regression). ``diagnostics()`` holds every member's weight (``weight[<member>]``),
``carried_by``, the learning rate, the members alive and how many the compiled engine does not run
(``members_outside_engine``: each of those learns through its own Python path every round); model
files hold the members as complete okl model files of their own (``members_blob_``, each checked
against its own state declaration).
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from okl._threads import one_blas_thread
from okl.kernels import RBF, Laplacian, scale_sigma, scale_sigma_l1  # noqa: F401 (RBF: re-exported)
from okl.engine.aggregation import (  # noqa: F401 (aggregate_predict, aggregate_rounds, mixture_weights: re-exported)
    AGG_HEAD, HI, LO, STACK_HEAD, mixture_weights, agg_size, aggregate_predict, aggregate_rounds, new_agg, stack_share)
from okl.ensemble.parts import PoolEvents, PoolFiles, PoolHeads, PoolInputs
from okl.ensemble.paths import EnginePaths
from okl.ensemble.window_phase import WindowPhase
from okl.ensemble.hashing import COLUMN_HASH, HASH_WIDTH, WideRows
from okl.ensemble.pool import (SPARSE_DENSITY, WIDTHS, WINDOW_WIDTH, _check_members,  # noqa: F401 (re-exported)
                                   _label, _share_directions, default_pool)
from okl.components.columns import FAILED, TRANSITION
from okl.engine.layout import Engine
from okl.runtime.base import Arr, Learner, Num, Opaque, Seq, StateSpec, event_state, learner_class, make, register
from okl.runtime.events import drop_event_cache
from okl.runtime.modelfile import load_from
from okl.runtime.hyperparameters import (BUDGET, CENTER_TARGETS, HORIZON, KERNEL, LOSS, RANDOM_STATE, SCALE, Hyper,
                                         accept)
from okl.runtime.state import MAX_CLASSES


#: the most floats of input rows a default member may store (its declared rows per budget x budget x
#: d: NOGD's and FORKS's support vectors and landmarks, the window's rows): 2^24, 128 MiB. Beyond,
#: it is left out of the pool (``diagnostics()["left_out"]``): at B = 100, NOGD and FORKS beyond
#: 83,886 columns, the window beyond 83,886 (hashed text of 2^20 columns: the FOGD members, their
#: directions generated, and the linear ones learn it)
MEMBER_INPUT_FLOATS = 1 << 24


@register("auto")
class Auto(WideRows, EnginePaths, WindowPhase, Learner):
    """A pool of okl learners (widths x steps x families) mixed online; see the module docstring.

    Parameters
    ----------
    budget : int, default 100
        Budget of every kernel member (support vectors / landmarks; FOGD: D = 4B directions).
    loss : str or Loss, default "hinge"
        "hinge" (and the other classification losses: members learn with it; the aggregation
        uses the clipped hinge loss) or "squared" (regression).
    kernel : Kernel or None, default None
        None: the centre width is chosen from the first rows (:func:`okl.kernels.scale_sigma`).
        A kernel with a ``sigma`` gives the centre width; other kernels are used as given by the
        kernel members (no width grid; FOGD members need a shift-invariant kernel and are left
        out otherwise).
    members : list of (name, width multiplier or None, params) or None
        None: :func:`default_pool`. Width multiplier None: the member takes no kernel. Besides the
        member's hyperparameters, params may hold ``kernel="laplacian"`` (an L1 member, its width
        from the window's L1 distances), ``budget_scale`` (its budget in units of auto's, default
        1; the window 2) and ``scale="affine"`` (a linear member of the affine family).
    horizon : int or None
        Passed to members that take it (FORKS's update cycle).
    [[center_targets, scale]]
        auto scales the input once, for every member (its members are built with ``scale=None``).
    random_state : int or None
        Seeds the members (each gets its own seed from auto's generator).

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = okl.make("auto", random_state=0)
    >>> trace = m.run(X, y)
    >>> 20.0 < trace.mistake_rate < 32.0
    True
    >>> sum(v for k, v in trace.diagnostics.items() if k.startswith("weight[")) > 0.999
    True
    """

    #: K outputs of a one-member pool (a single learner in :class:`~okl.runtime.multiclass.MultiClass`):
    #: give the member's outputs rather than the mixture's, which clips them to [-1, 1] (several
    #: outputs at the clip would tie for the argmax); set by MultiClass, never saved
    _raw_member: bool = False
    #: (K, members) the last grow_outputs retired (undone by drop_last_output); never saved
    _retired_at: tuple | None = None

    _state_attrs = ("member_index_", "L_", "alive_", "agg_", "members_blob_", "member_sizes_", "sparse_pool_",
                    "n_outputs_", "input_width_", "column_hash_")
    #: the default pool is the one for sparse rows (:func:`~okl.ensemble.pool.sparse_pool`): the
    #: width window came as sparse rows, fewer than SPARSE_DENSITY of their columns non-zero
    sparse_pool_: bool = False
    #: model files from before the pool for sparse rows hold the default pool
    _state_added = {"sparse_pool_": False, "input_width_": None, "column_hash_": None}
    _divergence_hint = "pass members with smaller steps (every member diverged)"

    files = PoolFiles()  # (its members' files inside its own)
    heads = PoolHeads()  # (its members' K outputs)
    inputs = PoolInputs()  # (wide rows hashed; the engine's compile started early)
    events = PoolEvents()  # (the engine's per-event plans)
    hyperparameters = (BUDGET, LOSS, KERNEL, Hyper("members", "any", "The pool as (name, width multiplier, params).",
                                                  optional=True, none_means="the default pool", custom=_check_members),
                       HORIZON, CENTER_TARGETS, SCALE, RANDOM_STATE)

    def __init__(self, *, budget: int = 100, loss="hinge", kernel=None, members=None,
                 horizon: int | None = None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())
        self._pool: list[Learner] | None = None

    # ---- pool -----------------------------------------------------------------------------

    def member_specs(self) -> list[list]:
        """The pool as [name, width multiplier, params] (``members`` or the default pool)."""
        if self.members is not None:
            return [list(m) for m in self.members]
        return [[n, w, dict(p)] for n, w, p in default_pool(self.task, sparse=self.sparse_pool_)]

    def member_labels(self) -> list[str]:
        return [_label(*spec) for spec in self.member_specs()]

    def _member_kernel(self, width, family=None):
        """The kernel of a member at ``width`` times the centre width: auto's own kernel family, or
        ``family="laplacian"``: a Laplacian kernel whose centre width is chosen from the same window
        (:func:`okl.kernels.scale_sigma_l1`); None when auto was given a kernel (no L1 width then)."""
        if family is not None:
            if family != "laplacian":
                raise ValueError(f"members: a member's kernel family must be 'laplacian', got {family!r}")
            sigma1 = getattr(self, "_sigma_l1", None)
            return None if sigma1 is None else Laplacian(sigma=float(sigma1) * width)
        base = self.kernel_
        sigma = getattr(base, "sigma", None)
        if width is None or sigma is None:
            return base
        return type(base)(sigma=float(sigma) * width)

    def _build_member(self, name, width, params, seed, dim) -> Learner | None:
        from okl.runtime.base import accepts

        kw = dict(params)
        affine = kw.get("scale") == "affine"  # a member of the affine family (module docstring)
        if affine:
            if name != "linear":
                raise ValueError(f"members: scale='affine' is a linear member's input, not {name}'s")
            if self.inputs.scale_rule(self) not in ("symlog", "affine"):
                if self.members is not None:
                    raise ValueError("members: an affine member needs auto's input map symlog or affine "
                                     f"(scale={self.scale!r} gives {self.inputs.scale_rule(self)!r})")
                return None  # a kernel given or scale=None: the features as given, no affine member
            if self.members is None and kw.get("degree") == 2 and dim * (dim + 1) // 2 > 8 * self.budget:
                kw["degree"] = 1  # the products cost at most one FOGD member's 2D = 8B features
        kw["random_state"] = seed
        scale = kw.pop("budget_scale", learner_class(name)._budget_scale)  # the window: 2 B rows
        if accepts(name, "budget") and "budget" not in kw:
            kw["budget"] = max(1, round(self.budget * scale))
        if self.members is None and learner_class(name)._rows_per_budget * kw.get("budget", 0) * dim \
                > MEMBER_INPUT_FLOATS:
            return None  # its stored rows would not fit (wide inputs: hashed text): left out
        if accepts(name, "horizon") and "horizon" not in kw and self.horizon is not None:
            kw["horizon"] = self.horizon
        if accepts(name, "loss") and "loss" not in kw:
            kw["loss"] = self.loss
        if accepts(name, "center_targets"):
            kw["center_targets"] = False  # auto drives its members' own models and centres once, itself
        if accepts(name, "scale"):
            kw["scale"] = None  # auto scales the input once, for every member (okl.scaling)
        family = kw.pop("kernel", None)
        if width is not None:
            if not accepts(name, "kernel"):
                raise ValueError(f"members: {name} takes no kernel; give width None")
            kw["kernel"] = self._member_kernel(width, family)
            if kw["kernel"] is None:  # an L1 member with a kernel given: left out (no L1 width)
                if self.members is not None:
                    raise ValueError("members: an L1 (kernel='laplacian') member needs auto's width "
                                     "chosen from the stream (kernel=None)")
                return None
        elif family is not None:
            raise ValueError("members: a member with a kernel family needs a width multiplier")
        try:
            member = make(name, **kw)
        except ValueError:
            if self.members is not None:
                raise
            return None  # a default member that cannot take this kernel or loss (e.g. FOGD, polynomial)
        if member.task != self.task:
            raise ValueError(f"members: {name} learns a {member.task} task, auto a {self.task} task")
        member._unmap = self._unmaps(params)
        return member

    def _unmaps(self, params) -> bool:
        """Whether a member with ``params`` undoes auto's symlog map (a member of the affine family
        under auto's default map; :func:`okl.learners.linear.linear_features`)."""
        return params.get("scale") == "affine" and self.inputs.scale_rule(self) == "symlog"

    def _start(self, dim):
        X = getattr(self, "warmup_X_", None)  # the window's rows as the members see them
        # (a sparse window is kept compact: its rows over the columns they use, SparseRows.compact)
        self.sparse_pool_ = bool(self._sparse_window and X is not None
                                 and np.count_nonzero(X) < SPARSE_DENSITY * X.shape[0] * dim)
        self._sigma_l1 = scale_sigma_l1(X) if self.kernel is None and X is not None and len(X) else None
        pool, keep = [], []
        for i, (name, width, params) in enumerate(self.member_specs()):
            seed = int(self._rng.integers(2 ** 31 - 1))
            member = self._build_member(name, width, params, seed, dim)
            if member is not None:
                member.inputs.ensure_started(member, dim)
                pool.append(member)
                keep.append(i)
        if not pool:
            raise ValueError("auto: no member can learn with this kernel and loss")
        _share_directions(pool)
        if self.n_outputs_:
            for member in pool:
                member.heads.set_outputs(member, [1.0] * self.n_outputs_)
        self._pool = pool
        n = len(pool)
        self.member_index_ = keep
        self.L_ = np.zeros(n)
        self.alive_ = np.ones(n)
        self.agg_ = new_agg(n, pool[0].task == "classification")
        self.members_blob_ = None
        self.member_sizes_ = None
        if self.n_outputs_ >= 3:
            self._retire_windows()

    def _retire_windows(self) -> list[int]:
        """Three or more classes: a window member among others leaves the pool (weight 0, no more
        rounds, as a diverged member); returns the members retired now. Its one-vs-rest votes are -1
        on every class absent from its neighbourhood, which the K-output loss credits on K - 1
        outputs a round: on scikit-learn's digits (10 classes, 5-fold) it took 97 % of the weight and
        auto fell from 97.38 to 86.14 % (the window alone: 81 % on the first fold;
        docs/results/window.md). With two mirrored outputs the loss is the binary one and it stays;
        alone (a one-member pool) it stays."""
        retired = []
        if len(self._pool) > 1:
            for j, member in enumerate(self._pool):
                if member.name == "window" and self.alive_[j] > 0.0:
                    self.alive_[j] = 0.0
                    retired.append(j)
        return retired

    # ---- K outputs (okl.runtime.multiclass.MultiClass) -------------------------------------

    def _set_outputs(self, signs) -> None:
        """K one-vs-rest outputs (see :meth:`okl.runtime.heads.Heads.set_outputs`): every member's model becomes
        K rows (``signs``: copies or mirrors of what it learned, for a binary learner turned
        multi-class), and the aggregation pays each member the mean of its K clipped hinge
        losses, which for two mirrored outputs is the binary loss it paid so far: the weights
        carry on unchanged. Labels are class indices from now on; the calibration of the binary
        decisions is dropped (the multi-class model has its own)."""
        if self.n_outputs_:
            raise ValueError("the learner has K outputs already")
        if self.task != "classification":
            raise ValueError("K outputs need a classification loss")
        if self.started_:
            for member in self.pool_:
                member.heads.set_outputs(member, signs)
            if len(signs) >= 3:
                self._retire_windows()
            self._stale()
        if self.dim_ is not None and not self.started_:  # the window's labels -1/+1 as class indices
            pos = [o for o, s in enumerate(signs) if s > 0]
            neg = [o for o, s in enumerate(signs) if s < 0]
            self.warmup_y_ = np.where(self.warmup_y_ > 0, pos[0] if pos else 0, neg[0] if neg else 0).astype(float)
        self.calibration_ = None
        self.n_outputs_ = len(signs)

    def _grow_outputs(self, K: int) -> None:
        if self.started_:
            for member in self.pool_:
                member.heads.grow_outputs(member, K)
            # the third class retires the window; undone with the output (_drop_last_output)
            self._retired_at = (int(K), self._retire_windows()) if K >= 3 else None
            self._stale()
        self.n_outputs_ = int(K)

    def _drop_last_output(self) -> None:
        if self.started_:
            for member in self.pool_:
                member.heads.drop_last_output(member)
            if self._retired_at is not None and self._retired_at[0] == self.n_outputs_:
                for j in self._retired_at[1]:
                    self.alive_[j] = 1.0
            self._retired_at = None
            self._stale()
        self.n_outputs_ -= 1

    def _outputs(self, eng: Engine) -> np.ndarray:
        """The K outputs of the round just computed: the mixture's, or the one member's own
        (``_raw_member``)."""
        return eng.d[:eng.K].copy() if self._raw_member else eng.p.copy()

    def _stale(self) -> None:
        ev = event_state(self)
        if ev.buf is not None:
            ev.buf.sync()
            ev.buf.stale = True
        drop_event_cache(self)

    @property
    def pool_(self) -> list[Learner]:
        """The member learners (rebuilt from the model file after :meth:`load`); empty before the
        pool starts (while the width window fills)."""
        if self._pool is None:
            if not self.started_:
                return []
            self._unpack()
        else:
            self._sync()
        return self._pool

    # ---- protocol: every path runs the engine (okl.engine.core) -----------------------

    def _engine(self, ev=None) -> Engine:
        """The compiled layout of the pool (kept outside the learner, in its event state ``ev``:
        never saved or copied); rebuilt after a member's arrays were replaced or the pool or the
        aggregation's state reloaded."""
        ev = ev or event_state(self)
        eng = ev.buf
        if eng is None or eng.stale or eng.pool is not self._pool or eng.L is not self.L_:
            drop_event_cache(self)  # (a fast plan holds the engine's arrays)
            eng = ev.buf = Engine(self.pool_, self.dim_, self.L_, self.alive_, self.agg_)  # (pool_ syncs first)
            self.L_, self.alive_, self.agg_ = eng.L, eng.alive, eng.agg  # views of the engine's state
        return eng

    def _sync(self) -> None:
        """Bring the member objects up to date with the engine (their counters)."""
        ev = event_state(self)
        if ev.buf is not None and ev.buf.pool is self._pool:
            ev.buf.sync()

    def __getstate__(self):
        self._sync()
        return self.__dict__.copy()

    def _python_steps(self, eng: Engine, x, y) -> None:
        """The members' steps the engine left to Python (a transition, an update round, or a failed
        round: the member leaves the pool) on row x with label y; their decisions are in ``eng.d``."""
        eng.sync()
        eng.stale = True  # the members now hold the state; the layout is rebuilt from them
        drop_event_cache(self)
        shared: dict = {}  # members whose transitions share work (NOGD's pair at one width: the eigen-map)
        with np.errstate(all="ignore"), one_blas_thread():  # (once a round: an entry costs 0.1-0.4 ms)
            for j in np.flatnonzero(eng.todo):
                member = self._pool[j]
                f = float(eng.d[j]) if not eng.K else eng.d[j * eng.K:(j + 1) * eng.K].copy()
                if eng.todo[j] == FAILED:  # (its compiled round left no usable state)
                    self.alive_[j] = 0.0
                    member.n_seen_ += 1
                    continue
                try:
                    work = member.transition_work() if eng.todo[j] == TRANSITION else None
                    if work is not None:
                        key = (type(member), work[0])
                        if key not in shared:
                            shared[key] = work[1]()
                        member._transition(x, y, f, member.n_seen_, work=shared[key])
                    elif eng.todo[j] == TRANSITION:
                        member._transition(x, y, f, member.n_seen_)
                    else:
                        member._update_round(x, y, f)
                except (ValueError, FloatingPointError, ArithmeticError, np.linalg.LinAlgError):
                    self.alive_[j] = 0.0
                member.n_seen_ += 1

    def _python_decisions(self, eng: Engine, x, y=None) -> None:
        """The decisions of the members the engine does not run (``eng.py``) into ``eng.d``; with
        a label, they also learn the row."""
        for j in eng.py:
            if self.alive_[j] <= 0.0:
                eng.d[j] = np.nan
            elif y is None:
                with np.errstate(all="ignore"):
                    eng.d[j] = self._pool[j]._decision(x)
            else:
                eng.d[j] = self._member_block(self._pool[j], x[None, :], np.array([y]))[0]

    # ---- transparency ---------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        """The weights the next prediction uses (one per member kept in the pool)."""
        n = len(self.L_)
        alive = int((self.alive_ > 0.0).sum())
        w = np.zeros(n)
        if alive:
            eta = math.log(alive) / self.agg_[0] if self.agg_[0] > 0.0 else np.inf
            mixture_weights(self.L_, self.alive_, eta, w)
        return w

    def diagnostics(self):
        labels = self.member_labels()
        names = [labels[i] for i in self.member_index_]
        w = self.weights()
        alive = int((self.alive_ > 0.0).sum())
        out: dict[str, Any] = {f"weight[{name}]": float(v) for name, v in zip(names, w)}
        out["carried_by"] = names[int(np.argmax(w))]
        out["members"] = len(names)
        left = [label for i, label in enumerate(labels) if i not in set(self.member_index_)]
        if left:
            out["left_out"] = left
        out["members_alive"] = alive
        # (a member the compiled engine does not run learns through its own Python path each round)
        out["members_outside_engine"] = len(self._engine().py)
        specs = self.member_specs()
        for j, i in enumerate(self.member_index_):  # the L1 members' centre width (scale_sigma_l1)
            if specs[i][2].get("kernel") == "laplacian":
                out["sigma_l1"] = float(self.pool_[j].kernel_.sigma / specs[i][1])
                break
        out["aggregation_rate"] = float(math.log(alive) / self.agg_[0]) if self.agg_[0] > 0 and alive else None
        if len(self.agg_) > AGG_HEAD:  # regression: the stacking layer's share of the prediction
            u, gate = stack_share(self.agg_[AGG_HEAD:])
            out["stack_share"] = float(u) if gate else 0.0
        return out

    def _state_spec(self):
        n_specs = len(self.member_specs())
        return StateSpec(
            sizes={"n": (1, n_specs), "blob": (0, ...), "agg": (AGG_HEAD, agg_size(n_specs, False))},
            groups=(("members_blob_", "member_sizes_"),),
            fields={
                "member_index_": Seq("n", 0, n_specs - 1),
                "L_": Arr(("n",), low=0.0), "alive_": Arr(("n",), low=0.0, high=1.0),
                "agg_": Arr(("agg",), finite=False),
                "members_blob_": Arr(("blob",), dtype=np.int64, optional=True),
                "member_sizes_": Arr(("n",), dtype=np.int64, low=1, optional=True),
                "sparse_pool_": Num(bool), "n_outputs_": Num(int, 0, MAX_CLASSES),
                "input_width_": Num(int, HASH_WIDTH + 1, 1 << 62, optional=True), "column_hash_": Opaque()},
            rules=((lambda m: m.column_hash_ == (None if m.input_width_ is None else COLUMN_HASH), "column_hash_",
                    f"is not the hash of this okl's auto for its input width ({COLUMN_HASH!r} when input_width_ "
                    "is set, else None)"),
                   (lambda m: m.input_width_ is None or m.dim_ == HASH_WIDTH, "input_width_",
                    f"is set, so rows are hashed into {HASH_WIDTH} columns and dim must be {HASH_WIDTH}"),
                   (lambda m: m._pool is not None or m._unpack(), "members_blob_",
                    "does not hold valid model files of the members"),
                   (lambda m: len(m.agg_) in (AGG_HEAD, agg_size(len(m.L_), m._pool[0].task == "classification"))
                    and not np.isnan(m.agg_).any() and np.isfinite(m.agg_[:2]).all()  # (ranges: +-inf when empty)
                    and (len(m.agg_) == AGG_HEAD or np.isfinite(np.delete(m.agg_[AGG_HEAD:], [LO, HI])).all()),
                    "agg_", "is not a finite aggregation state of this pool's length")))

    # ---- model files ----------------------------------------------------------------------

    def _pack(self) -> None:
        blobs = []
        for member in self.pool_:  # (each member's model file, in memory)
            buffer = io.BytesIO()
            member.files.write(member, buffer)
            blobs.append(buffer.getvalue())
        self.member_sizes_ = np.array([len(b) for b in blobs], dtype=np.int64)
        # the member files, concatenated and packed into little-endian int64 words (the last one
        # zero-padded): a byte array would work as well, but int64 keeps every state array numeric
        # with the same range checks as the rest
        data = b"".join(blobs)
        self.members_blob_ = np.frombuffer(data + bytes(-len(data) % 8), dtype="<i8").astype(np.int64)

    def _unpack(self) -> bool:
        sizes, blob = self.member_sizes_, self.members_blob_
        if sizes is None or blob is None or (int(sizes.sum()) + 7) // 8 != blob.shape[0]:
            raise ValueError("member sizes do not match the member blob")
        data = blob.astype("<i8").tobytes()
        specs = self.member_specs()
        pool, pos = [], 0
        for j, size in enumerate(sizes):  # (each member's model file read from memory, in place)
            member = load_from(io.BytesIO(memoryview(data)[pos:pos + int(size)]), f"member {j}")
            pos += int(size)
            spec = specs[self.member_index_[j]]
            if member.name != spec[0] or member.dim_ != self.dim_:
                raise ValueError(f"member {j} is a {member.name} of dimension {member.dim_}, "
                                 f"expected {spec[0]} of dimension {self.dim_}")
            member._unmap = self._unmaps(spec[2])
            pool.append(member)
        self._pool = pool
        self.members_blob_ = self.member_sizes_ = None
        return True
