"""Linear online gradient descent: the reference a kernel learner must beat to be worth its cost.

f(x) = w^T z(x); w <- w - eta l'(f, y) z(x) (hinge: w += eta y z on a margin error), with the
features z = [x, 1] (``degree=1``) or z = [x, (x_i x_j)_{i <= j}, 1] (``degree=2``: every pairwise
product and square, d (d + 3) / 2 + 1 features; what a polynomial kernel of degree 2 spans, in
its explicit features).

With the squared loss the step is normalised (NLMS): w <- w - eta l'(f, y) z / ||z||^2.
The squared loss's gradient 2 (f - y) z grows with the residual and with ||x||, and raw
features are not bounded as a kernel map is (||z||^2 <= kappa(x, x) = 1): plain OGD diverges as
soon as 2 eta ||z||^2 > 2 (scikit-learn's check data, features near 100, diverged at round 80).
NLMS moves f(x) by exactly 2 eta (y - f) on the round's own row, stable for any feature scale
when eta < 1, and invariant to a common rescaling of the features. It is the shared OGD step
(:func:`okl._compiled.ogd_step`: divided by max(1, ||z||^2), and ||z||^2 >= 1).
Per-round cost O(d) (degree 2: O(d^2)), compiled.

``step="nag"``: the normalised adaptive gradient (NAG, Ross, Mineiro & Langford, UAI 2013; Vowpal
Wabbit's default update) instead: a step per feature from its own sums of squared gradients and its
largest magnitude seen, so every feature's step is invariant to its scale and a rare one (a one-hot
level, a hashed token) takes a larger step (:func:`nag_step`; O(nnz) a round on a sparse row).
``auto`` runs it on sparse rows (:func:`okl.ensemble.pool.sparse_pool`).

In ``auto`` the members of the affine family are linear learners on ``scale="affine"``
coordinates (:mod:`okl.scaling`): auto maps its input once, with symlog, and such a member
undoes the curvature itself (:func:`okl.scaling.affine_from_symlog` in :func:`linear_features`).
"""

from __future__ import annotations


import numpy as np

from okl._compiled import dot, dot_rows, jit, loss_derivative
from okl.runtime.base import Arr, Learner, Num, StateSpec, register
from okl.components import Plan
from okl.runtime.hyperparameters import CENTER_TARGETS, ETA, LOSS, RANDOM_STATE, SCALE, Hyper, accept
from okl.runtime.state import MAX_CLASSES
from okl.learners.fogd import ogd_rounds
from okl.components.maps.linear import linear_feature_rows, linear_features, n_linear_features, nonzero_features
from okl.components.steps.nag import nag_step, nag_value


#: the linear learner's steps (``step``)
STEPS = ("ogd", "nag")


# ---- the normalised adaptive step (NAG) ---------------------------------------------------------
#
# Ross, Mineiro & Langford, "Normalized online learning", UAI 2013, Algorithm 2 (NAG; Vowpal Wabbit's
# default update, ``--adaptive --normalized``). Its state A (length 2k + 1, k features) holds the
# per-feature sums G_i of squared gradients, the per-feature scales s_i = max |z_i| seen and the
# normaliser N = sum over rounds of sum_i z_i^2 / s_i^2. A round on the non-zero features z_i:
#   rescale:  where |z_i| > s_i:  w_i <- w_i s_i^2 / z_i^2,  s_i <- |z_i|
#   decide:   f = w^T z   (on the rescaled weights)
#   N <- N + sum_i z_i^2 / s_i^2;  g = l'(f, y);  G_i <- G_i + (g z_i)^2
#   w_i <- w_i - eta sqrt(t / N) g z_i / (s_i sqrt(G_i))      (t: the rounds learned, this one included)
# Every feature's step is invariant to its scale, and a rare feature (a one-hot level, a hashed token)
# takes the larger step its own small G_i gives it. predict_one must not change the state, so the
# rescale is applied in the decision on the fly (w_i (s_i / |z_i|)^2) and stored by the step. Zero
# features change nothing, so a round costs O(nnz) on a sparse row.


@jit
def nag_rounds(Z, Y, w, A, eta, lkind, t0, out):
    """Test-then-train NAG on the feature rows Z (round t0 + 1 first)."""
    for r in range(Z.shape[0]):
        idx, u = nonzero_features(Z[r])
        f = nag_value(w, A, idx, u)
        out[r] = f
        nag_step(w, A, idx, u, loss_derivative(lkind, f, Y[r]), eta, t0 + r + 1)


