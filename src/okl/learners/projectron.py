"""Projectron and Projectron++ (see :mod:`okl.learners._expansion`)."""

from __future__ import annotations

import math

import numpy as np

from okl.components import Plan
from okl.components.steps.projectron import projectron_rounds
from okl.runtime.hyperparameters import Hyper, accept
from okl.learners._expansion import _BudgetedExpansion
from okl.runtime.base import Arr, register


@register("projectron")
class Projectron(_BudgetedExpansion):
    """Projectron with a hard budget (Orabona, Keshet & Caputo, ICML 2008 / JMLR 2009; LSOKL
    ``projectron.m``).

    Keeps K_SV^{-1}, the inverse kernel matrix of the support set. On a mistake:
    d* = K_SV^{-1} k_t (k_t = [kappa(x_i, x_t)]_i), delta_t^2 = kappa(x_t, x_t) - k_t^T d*
    (squared distance of phi(x_t) to span(SV)).

    * grow, if |SV| < B and delta_t > ``threshold``: add (x_t, y_t) and update the inverse by the
      bordered-inverse rule K^{-1} <- [[K^{-1}, 0], [0, 0]] + [d*; -1][d*; -1]^T / delta_t^2
      (O(B^2), no refactorisation);
    * else project: alpha <- alpha + y_t d* (the perceptron step on the projection of phi(x_t)).

    The paper's Projectron has no budget: it projects when delta_t <= eta and grows otherwise.
    The tables' budgeted version is LSOKL's, which drops the threshold and grows until B:
    ``threshold = 0`` (default) gives LSOKL, ``threshold = eta`` with a large budget the paper.
    A point within sqrt(PROJECTRON_MIN_RESIDUAL kappa(x_t, x_t)) of the span is projected rather
    than added, so the inverse stays finite (LSOKL would divide by ~0 on a duplicate).
    LSOKL uses kappa(x_1, x_1) of the first support vector for every kappa(x_t, x_t) (right only
    for kernels with a constant diagonal); here it is computed per round.

    Parameters
    ----------
    budget : int, default 100
    threshold : float, default 0.0
        eta of the paper (>= 0).
    [[kernel, scale]]
    random_state : int or None
        Unused; accepted for a uniform interface.

    Per-round cost O(B D); O(B^2) more on update rounds.

    >>> import numpy as np, okl
    >>> X, y = okl.load_dataset("german")
    >>> m = Projectron(budget=30, kernel=okl.RBF(sigma=2))
    >>> trace = m.run(X[:300], y[:300])
    >>> K = okl.RBF(sigma=2)(m.support_vectors_, m.support_vectors_)
    >>> bool(np.allclose(m.Kinv_[:m.m_, :m.m_] @ K, np.eye(m.m_), atol=1e-6))
    True
    """

    _state_attrs = _BudgetedExpansion._state_attrs + ("Kinv_", "counts_")
    composition = ("column expansion", "projection")
    _divergence_hint = "raise threshold (fewer projections on nearly dependent support vectors)"
    _plus = False

    hyperparameters = _BudgetedExpansion.hyperparameters + (
        Hyper("threshold", "real", "Projection error below which the row is projected, not added.", low=0.0,
              symbol="eta"),)

    def __init__(self, *, budget: int = 100, threshold: float = 0.0, kernel=None,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    @property
    def U_(self) -> float:
        return 0.0

    def _state_spec(self):
        spec = super()._state_spec()
        B = self.budget
        spec.fields.update(Kinv_=Arr((B, B)), counts_=Arr((3,), np.int64, low=0, high="n_seen"))
        return spec

    def _start(self, dim):
        super()._start(dim)
        self.Kinv_ = np.zeros((self.budget, self.budget))
        self.counts_ = np.zeros(3, dtype=np.int64)

    def _process(self, X, y):
        self._check_state()
        out = np.empty(X.shape[0])
        kt = np.empty(self.budget)
        d = np.empty(self.budget)
        self.m_ = int(projectron_rounds(*self.kernel_.spec(), X, y, out, self.SVT_, self.alpha_,
                                        self.Kinv_, self.m_, self.budget, self.threshold ** 2,
                                        self._plus, self.U_, kt, d, self.counts_))
        return out

    def compiled_plan(self):
        """The column expansion map with the projection step and its declared state
        (:mod:`okl.components.steps.projectron`): ``auto``'s engine runs it."""
        return Plan("column expansion", "projection", SV="SVT_", w="alpha_", counts="m_", budget=self.budget,
                    kernel=self.kernel_.spec(), constants=(self.budget, self.threshold ** 2, float(self._plus), self.U_),
                    state=(("Kinv", "Kinv_"), ("counts", "counts_")))

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "grown": int(self.counts_[0]),
                "projected": int(self.counts_[1]), "margin_updates": int(self.counts_[2])}


@register("projectron++")
class ProjectronPlusPlus(Projectron):
    """Projectron++ (Orabona, Keshet & Caputo 2009; LSOKL ``proplus.m``): the :class:`Projectron`
    on mistakes, plus projection updates on margin errors.

    On a round without a mistake but with hinge loss l_t = 1 - y_t f_t(x_t) in (0, 1):
    d*, delta_t as in the Projectron, P2 = ||P phi(x_t)||^2 = d*^T K_SV d* (= k_t^T d*, O(B),
    where LSOKL recomputes K_SV, O(B^2 D)), tau = min(l_t / P2, 1),
    beta_t = tau (2 l_t - tau P2 - 2 U delta_t); if beta_t >= 0: alpha <- alpha + y_t tau d*.

    Parameters
    ----------
    budget : int, default 100
    threshold : float, default 0.0
        As in :class:`Projectron`.
    U : float or None, default None
        Penalty on the projection error; None = (1/4) sqrt((B + 1) / log(B + 1)) (LSOKL).
    [[kernel, scale]]
    random_state : int or None
        Unused; accepted for a uniform interface.

    Per-round cost O(B D); O(B^2) more on update rounds.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = ProjectronPlusPlus(budget=30, kernel=okl.RBF(sigma=2))
    >>> round(m.U_, 4)
    0.7511
    >>> m.run(X[:300], y[:300]).n_rounds
    300
    """

    name = "projectron++"
    _plus = True

    hyperparameters = Projectron.hyperparameters + (
        Hyper("U", "real", "Projectron++'s bound on the norm.", low=0.0, optional=True, none_means="unbounded",
              symbol="U"),)

    def __init__(self, *, budget: int = 100, threshold: float = 0.0, U: float | None = None,
                 kernel=None, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    @property
    def U_(self) -> float:
        if self.U is not None:
            return self.U
        return 0.25 * math.sqrt((self.budget + 1) / math.log(self.budget + 1))
