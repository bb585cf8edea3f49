"""Kernelized online gradient descent (KOGD / NORMA) and the shared kernel-expansion stage.

Kivinen, Smola & Williamson (2004); ALGORITHMS.md section 2; LSOKL ``binary/OGD.m``.

f_t(x) = sum_i alpha_i kappa(x_i, x). Each round, after predicting, every coefficient decays,
alpha_i <- (1 - eta lambda) alpha_i, and if l'(f_t(x_t), y_t) != 0 the example joins the support
set with alpha_t = -eta l'(f_t(x_t), y_t) (hinge: eta y_t on a margin error).

:func:`expansion_rounds` is also the first stage of NOGD, SkeGD and FORKS: KOGD that stores at
most B support vectors and stops at the *transition round*, the first round with a nonzero loss
derivative once the buffer is full.

Per-round cost O(|SV| D); memory grows with the support set unless ``budget`` is set.
"""

from __future__ import annotations

import numpy as np

from okl.components.steps.kogd import DONE, GROW, TRANSITION, expansion_rounds  # noqa: F401
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, Hyper, accept
from okl.components.maps.expansion import expansion_decision

#: NORMA's regulariser lambda (Kivinen et al. 2004): every coefficient shrinks by 1 - eta lambda a round
DECAY = Hyper("decay", "real", "NORMA's regulariser: coefficients shrink by (1 - eta decay) a round.", low=0.0,
              symbol="lambda")




def expansion_plan(learner) -> Plan:
    """The compiled plan (:meth:`okl.runtime.events.EventPath.compiled_plan`) of a two-stage
    learner's stage 1 (NOGD, SkeGD, FORKS): the kernel expansion of :func:`expansion_rounds` over
    its support vectors ``SV_`` and coefficients ``alpha_`` (``m_`` of them, at most ``budget``),
    the support step stopping at the budget (the learner's transition)."""
    return Plan("expansion", "support", SV="SV_", w="alpha_", counts="m_", budget=learner.budget,
                kernel=learner.kernel_.spec(), eta=learner.eta, budget_rule="stop")


@register("kogd")
class KOGD(Learner):
    """Kernelized online gradient descent (NORMA with ``decay`` = lambda).

    Parameters
    ----------
    eta : float, default 0.2
        Step size (LSOKL and FORKS code).
    decay : float, default 0.0
        NORMA regulariser lambda; coefficients shrink by (1 - eta lambda) each round. Must keep
        eta * decay < 1.
    budget : int or None, default None
        Keep at most this many support vectors (later examples are not added); None = unbounded.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (KOGD is deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = KOGD(kernel=okl.RBF(sigma=2)).run(X[:200], y[:200])
    >>> m.n_rounds
    200
    """

    _state_attrs = ("SV_", "alpha_", "m_")
    composition = ("expansion", "norma")

    hyperparameters = (ETA, DECAY, BUDGET.but(optional=True, none_means="unbounded"), *KERNEL_LEARNER)

    def __init__(self, *, eta: float = 0.2, decay: float = 0.0, budget: int | None = None,
                 loss="hinge", kernel=None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())
        if self.eta * self.decay >= 1.0:
            raise ValueError(f"eta * decay must be < 1 so coefficients shrink, got {self.eta * self.decay}")

    def _state_spec(self):
        # capacity: min(budget, 64) doubled up to the budget (or, unbounded, to 2x the rounds)
        cap_high = self.budget if self.budget is not None else max(64, 2 * self.n_seen_)
        return StateSpec(sizes={"cap": (1, cap_high)}, fields={
            "SV_": Arr(("cap", "dim")), "alpha_": Arr(("cap",)), "m_": Num(int, 0, ("cap", "n_seen"))})

    def _start(self, dim):
        cap = 64 if self.budget is None else min(self.budget, 64)
        self.SV_ = np.zeros((cap, dim))
        self.alpha_ = np.zeros(cap)
        self.m_ = 0

    def _grow(self):
        cap = self.SV_.shape[0] * 2
        if self.budget is not None:
            cap = min(cap, self.budget)
        SV = np.zeros((cap, self.SV_.shape[1]))
        SV[: self.m_] = self.SV_[: self.m_]
        alpha = np.zeros(cap)
        alpha[: self.m_] = self.alpha_[: self.m_]
        self.SV_, self.alpha_ = SV, alpha

    def _decision(self, x):
        return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)

    def compiled_plan(self):
        """The expansion map over the arrays laid out now (``SV_``'s rows) with NORMA's step
        (:mod:`okl.components.steps.kogd`): ``auto``'s engine runs it, and hands a round back to
        :meth:`_update_round` when the arrays are full below the budget."""
        return Plan("expansion", "norma", SV="SV_", w="alpha_", counts="m_", budget=self.SV_.shape[0],
                    kernel=self.kernel_.spec(), constants=(self.eta, self.decay, -1 if self.budget is None else self.budget))

    def _update_round(self, x, y, f):
        """auto's engine found the arrays full below the budget on row x: grow them and learn the row
        (:meth:`_process`, the same compiled loop)."""
        self._process(x[None, :], np.array([y], dtype=np.float64))

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        budget = np.iinfo(np.int64).max if self.budget is None else self.budget
        i = 0
        while True:
            status, i, self.m_ = expansion_rounds(*self.kernel_.spec(), self.loss_.kind, self.eta,
                                                  self.decay, X, y, out, i, self.SV_, self.alpha_,
                                                  self.m_, budget, False)
            if status == DONE:
                return out
            self._grow()

    def diagnostics(self):
        return {"support_vectors": int(self.m_)}
