"""Kernel smoother on a sliding window (``window``): what a nearest-neighbour learner learns.

The Nadaraya-Watson estimator (Nadaraya 1964; Watson 1964) over the last B examples of the
stream, W_t = {(x_i, y_i)}:

    f(x) = sum_{i in W_t} kappa(x_i, x) y_i / sum_{i in W_t} kappa(x_i, x),

the kernel-weighted mean of the labels (-1/+1: a weighted vote in [-1, 1]) or targets of the
stored rows; with K classes (one-vs-rest targets y_ik = +1 for the row's class, -1 otherwise)
f_k = (2 S_k - S) / S, S_k the kernel mass of the rows of class k and S the whole mass. Learning
stores (x_t, y_t) in place of the oldest row: nothing is fitted, so nothing can diverge, and the
window forgets at a fixed rate, which follows a stream whose classes move (River's RandomRBFDrift:
moving centroids, where a k-nearest-neighbour classifier on a window beats every fitted learner).

Kernel: a distance kernel, Gaussian exp(-||x - x'||^2 / (2 sigma^2)) or Laplacian
exp(-||x - x'||_1 / sigma). Its width is a neighbourhood, not the length scale of a function to
fit: with no kernel given the learner takes :data:`WIDTH_FACTOR` = 1/4 of the width the kernel
learners choose from the same window (:func:`okl.kernels.scale_sigma`, sigma_0: exp(-2) at the
root-mean-square pairwise distance), so that a row's weight falls to exp(-2) at a quarter of that
distance (measured on River's streams, docs/results/window.md: sigma_0 / 8 to sigma_0 / 4 give the
same accuracy on RandomRBFDrift, sigma_0 / 2 loses 6 points). Numerically the weights are computed
relative to the nearest stored row (kappa_i / kappa_nearest, the same ratio): a row far from every
stored one is predicted by its nearest neighbours instead of underflowing to 0 / 0.

Defaults: B = ``budget`` = 200 rows (twice the kernel learners' budget of 100; in ``auto``
2 x auto's budget, as FOGD takes D = 4B directions). Why 200: on River's RandomRBFDrift the pool
gains 3.9 / 4.0 points with 200 rows, 5.0 / 5.5 with 300 and 5.5 / 5.9 with 500, but its round
costs 3-6 % of auto's run() on codrna at 200 rows and 5-10 % at 300 (docs/results/window.md).
Per-round cost O(B d) (one kernel row over the window, vectorised over the rows) plus O(d) to
store the row; memory O(B d). ``loss`` only says the task (a classification loss: labels;
"squared" etc.: regression) -- nothing is minimised. Regression with ``center_targets``
(default) smooths the residuals from the running target mean
(:meth:`okl.runtime.heads.Heads.centers_targets`).

In ``auto``'s pool (:mod:`okl.ensemble.auto`) the window is one member, computed in its compiled
engine (:mod:`okl.engine.core`, by :func:`window_decision` and :func:`window_store`, the
arithmetic of ``run()`` here), K outputs included.
"""

from __future__ import annotations

import numpy as np

from okl._compiled import jit
from okl.kernels import LAPLACIAN_KIND, RBF_KIND
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, KERNEL_LEARNER, accept
from okl.runtime.events import drop_event_cache
from okl.runtime.heads import Heads
from okl.runtime.state import MAX_CLASSES
from okl.components.maps.window import window_decision, window_store

#: the window's width as a fraction of the kernel learners' chosen width sigma_0 (module docstring)
WIDTH_FACTOR = 0.25
#: rows kept per unit of budget (the window keeps 2 B rows: module docstring)
BUDGET_SCALE = 2


@jit
def window_rounds(kind, a, LT, Y, m, pos, X, y, nk, s, out):
    """Test-then-train over the rows of X: each row's decision(s) into ``out`` (n, or n x K),
    then the row stored; returns (m, pos)."""
    for r in range(X.shape[0]):
        if nk == 0:
            out[r, 0] = window_decision(kind, a, LT, Y, m, X[r], s, 0, s)
        else:
            window_decision(kind, a, LT, Y, m, X[r], s, nk, out[r])
        m, pos = window_store(LT, Y, m, pos, X[r], y[r])
    return m, pos


