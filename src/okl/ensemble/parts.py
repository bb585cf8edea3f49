"""``auto``'s parts (:class:`okl.ensemble.auto.Auto` is composed of them, as every learner of its
input map, heads, per-event path and state I/O: :mod:`okl.runtime.base`): each the runtime's part
with what a pool of members adds, the pool's own work left in ``Auto``'s methods they call."""

from __future__ import annotations

from okl.engine.roots import prepare_engine
from okl.runtime.events import EventPath
from okl.runtime.heads import Heads
from okl.runtime.inputs import InputMap
from okl.runtime.modelfile import StateIO


class PoolHeads(Heads):
    """``auto``'s K outputs: every member's (:meth:`Auto._set_outputs`, :meth:`Auto._grow_outputs`,
    :meth:`Auto._drop_last_output`)."""

    def set_outputs(self, learner, signs):
        learner._set_outputs(signs)

    def grow_outputs(self, learner, K):
        learner._grow_outputs(K)

    def drop_last_output(self, learner):
        learner._drop_last_output()


class PoolInputs(InputMap):
    """``auto``'s input side: rows wider than :data:`okl.ensemble.hashing.HASH_WIDTH` fix the hashed width at the first
    example (:meth:`WideRows._fix_input_width`), the window's rows are predicted by the window
    member's smoother (:meth:`WindowPhase._window_estimate`), and the engine's compile starts with
    the first rows."""

    def ensure_started(self, learner, dim):
        learner._fix_input_width(dim)
        super().ensure_started(learner, dim)

    def window_estimate(self, learner, x):
        return learner._window_estimate(x)  # (the window member's smoother: WindowPhase)

    def advance(self, learner, X, y):
        prepare_engine(learner.n_outputs_ > 0)  # (a cold cache: its compile starts with the first rows)
        return super().advance(learner, X, y)


class PoolEvents(EventPath):
    """``auto``'s per-event path: its engine's plans (:class:`okl.ensemble.paths.EnginePaths`) and
    wide rows hashed (:class:`okl.ensemble.hashing.WideRows`)."""

    def fast_plan(self, learner):
        return learner._fast_plan()

    def sparse_event(self, learner, x, y, learn):
        return learner._sparse_event(x, y, learn)

    def learn_round(self, learner, x, y):
        return learner._learn_round(x, y)

    def learn_rounds(self, learner, X, y):
        return learner._learn_rounds(X, y)


class PoolFiles(StateIO):
    """``auto``'s state I/O: its model file holds every member's model file, packed into
    ``members_blob_`` while it is written (:meth:`Auto._pack`)."""

    def write(self, learner, fh):
        if learner.dim_ is not None and learner.started_:
            learner._pack()
            try:
                super().write(learner, fh)
            finally:
                learner.members_blob_ = learner.member_sizes_ = None
        else:
            super().write(learner, fh)
