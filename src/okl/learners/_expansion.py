"""The shared budgeted kernel expansion of RBP, Forgetron, Projectron(++), BPA-S and BOGD (and of
KNLMS, KAP and BSGD, :mod:`okl.learners.knlms`, :mod:`okl.learners.bsgd`): the compiled kernel row
and value over the columns of ``ST``, the Projectron's span projection and bordered inverse, the
per-event hooks of a learner that learns from its input's kernel row (``_RowEvents``) and the
base classes.

ALGORITHMS.md section 6, with the semantics of the LSOKL toolbox (Lu, Hoi et al., JMLR 2016;
``jingcoco/Online-Kernel-Learning`` ``binary/*.m``), which the SkeGD and FORKS tables used.

Every learner here keeps a kernel expansion

    f_t(x) = sum_{i in SV} alpha_i kappa(x_i, x),        |SV| <= B,

predicts y^_t = +1 if f_t(x_t) >= 0 else -1 (as LSOKL, whose ``sign(0)`` is mapped to +1) and
differs only in *when* it updates and *how* it keeps the support set within the budget B.

=============  ============================  ==============================================
learner        updates when                  budget maintenance
=============  ============================  ==============================================
RBP            y^_t != y_t (mistake)         remove a uniformly random SV, add (x_t, y_t)
Forgetron      y_t f_t <= 0                  add, shrink every alpha by phi_t, drop the oldest
Projectron     mistake                       grow while |SV| < B, then project onto span(SV)
Projectron++   mistake, or 0 < 1 - y f < 1   as Projectron; margin errors only project
BPA-S          1 - y_t f_t > 0               replace the SV whose removal costs least
BOGD           l'(f_t, y_t) != 0             remove a uniformly random SV, rescale, clip
KNLMS, KAP     every round (squared error)   x_t joins if coherent-novel while |D| < B; else none
BSGD           l'(f_t, y_t) != 0             merge / remove / project the smallest |alpha|
=============  ============================  ==============================================

Speed: the support set changes every round, so the whole round (kernel row, prediction, update)
runs in one compiled Numba loop over the rows. Per-round cost O(B D) (kernel row), plus O(B^2)
on Projectron/Projectron++ update rounds (d* = K^{-1} k_t and the bordered inverse) and O(B) for
BPA-S's removal costs.

Randomness (RBP and BOGD removals) comes only from ``self._rng``: the learner keeps a buffer of
pre-drawn removal indices (``random_buffer_``, uniform on {0..B-1}, drawn ``RANDOM_BLOCK`` at a
time) and a read position (``random_next_``), both part of the saved state. The compiled loop
takes one index per removal event; when the buffer is used up it stops *before* changing
anything in that round, the caller draws the next block from ``self._rng`` and the loop resumes
at the same row. Since the buffer is refilled at the same removal event however the rows are
split into calls (one row per ``learn_one``, all rows in ``run``, or a save/load in between),
every path sees the same random numbers in the same order."""

from __future__ import annotations

import numpy as np

from okl._validation import MAX_ABS_FEATURE
from okl.components import Plan
from okl.components.maps.columns import (column_kernel_row, expansion_event_value, expansion_value,  # noqa: F401
                                         expansion_value_from, row_decision)
from okl.components.steps.projection import PROJECTRON_MIN_RESIDUAL, bordered_inverse_grow  # noqa: F401
from okl.components.steps.removals import DONE, NEED_RANDOM  # noqa: F401 (the loops' return codes)
from okl.runtime.hyperparameters import BUDGET, KERNEL, RANDOM_STATE, SCALE, accept
from okl.runtime.base import Arr, Learner, Num, StateSpec



#: removal indices drawn from ``self._rng`` per refill of the random buffer
RANDOM_BLOCK = 1024


# --------------------------------------------------------------------------------------------
# compiled rounds
#
# Support vectors are stored as the *columns* of ST (D x B): the column expansion map
# (okl.components.maps.columns, which says why).


