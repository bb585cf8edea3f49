"""BPA-S: the budgeted passive-aggressive learner, simple variant (see :mod:`okl.learners._expansion`)."""

from __future__ import annotations

import numpy as np

from okl.components import Plan
from okl.components.steps.bpas import bpas_rounds
from okl.runtime.hyperparameters import C as C_BOUND, accept
from okl.learners._expansion import _BudgetedExpansion
from okl.runtime.base import Arr, Num, register


@register("bpa-s")
class BPAS(_BudgetedExpansion):
    """Budgeted passive-aggressive with simple removal, BPA-S (Wang & Vucetic, AISTATS 2010;
    LSOKL ``BPAs.m``).

    On a round with hinge loss l_t = max(0, 1 - y_t f_t(x_t)) > 0: tau = min(C, l_t / k_tt)
    (k_tt = kappa(x_t, x_t)). If |SV| < B add (x_t, y_t tau) (the PA-I step). Else, for each
    support vector r, replacing (x_r, alpha_r) by (x_t, beta_r) with

        beta_r = alpha_r kappa(x_r, x_t) / k_tt + tau y_t,
        f_r(x_t) = f_t(x_t) - alpha_r kappa(x_r, x_t) + beta_r k_tt,
        Q_r = 1/2 ||alpha_r phi(x_r) - beta_r phi(x_t)||^2 + C max(0, 1 - y_t f_r(x_t))
            = 1/2 (alpha_r^2 k_rr + beta_r^2 k_tt - 2 alpha_r beta_r kappa(x_r, x_t)) + C l_r,

    and the replacement with the smallest Q_r (the first on ties) is made. LSOKL writes these
    with k_rr = k_tt = 1 (Gaussian kernel); for such kernels the two agree exactly.
    ``last_removal_`` holds (index replaced, Q_r*) of the latest removal.

    Parameters
    ----------
    budget : int, default 100
    C : float, default 1.0
        Aggressiveness (PA-I cap on tau).
    [[kernel, scale]]
    random_state : int or None
        Unused; accepted for a uniform interface.

    Per-round cost O(B D) (kernel row) + O(B) (removal costs).

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = BPAS(budget=50, kernel=okl.RBF(sigma=2))
    >>> trace = m.run(X, y)
    >>> m.diagnostics()["support_vectors"], 20 < trace.mistake_rate < 40
    (50, True)
    """

    _state_attrs = _BudgetedExpansion._state_attrs + ("kself_", "removals_", "last_removal_")
    composition = ("column expansion", "budgeted pa")
    _divergence_hint = "lower C (the step's cap)"

    hyperparameters = _BudgetedExpansion.hyperparameters + (C_BOUND.but(doc="The PA-I aggressiveness cap C."),)

    def __init__(self, *, budget: int = 100, C: float = 1.0, kernel=None,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    def _state_spec(self):
        spec = super()._state_spec()
        spec.fields.update(kself_=Arr((self.budget,), low=0.0), removals_=Num(int, 0, "n_seen"),
                           last_removal_=Arr((2,), finite=False))
        return spec

    def _start(self, dim):
        super()._start(dim)
        self.kself_ = np.zeros(self.budget)
        self.removals_ = 0
        self.last_removal_ = np.full(2, np.nan)

    def _process(self, X, y):
        self._check_state()
        out = np.empty(X.shape[0])
        kt = np.empty(self.budget)
        m, removals = bpas_rounds(*self.kernel_.spec(), X, y, out, self.SVT_, self.alpha_, self.kself_,
                                  self.m_, self.budget, self.C, kt, self.last_removal_)
        self.m_ = int(m)
        self.removals_ = int(self.removals_ + removals)
        return out

    def compiled_plan(self):
        """The column expansion map with the budgeted passive-aggressive step and its declared
        state (:mod:`okl.components.steps.bpas`): ``auto``'s engine runs it."""
        return Plan("column expansion", "budgeted pa", SV="SVT_", w="alpha_", counts="m_", budget=self.budget,
                    kernel=self.kernel_.spec(), constants=(self.budget, self.C),
                    state=(("kself", "kself_"), ("removals", "removals_"), ("last", "last_removal_")))

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "removals": int(self.removals_)}


#: BOGD ``decay`` values that name a rule instead of giving lambda
