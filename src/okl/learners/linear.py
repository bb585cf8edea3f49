"""Linear online gradient descent: the reference a kernel learner must beat to be worth its cost.

f(x) = w^T [x, 1]; w <- w - eta l'(f, y) [x, 1] (hinge: w += eta y [x, 1] on a margin error).

With the squared loss the step is normalised (NLMS): w <- w - eta l'(f, y) [x, 1] / ||[x, 1]||^2.
The squared loss's gradient 2 (f - y) [x, 1] grows with the residual and with ||x||, and raw
features are not bounded as a kernel map is (||z||^2 <= kappa(x, x) = 1): plain OGD diverges as
soon as 2 eta ||x||^2 > 2 (scikit-learn's check data, features near 100, diverged at round 80).
NLMS moves f(x) by exactly 2 eta (y - f) on the round's own row, stable for any feature scale
when eta < 1, and invariant to a common rescaling of the features. It is the shared OGD step
(:func:`okl._compiled.ogd_step`: divided by max(1, ||z||^2), and ||[x, 1]||^2 >= 1).
Per-round cost O(d), compiled.
"""

from __future__ import annotations

import numpy as np

from okl._compiled import dot, dot_rows
from okl._validation import check_bool, check_positive
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.runtime.state import MAX_CLASSES
from okl.learners.fogd import ogd_rounds
from okl.losses import get_loss
from okl.scaling import check_scale


@register("linear")
class LinearOGD(Learner):
    """Online gradient descent on a linear model with a bias term.

    Parameters
    ----------
    eta : float, default 0.2
        Step; with the squared loss the normalised step eta / ||[x, 1]||^2 (module docstring).
    loss : str or Loss, default "hinge"
    [[center_targets, scale]]
    random_state : int or None
        Unused (deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> round(LinearOGD().run(X, y).mistake_rate, 1)
    26.8
    """

    _state_attrs = ("w_", "n_outputs_")
    _output_attrs = {"w_": -1.0}

    def __init__(self, *, eta: float = 0.2, loss="hinge", center_targets: bool = True,
                 scale: str | None = "auto", random_state: int | None = None):
        self.scale = check_scale(scale)
        self.eta = check_positive("eta", eta)
        self.loss = get_loss(loss).name
        self.center_targets = check_bool("center_targets", center_targets)
        self.random_state = random_state

    def _state_spec(self):
        return StateSpec(fields={"w_": Arr(self._out_shape(self.dim_ + 1)), "n_outputs_": Num(int, 0, MAX_CLASSES)})

    def _start(self, dim):
        self.w_ = np.zeros(dim + 1)

    def _fast_spec(self):
        return dict(map="linear", w="w_", step="ogd", eta=self.eta)

    def _decision(self, x):
        # the compiled sum of the fast plan and run() (okl._compiled.dot over z = [x, 1], in
        # order from 0.0), not BLAS: BLAS sums in an order that depends on the CPU's kernel
        z = np.append(x, 1.0)
        if self.w_.ndim == 2:
            out = np.empty(self.w_.shape[0])
            dot_rows(self.w_, z, out)
            return out
        return dot(self.w_, z)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        for s in range(0, X.shape[0], self.chunk_size):
            Z = np.hstack([X[s:s + self.chunk_size], np.ones((min(self.chunk_size, X.shape[0] - s), 1))])
            ogd_rounds(Z, y[s:s + self.chunk_size], self.w_, self.eta, self.loss_.kind, out[s:s + self.chunk_size])
        return out
