"""RBP: the Random Budget Perceptron (see :mod:`okl.learners._expansion`)."""

from __future__ import annotations

from okl.components.steps.removals import rbp_rounds
from okl.learners._expansion import _BudgetedExpansion, _RandomRemovals
from okl.runtime.base import register


@register("rbp")
class RBP(_RandomRemovals, _BudgetedExpansion):
    """Random budget perceptron (Cavallanti, Cesa-Bianchi & Gentile 2007; LSOKL ``RBP.m``).

    On a mistake (y^_t != y_t): if |SV| = B remove a support vector chosen uniformly at random;
    then add x_t with alpha = y_t. No other round changes the model.

    The FORKS C++ code removes the random SV but forgets to add x_t when the budget is full
    (ALGORITHMS.md 6); this follows the paper and LSOKL (remove, then add).

    Parameters
    ----------
    budget : int, default 100
        B (the SkeGD/FORKS tables use 100 for T <= 10,000, else 200).
    [[kernel, scale]]
    random_state : int or None
        Seeds the removal choices.

    Per-round cost O(B D).

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = RBP(budget=50, kernel=okl.RBF(sigma=2), random_state=0)
    >>> trace = m.run(X, y)
    >>> m.diagnostics()["support_vectors"], 25 < trace.mistake_rate < 45
    (50, True)
    """

    _state_attrs = _BudgetedExpansion._state_attrs + ("random_buffer_", "random_next_")
    composition = ("column expansion", "random budget perceptron")
    _divergence_hint = "scale the input (scale='auto'; a perceptron has no step to lower)"

    def _rounds(self, X, y, out, i, kt):
        return rbp_rounds(*self.kernel_.spec(), X, y, out, i, self.SVT_, self.alpha_, self.m_, self.budget,
                          self.random_buffer_, self.random_next_, kt)

    def _step_constants(self) -> tuple:
        return ()