class _BudgetedExpansion(Learner):
    """Shared state of the budgeted expansions: support vectors as the columns of
    ``SVT_[:, :m_]`` (D x B, allocated at the first example) with coefficients ``alpha_[:m_]``."""

    _state_attrs = ("SVT_", "alpha_", "m_")

    # (the constructor of the baselines with no hyperparameter of their own: RBP, Forgetron; the
    # others declare theirs after these and call accept() themselves)
    hyperparameters = (BUDGET, KERNEL, SCALE, RANDOM_STATE)

    def __init__(self, *, budget: int = 100, kernel=None, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())

    def _start(self, dim):
        self.SVT_ = np.zeros((dim, self.budget))
        self.alpha_ = np.zeros(self.budget)
        self.m_ = 0

    @property
    def support_vectors_(self) -> np.ndarray:
        """The support vectors as rows (m x D, a copy)."""
        return self.SVT_[:, : self.m_].T.copy()

    def _buffer(self) -> np.ndarray:
        return np.empty(self.budget)

    def _state_spec(self) -> StateSpec:
        """Every state array the compiled loops index, and the counters (Learner._state_spec)."""
        B = self.budget
        return StateSpec(fields={"SVT_": Arr(("dim", B)), "alpha_": Arr((B,)),
                                 "m_": Num(int, 0, (B, "n_seen"))})

    def _check_state(self) -> None:
        """The compiled loops do not check bounds: refuse a state (e.g. set by hand) whose arrays
        or counters do not fit the declaration (:meth:`_state_spec`; the layout, not every
        entry, as this runs every call), instead of reading or writing outside the arrays.
        Read-only arrays (an unpickled read-only memory map) are copied."""
        try:
            self.check_layout()
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}: {exc}") from None
        if isinstance(self, _RandomRemovals):
            buf = self.random_buffer_
            if not (isinstance(buf, np.ndarray) and buf.ndim == 1 and buf.dtype == np.int64
                    and 0 <= int(self.random_next_) <= buf.shape[0]
                    and (buf.size == 0 or (buf.min() >= 0 and buf.max() < self.budget))):
                raise ValueError(f"{type(self).__name__}: invalid random removal buffer")

    def _decision(self, x):
        self._check_state()
        return expansion_value(*self.kernel_.spec(), self.SVT_, self.alpha_, self.m_, x, self._buffer())

    def diagnostics(self):
        return {"support_vectors": int(self.m_)}


class _RowEvents:
    """Mixin: the per-event hooks of a budgeted expansion whose round learns from the kernel row of
    its input (KAP, BSGD): predict_one is one compiled call (:func:`expansion_event_value`, the row
    into the work space ``self._work(ev).kt``), learn_one one more, ``self._learn_row(x, y, w,
    have_row)``, which starts from :func:`expansion_value_from` (the row predict_one left, or
    computed) and runs the learner's compiled round: the arithmetic of its run() loop."""

    def _event_features(self, x, ev):
        w = self._work(ev)
        ok, f = expansion_event_value(*self.kernel_.spec(), self.SVT_, self.alpha_, self.m_, x, MAX_ABS_FEATURE,
                                      w.kt)
        if not ok:
            self.events.check_values(self, x)
        return f, w.kt

    def _event_learn(self, x, y, z, ev):
        if z is None:
            self.events.check_values(self, x)
        return self._learn_row(x, y, self._work(ev), z is not None)


class _RandomRemovals:
    """Mixin: pre-drawn removal indices (see the module docstring, "Randomness")."""

    def _state_spec(self):
        spec = super()._state_spec()
        spec.sizes["rb"] = (0, RANDOM_BLOCK)
        spec.fields.update(random_buffer_=Arr(("rb",), np.int64, low=0, high=self.budget - 1),
                           random_next_=Num(int, 0, "rb"))
        return spec

    def _start_random(self):
        self.random_buffer_ = np.zeros(0, dtype=np.int64)
        self.random_next_ = 0

    def _refill_random(self):
        self.random_buffer_ = self._rng.integers(0, self.budget, size=RANDOM_BLOCK, dtype=np.int64)
        self.random_next_ = 0

    def _start(self, dim):
        super()._start(dim)
        self._start_random()

    def _process(self, X, y):
        """Run the compiled rounds; when they stop for want of removal indices, draw the next
        block and resume at the same row (so run, the per-instance loop and save/load agree)."""
        self._check_state()
        out = np.empty(X.shape[0])
        kt = self._buffer()
        i = 0
        while True:
            status, i, self.m_, self.random_next_ = self._rounds(X, y, out, i, kt)
            if status == DONE:
                return out
            self._refill_random()

    def _rounds(self, X, y, out, i, kt):
        """The subclass's compiled loop from row i: returns (status, row, m, random_next)."""
        raise NotImplementedError

    def compiled_plan(self):
        """The column expansion map with the learner's uniform-removal step and its declared state
        (:mod:`okl.components.steps.removals`: the buffer and its read position): ``auto``'s
        engine runs it, and hands the round back (:meth:`_update_round`) when the buffer is used
        up."""
        return Plan("column expansion", self.composition[1], SV="SVT_", w="alpha_", counts="m_",
                    budget=self.budget, kernel=self.kernel_.spec(),
                    constants=(self.budget, self.random_buffer_.shape[0], *self._step_constants()),
                    state=(("buffer", "random_buffer_"), ("next", "random_next_")))

    def _update_round(self, x, y, f):
        """auto's engine found the removal buffer used up on row x: draw the next block (as
        :meth:`_process` does) and learn the row with the compiled loop."""
        self._refill_random()
        _, _, self.m_, self.random_next_ = self._rounds(x[None, :], np.array([y], dtype=np.float64), np.empty(1), 0,
                                                        self._buffer())
