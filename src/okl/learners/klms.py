"""KLMS: kernel least mean squares on a sliding dictionary, assembled from the component table.

Liu, Pokharel & Principe, "The kernel least-mean-square algorithm", IEEE TSP 56(2) 2008
(../shared/KAF.md K1; KAFBOX ``lib/klms.m``). f_t(x) = sum_{i in D} alpha_i kappa(d_i, x); each
round, with the a-priori error e_t = y_t - f_t(x_t), the input joins the dictionary D with
alpha_t = eta e_t (stochastic gradient descent on the squared error in the kernel's feature space).

In okl's terms this is the **expansion** map with the **support** step (alpha_t = -eta' l'(f, y),
:mod:`okl.components`): okl's squared loss is (f - y)^2 with l' = 2 (f - y), so the step
constant is eta' = eta / 2 and alpha_t = eta e_t exactly (scaling by 2 is exact in floating point).
With a classification loss the same rule is the kernel perceptron with step eta (hinge: alpha_t =
eta y_t on a margin error). The dictionary is bounded by the support step's **merge-nearest**
budget rule: once ``budget`` centres are stored, an input's coefficient eta e_t is added to its
nearest centre's (QKLMS's quantisation, Chen et al. 2012, with the budget as its limit), so nothing
learned is dropped. KAFBOX instead stops learning at M = 10,000 centres. A sliding dictionary
(replace the oldest centre) was measured and not taken: dropping a coefficient on a correlated
stream is an error the next steps amplify, and KLMS diverged on the Lorenz series (MSE +70.6 dB,
against -1.5 dB with merging; codrna 18.8 % against 6.7 %: docs/results/klms.md).

Because the learner is a map and a step of the table, its per-event path
(:mod:`okl.engine.fastpath`), ``auto``'s engine (one and K outputs) and model files need nothing
of their own: ``docs/adding-a-learner.md`` walks through this module.

Defaults: eta = 0.5 (KAFBOX's; stable for kappa(x, x) = 1 while eta < 2), a Gaussian kernel whose
width is chosen from the stream's first rows, the input map of :mod:`okl.scaling`, 100 centres.
Per-round cost O(B d) for B = ``budget`` centres of d features (twice that once they are stored:
the nearest centre); memory O(B d).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import copy_into, jit, kernel_value, loss_derivative, merge_into
from okl.components.maps.expansion import expansion_decision
from okl.losses import SQUARED
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.components import Plan
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, accept
from okl.runtime.state import MAX_CLASSES


@jit
def klms_rounds(kind, a, b, c, lkind, step, X, Y, out, SV, alpha, added, merge_above, merge_when_full):
    """Predict-then-learn over the rows of X: out[i] = f(X[i]), then the support step: once B
    centres are stored the merge-nearest rule (``merge_when_full``) or the replace-oldest one
    (slot ``added % B``), and, with ``merge_above`` <= 1, QKLMS's merge into the most similar
    centre (the arithmetic of the per-event plan, bit for bit). Returns the count of centres
    added so far."""
    B = SV.shape[0]
    for i in range(X.shape[0]):
        x = X[i]
        f = expansion_decision(kind, a, b, c, SV, alpha, min(added, B), x)
        out[i] = f
        g = loss_derivative(lkind, f, Y[i])
        if g != 0.0:
            near = merge_into(kind, a, b, c, SV, added, x, merge_above, merge_when_full)
            if near >= 0:
                alpha[near] += -step * g
            else:
                slot = added % B
                copy_into(SV[slot], x)
                alpha[slot] = -step * g
                added += 1
    return added


@register("klms")
class KLMS(Learner):
    """Kernel least mean squares with a sliding dictionary; see the module docstring.

    Parameters
    ----------
    eta : float, default 0.5
        The KLMS step eta (Liu et al. 2008, Eq. 14): a new centre's coefficient is eta e_t.
    budget : int, default 100
        Centres kept; once they are stored an input merges into its nearest centre.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (KLMS is deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = okl.make("klms")
    >>> round(m.run(X, y).mistake_rate, 1)
    26.4
    >>> m.diagnostics()
    {'centres': 100, 'added': 100}
    """

    _state_attrs = ("SV_", "alpha_", "added_", "n_outputs_")
    #: K outputs (auto's engine): one coefficient row per output over the shared centres
    _output_attrs = {"alpha_": -1.0}

    hyperparameters = (ETA.but(doc="The KLMS step: a new centre's coefficient is eta e_t."),
                       BUDGET.but(doc="Centres kept (then inputs merge into their nearest)."), *KERNEL_LEARNER)

    def __init__(self, *, eta: float = 0.5, budget: int = 100, loss="hinge", kernel=None,
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    def _state_spec(self):
        return StateSpec(fields={"SV_": Arr((self.budget, "dim")), "alpha_": Arr(self.heads.out_shape(self, self.budget)),
                                 "added_": Num(int, 0, "n_seen"), "n_outputs_": Num(int, 0, MAX_CLASSES)})

    def _start(self, dim):
        self.SV_ = np.zeros((self.budget, dim))
        self.alpha_ = np.zeros(self.heads.out_shape(self, self.budget))
        self.added_ = 0

    def _step(self) -> float:
        """The support step's constant eta': eta / 2 under the squared loss (l' = 2 (f - y))."""
        return self.eta / 2.0 if self.loss_.kind == SQUARED else self.eta

    # ---- the components: the whole compiled state --------------------------------------------

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def _budget_rule(self) -> str:
        """The support step's rule once ``budget`` centres are stored: the input merges into its
        nearest centre (module docstring)."""
        return "merge nearest"

    def _merge_above(self) -> float | None:
        """The kernel value above which a row merges into a centre (QKLMS); None: never."""
        return None

    def compiled_plan(self):
        return Plan("expansion", "support", SV="SV_", w="alpha_", counts="added_", budget=self.budget,
                    budget_rule=self._budget_rule(), kernel=self.kernel_.spec(), eta=self._step(),
                    merge_above=self._merge_above())

    # ---- the generic path (run() and the events no plan takes) -----------------------------

    def _decision(self, x):
        m = min(self.added_, self.budget)
        if not self.n_outputs_:  # (the compiled decision of run() and the plans)
            return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, m, x)
        k = np.array([kernel_value(*self.kernel_.spec(), self.SV_[i], x) for i in range(m)])
        return self.alpha_[:, :m] @ k

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        merge = self._merge_above()
        self.added_ = int(klms_rounds(*self.kernel_.spec(), self.loss_.kind, self._step(), X,
                                      np.asarray(y, dtype=np.float64), out, self.SV_, self.alpha_, self.added_,
                                      2.0 if merge is None else merge, self._budget_rule() == "merge nearest"))
        return out

    def diagnostics(self):
        return {"centres": min(int(self.added_), self.budget), "added": int(self.added_)}


__all__ = ["KLMS", "klms_rounds"]