@register("linear")
class LinearOGD(Learner):
    """Online gradient descent on a linear model with a bias term.

    Parameters
    ----------
    eta : float, default 0.2
        Step; with the squared loss the normalised step eta / ||z||^2 (module docstring). With
        ``step="nag"`` NAG's rate (Vowpal Wabbit's default is 0.5).
    step : {"ogd", "nag"}, default "ogd"
        "ogd": the step above. "nag": the normalised adaptive gradient of Ross, Mineiro & Langford
        (UAI 2013, Algorithm 2; Vowpal Wabbit's default update): per-feature AdaGrad sums and scales
        and a global normaliser (:func:`nag_step`), O(nnz) a round on a sparse row; what sparse
        one-hot and hashed streams call for, where rare features need their own, larger steps.
    degree : {1, 2}, default 1
        1: z = [x, 1]; 2: every pairwise product and square of the features too (O(d^2) a round).
    loss : str or Loss, default "hinge"
    [[center_targets, scale]]
    random_state : int or None
        Unused (deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> round(LinearOGD().run(X, y).mistake_rate, 1)
    26.8
    """

    _state_attrs = ("w_", "nag_", "n_outputs_")
    _output_attrs = {"w_": -1.0, "nag_": 1.0}

    #: set by ``auto`` on a member of the affine family: its input is auto's symlog row, and the
    #: member's features undo it (:func:`linear_features`); never a hyperparameter
    _unmap: bool = False

    hyperparameters = (ETA, Hyper("step", "choice", "The step: OGD, or NAG (normalised adaptive).",
                                  choices=STEPS),
                       Hyper("degree", "int", "1: z = [x, 1]; 2: the pairwise products too.", low=1, high=2),
                       LOSS, CENTER_TARGETS, SCALE, RANDOM_STATE)

    def __init__(self, *, eta: float = 0.2, step: str = "ogd", degree: int = 1, loss="hinge",
                 center_targets: bool = True, scale: str | None = "auto", random_state: int | None = None):
        accept(self, locals())

    def _n_features(self) -> int:
        return n_linear_features(self.dim_, self.degree)

    def _state_spec(self):
        k = self._n_features()
        return StateSpec(fields={"w_": Arr(self.heads.out_shape(self, k)),
                                 "nag_": Arr(self.heads.out_shape(self, 2 * k + 1), low=0.0, optional=self.step != "nag"),
                                 "n_outputs_": Num(int, 0, MAX_CLASSES)})

    #: model files written before ``step`` existed hold no NAG state (their step is "ogd")
    _state_added = {"nag_": None}

    def _start(self, dim):
        k = n_linear_features(dim, self.degree)
        self.w_ = np.zeros(k)
        self.nag_ = np.zeros(2 * k + 1) if self.step == "nag" else None

    @classmethod
    def runs_in_engine(cls, params):
        return True

    def compiled_plan(self):
        # (``unmap``: only inside auto, whose engine runs it)
        return Plan("linear", self.step, w="w_", A="nag_" if self.step == "nag" else None, eta=self.eta,
                    features=self._n_features(), unmap=self._unmap)

    def _decision(self, x):
        # the compiled sum of the fast plan and run() (okl._compiled.dot: one fixed order), not
        # BLAS: BLAS sums in an order that depends on the CPU's kernel
        z = np.empty(self._n_features())
        linear_features(x, z.shape[0], self._unmap, z)
        if self.step == "nag":
            idx, u = nonzero_features(z)
            if self.w_.ndim == 2:
                return np.array([nag_value(w, A, idx, u) for w, A in zip(self.w_, self.nag_)])
            return nag_value(self.w_, self.nag_, idx, u)
        if self.w_.ndim == 2:
            out = np.empty(self.w_.shape[0])
            dot_rows(self.w_, z, out)
            return out
        return dot(self.w_, z)

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        k = self._n_features()
        for s in range(0, X.shape[0], self.chunk_size):
            Z = np.empty((min(self.chunk_size, X.shape[0] - s), k))
            linear_feature_rows(X[s:s + self.chunk_size], k, self._unmap, Z)
            if self.step == "nag":
                nag_rounds(Z, y[s:s + self.chunk_size], self.w_, self.nag_, self.eta, self.loss_.kind,
                           self.n_seen_ + s, out[s:s + self.chunk_size])
                continue
            ogd_rounds(Z, y[s:s + self.chunk_size], self.w_, self.eta, self.loss_.kind, out[s:s + self.chunk_size])
        return out