class WindowHeads(Heads):
    """The window's K outputs (only in auto's engine): the stored labels become class indices. A new
    class needs no arrays (it has no stored rows: its output is -1 until it has), so the base
    heads' grow_outputs / drop_last_output, which only count outputs here, apply."""

    def set_outputs(self, learner, signs) -> None:
        """Labels -1/+1 become the indices of the outputs with those signs (a binary window turned
        into the K-output form: output o is the stored vote times ``signs[o]``)."""
        if learner.n_outputs_:
            raise ValueError("the learner has K outputs already")
        signs = [float(s) for s in signs]
        if getattr(learner, "Y_", None) is not None and learner.m_:  # (unstarted: no labels to convert)
            index = {}
            for sign in (-1.0, 1.0):
                if sign not in signs:
                    raise ValueError(f"window: no output of sign {sign:+g} among {signs}: the stored labels "
                                     "have no class")
                index[sign] = float(signs.index(sign))
            learner.Y_[: learner.m_] = np.where(learner.Y_[: learner.m_] > 0.0, index[1.0], index[-1.0])
        learner.n_outputs_ = len(signs)
        learner.calibration_ = None
        drop_event_cache(learner)


@register("window")
class KernelWindow(Learner):
    """Nadaraya-Watson kernel smoother over the last ``budget`` rows; see the module docstring.

    Parameters
    ----------
    budget : int, default 200
        Rows kept (the window).
    kernel : RBF, Laplacian or None, default None
        None: a Gaussian of width sigma_0 / 4, sigma_0 chosen from the first rows
        (:func:`okl.kernels.scale_sigma`).
    loss : str or Loss, default "hinge"
        Only the task: a classification loss (labels -1/+1) or a regression loss (targets).
    center_targets : bool, default True
        Regression: smooth the residuals from the running target mean.
    scale : {"auto", "symlog", "range", "affine"} or None, default "auto"
        The per-feature input map fixed in the first 50 rows (:mod:`okl.scaling`).
    random_state : int or None
        Unused (deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> round(okl.make("window").run(X, y).mistake_rate, 1)
    32.4
    """

    _state_attrs = ("LT_", "Y_", "m_", "pos_", "n_outputs_")
    heads = WindowHeads()
    _width_factor = WIDTH_FACTOR
    _budget_scale = BUDGET_SCALE
    _divergence_hint = "check the targets (the smoother averages them; it has no step to lower)"

    hyperparameters = (BUDGET.but(doc="Rows kept (the window)."), *KERNEL_LEARNER)

    def __init__(self, *, budget: int = 100 * BUDGET_SCALE, kernel=None, loss="hinge", center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())
        if self.kernel is not None and self.kernel.spec()[0] not in (RBF_KIND, LAPLACIAN_KIND):
            raise ValueError(f"window: kernel must be a distance kernel (RBF or Laplacian), got {self.kernel!r}")

    def _state_spec(self):
        B = self.budget
        labels = Arr((B,), low=0, high=self.n_outputs_ - 1) if self.n_outputs_ else Arr((B,))
        return StateSpec(fields={"LT_": Arr(("dim", B)), "Y_": labels, "m_": Num(int, 0, (B, "n_seen")),
                                 "pos_": Num(int, 0, B - 1), "n_outputs_": Num(int, 0, MAX_CLASSES)})

    _rows_per_budget = 1

    def _start(self, dim):
        self.LT_ = np.zeros((dim, self.budget))
        self.Y_ = np.zeros(self.budget)
        self.m_ = 0
        self.pos_ = 0

    def _spec(self):
        kind, a, _, _ = self.kernel_.spec()
        return int(kind), a

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def compiled_plan(self):
        """The window map (rows ``LT_`` transposed, labels ``Y_``, ``m_`` of them, the next write at
        ``pos_``) with the store step: auto's engine runs it (no per-event plan of its own)."""
        return Plan("window", "store", SV="LT_", w="Y_", counts="m_", extra_counts=(("pos_", "pos"),),
                    budget=self.budget, kernel=self.kernel_.spec())

    def _decision(self, x):
        kind, a = self._spec()
        s = np.empty(self.budget)
        if self.n_outputs_:
            out = np.empty(self.n_outputs_)
            window_decision(kind, a, self.LT_, self.Y_, self.m_, x, s, self.n_outputs_, out)
            return out
        return window_decision(kind, a, self.LT_, self.Y_, self.m_, x, s, 0, s)

    def _process(self, X, y):
        kind, a = self._spec()
        n = X.shape[0]
        out = np.empty((n, max(self.n_outputs_, 1)))
        self.m_, self.pos_ = window_rounds(kind, a, self.LT_, self.Y_, self.m_, self.pos_, X,
                                           np.asarray(y, dtype=np.float64), self.n_outputs_, np.empty(self.budget), out)
        return out if self.n_outputs_ else out[:, 0]


__all__ = ["KernelWindow", "window_decision", "window_store", "window_rounds", "WIDTH_FACTOR", "BUDGET_SCALE"]
