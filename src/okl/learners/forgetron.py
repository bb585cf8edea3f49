"""The Forgetron (see :mod:`okl.learners._expansion`)."""

from __future__ import annotations

import numpy as np

from okl.components import Plan
from okl.components.steps.forgetron import forgetron_rounds, forgetron_shrink  # noqa: F401
from okl.learners._expansion import _BudgetedExpansion
from okl.runtime.base import Arr, Num, register


@register("forgetron")
class Forgetron(_BudgetedExpansion):
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz & Singer, NIPS 2005 / SICOMP 2008; LSOKL
    ``forgetron.m``).

    On a round with y_t f_t(x_t) <= 0 (M counts these rounds, this one included):

    1. add x_t with alpha = y_t;
    2. if that makes |SV| = B + 1: let r be the *oldest* support vector, delta = alpha_r y_r its
       current weight (a product of earlier shrink factors), mu = y_r f'(x_r) with f' the
       expansion including x_t; choose the largest phi_t in (0, 1] with

           Q + (delta phi)^2 + 2 delta phi - 2 delta phi^2 mu <= (15/32) M,

       multiply every alpha (the new one too) by phi_t, add the left-hand side's Psi term to Q,
       and delete r.

    LSOKL solves the quadratic with the wrong root when its leading coefficient
    delta^2 - 2 delta mu is negative (it returns the larger root, a phi_t > 1 that *grows* the
    weights); here phi_t is the largest feasible value in (0, 1] as the paper defines it
    (:func:`forgetron_shrink`). ``last_shrink_`` holds (phi, delta, mu, Q before, M) of the latest
    removal, ``Q_`` and ``M_`` the running totals, for checking the defining inequality.

    Parameters
    ----------
    budget : int, default 100
    [[kernel, scale]]
    random_state : int or None
        Unused (the Forgetron is deterministic); accepted for a uniform interface.

    Per-round cost O(B D) (two kernel rows on removal rounds).

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = Forgetron(budget=50, kernel=okl.RBF(sigma=2))
    >>> trace = m.run(X, y)
    >>> m.diagnostics()["support_vectors"], bool(0 < m.last_shrink_[0] <= 1)
    (50, True)
    """

    _divergence_hint = "scale the input (scale='auto'; a perceptron has no step to lower)"
    _state_attrs = _BudgetedExpansion._state_attrs + ("labels_", "head_", "Q_", "M_", "removals_",
                                                      "last_shrink_")
    composition = ("column expansion", "forgetron")

    def _start(self, dim):
        super()._start(dim)
        self.labels_ = np.zeros(self.budget)
        self.head_ = 0
        self.Q_ = 0.0
        self.M_ = 0
        self.removals_ = 0
        self.last_shrink_ = np.full(5, np.nan)

    def _state_spec(self):
        spec = super()._state_spec()
        spec.fields.update(labels_=Arr((self.budget,), low=-1.0, high=1.0),
                           head_=Num(int, 0, self.budget - 1), Q_=Num(float), M_=Num(int, 0, "n_seen"),
                           removals_=Num(int, 0, "n_seen"), last_shrink_=Arr((5,), finite=False))
        return spec

    def _check_state(self):
        super()._check_state()
        if not 0 <= int(self.head_) < self.budget:
            raise ValueError(f"Forgetron: state head_ = {self.head_} outside [0, {self.budget})")

    def _process(self, X, y):
        self._check_state()
        out = np.empty(X.shape[0])
        self.m_, self.head_, self.Q_, self.M_, self.removals_ = forgetron_rounds(
            *self.kernel_.spec(), X, y, out, self.SVT_, self.alpha_, self.labels_, self.m_,
            self.head_, self.budget, float(self.Q_), int(self.M_), int(self.removals_),
            self.last_shrink_, self._buffer(), np.empty(X.shape[1]))
        self.m_, self.head_, self.M_, self.removals_ = (int(self.m_), int(self.head_), int(self.M_),
                                                        int(self.removals_))
        self.Q_ = float(self.Q_)
        return out

    def compiled_plan(self):
        """The column expansion map with the Forgetron's step and its declared state
        (:mod:`okl.components.steps.forgetron`): ``auto``'s engine runs it."""
        return Plan("column expansion", "forgetron", SV="SVT_", w="alpha_", counts="m_", budget=self.budget,
                    kernel=self.kernel_.spec(), constants=(self.budget,),
                    state=(("labels", "labels_"), ("head", "head_"), ("Q", "Q_"), ("M", "M_"), ("removals", "removals_"),
                           ("last", "last_shrink_")))

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "updates": int(self.M_),
                "removals": int(self.removals_), "Q": float(self.Q_)}
