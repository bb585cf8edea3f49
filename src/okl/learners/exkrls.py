"""EX-KRLS: extended kernel recursive least squares (the tracking model), a composition.

Liu, Park, Wang & Principe, "Extended kernel recursive least squares algorithm", IEEE TSP 57(10)
2009 (KAFBOX ``lib/exkrls.m``). The weights in feature space follow a random walk
w_{t+1} = alpha w_t + noise, and the filter is the Kalman filter of that model in the kernel's
feature space: each input joins the dictionary (until ``budget`` are stored, KAFBOX's maximum
size M) with the a-priori error's step, every coefficient is scaled by alpha, and the model
forgets old data by beta. The rule, written out, is the ``"ex-krls"`` step's
(:mod:`okl.components.steps.exkrls`).

In okl's terms it is the **expansion** map over the dictionary with that step, so ``run()``,
``predict_one`` / ``learn_one``, ``auto``'s engine (``members=[..., ("ex-krls", 1.0, {})]``, one
output), both adapters and model files take it with nothing of its own there
(``docs/adding-a-learner.md`` walks through it beside KLMS). K classes are K copies.

Tasks: a least-squares rule. ``loss="squared"`` is the published filter; a classification loss
(the default ``"hinge"``) runs the same rule on the labels -1 / +1 (the class is the sign).

Defaults: KAFBOX's alpha 0.999, beta 0.995, lambda 1e-2, q 1e-3; ``budget`` 200 (KAFBOX's M is 500:
the round costs O(m^2), and okl's KRLS keeps 200 for that reason, docs/results/krls.md), a Gaussian
kernel whose width is chosen from the stream's first rows, the input map of :mod:`okl.scaling`,
target centring. ``paper_params`` gives KAFBOX's setting (no input map, no centring; pass the
width as ``kernel``). Per round O(m d + m^2) while the dictionary grows, O(m d) once it is full;
memory O(M d + M^2).

>>> import okl
>>> from okl.checks import friedman_regression   # Friedman #1, targets scaled to [0, 1]
>>> X, y = friedman_regression(1000)
>>> m = okl.make("ex-krls", loss="squared")
>>> mse = m.run(X, y).mean_squared_loss           # the targets' variance: 0.024
>>> print(round(mse, 4), m.diagnostics(), m.rounds_)
0.0073 {'dictionary': 200} 1000
"""

from __future__ import annotations

import numpy as np

from okl.components import Plan
from okl.components.maps.expansion import expansion_decision
from okl.components.steps.exkrls import exkrls_rounds
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.runtime.hyperparameters import BUDGET, KERNEL_LEARNER, Hyper, accept

STATE_FORGETTING = Hyper("state_forgetting", "real", "The state transition alpha of the weights' random walk.",
                         low=0.0, high=1.0, low_open=True, symbol="alpha")
FORGETTING = Hyper("forgetting", "real", "The data forgetting factor beta.", low=0.0, high=1.0, low_open=True,
                   symbol="beta")
REGULARIZATION = Hyper("regularization", "real", "The regularisation lambda.", low=0.0, low_open=True,
                       symbol="lambda")
TRADEOFF = Hyper("tradeoff", "real", "The trade-off q between the state's variation and the measurement noise.",
                 low=0.0, symbol="q")


@register("ex-krls")
class EXKRLS(Learner):
    """Extended kernel recursive least squares (tracking model); see the module docstring.

    Parameters
    ----------
    state_forgetting : float, default 0.999
        alpha in (0, 1]: the weights' random walk w_{t+1} = alpha w_t + noise (KAFBOX's ``alphaf``).
    forgetting : float, default 0.995
        beta in (0, 1]: the data forgetting factor (KAFBOX's).
    regularization : float, default 1e-2
        lambda > 0 (KAFBOX's).
    tradeoff : float, default 1e-3
        q >= 0: the state's variation against the measurement noise (KAFBOX's).
    budget : int, default 200
        M: inputs join the dictionary until it holds M; then nothing is learned.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (deterministic); accepted for a uniform interface.
    """

    _state_attrs = ("SV_", "alpha_", "Q_", "rho_", "rounds_", "m_")
    composition = ("expansion", "ex-krls")

    hyperparameters = (STATE_FORGETTING, FORGETTING, REGULARIZATION, TRADEOFF,
                       BUDGET.but(doc="M: inputs join until the dictionary holds M."), *KERNEL_LEARNER)

    def __init__(self, *, state_forgetting: float = 0.999, forgetting: float = 0.995, regularization: float = 1e-2,
                 tradeoff: float = 1e-3, budget: int = 200, loss="hinge", kernel=None, center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    @classmethod
    def paper_params(cls, budget):
        """KAFBOX's setting: its four constants, no input map, no target centring (pass the width
        as ``kernel``)."""
        return {**super().paper_params(budget), "state_forgetting": 0.999, "forgetting": 0.995,
                "regularization": 1e-2, "tradeoff": 1e-3, "center_targets": False}

    def _state_spec(self):
        M = self.budget
        return StateSpec(fields={"SV_": Arr((M, "dim")), "alpha_": Arr((M,)), "Q_": Arr((M, M)),
                                 "rho_": Num(float), "rounds_": Num(int, 0, "n_seen"),
                                 "m_": Num(int, 0, (M, "n_seen"))})

    def _start(self, dim):
        M = self.budget
        self.SV_ = np.zeros((M, dim))
        self.alpha_ = np.zeros(M)
        self.Q_ = np.zeros((M, M))
        self.rho_ = 0.0
        self.rounds_ = 0
        self.m_ = 0

    def _constants(self):
        return self.state_forgetting, self.forgetting, self.regularization, self.tradeoff

    def compiled_plan(self):
        """The expansion map over the dictionary with the ``"ex-krls"`` step and its declared
        state (:mod:`okl.components.steps.exkrls`): ``auto``'s engine runs it."""
        return Plan("expansion", "ex-krls", SV="SV_", w="alpha_", counts="m_", budget=self.budget,
                    kernel=self.kernel_.spec(), constants=self._constants(),
                    state=(("Q", "Q_"), ("rho", "rho_"), ("rounds", "rounds_")))

    def _decision(self, x):
        return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        work = np.empty((2, self.budget))
        m, rho, rounds = exkrls_rounds(*self.kernel_.spec(), *self._constants(), X, np.asarray(y, dtype=np.float64),
                                       out, self.SV_, self.alpha_, self.Q_, self.m_, float(self.rho_),
                                       int(self.rounds_), work[0], work[1])
        self.m_, self.rho_, self.rounds_ = int(m), float(rho), int(rounds)
        return out

    def diagnostics(self):
        return {"dictionary": int(self.m_)}


__all__ = ["EXKRLS"]
