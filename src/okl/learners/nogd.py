"""Nystrom online gradient descent (NOGD; Lu, Hoi, Wang, Zhao & Liu, JMLR 2016).

ALGORITHMS.md section 6. Two stages:

1. KOGD (alpha_t = -eta l'(f, y) on rounds with a nonzero loss derivative) until B support
   vectors are stored.
2. At the first such round after that (the *transition*): K_B = kernel matrix of the B support
   vectors, top-k eigenpairs K_B ~ V_k D_k V_k^T, the map z(x) = D_k^{-1/2} V_k^T kappa_B(x) with
   kappa_B(x) = [kappa(x_i, x)]_{i <= B}, and w = D_k^{1/2} V_k^T alpha, which keeps the
   predictions of the expansion on the top-k eigenspace. Then OGD w <- w - eta l'(f, y) z(x),
   starting with the transition round itself (its gradient taken at the KOGD prediction).

Defaults: B = 100, k = 0.1 B (SkeGD/FORKS tables; LSOKL uses 0.2 B), eta = 0.2.
Per-round cost: O(B d + B k) (kernel row and projection, computed a block at a time) plus O(k)
compiled update; the transition costs O(B^2 d + B^3).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from okl._validation import check_int, check_positive
from okl.kernels import check_kernel
from okl.learners.base import Learner, register
from okl.learners.fogd import ogd_rounds
from okl.learners.kogd import DONE, expansion_decision, expansion_rounds
from okl.losses import get_loss


def top_eigen_map(K: np.ndarray, k: int, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs of the PSD matrix K as (M, root): M = D^{-1/2} V^T (k' x B) and
    root = D^{1/2} V^T (k' x B); eigenvalues below rtol * largest are dropped (k' <= k)."""
    B = K.shape[0]
    k = min(k, B)
    vals, vecs = scipy.linalg.eigh(K, subset_by_index=[B - k, B - 1])
    vals, vecs = vals[::-1], vecs[:, ::-1]
    keep = vals > rtol * max(vals[0], 0.0)
    vals, vecs = vals[keep], vecs[:, keep]
    return vecs.T / np.sqrt(vals)[:, None], vecs.T * np.sqrt(vals)[:, None]


@register("nogd")
class NOGD(Learner):
    """Nystrom online gradient descent.

    Parameters
    ----------
    budget : int, default 100
        Number B of support vectors kept in stage 1 (Nystrom landmarks).
    k : int or None, default None (= max(1, B // 10))
        Number of eigen-directions kept at the transition, 1 <= k <= B.
    eta : float, default 0.2
    loss : str or Loss, default "hinge"
    kernel : Kernel, default RBF(sigma=1)
    random_state : int or None
        Unused (NOGD is deterministic); accepted for a uniform interface.

    >>> import okl
    >>> X, y = okl.load_dataset("german")
    >>> m = NOGD(budget=100, kernel=okl.RBF(sigma=8), random_state=0)
    >>> trace = m.run(X, y)
    >>> trace.n_rounds, m.diagnostics()["stage"]
    (1000, 2)
    """

    _state_attrs = ("SV_", "alpha_", "m_", "M_", "w_", "transition_round_")

    def __init__(self, *, budget: int = 100, k: int | None = None, eta: float = 0.2, loss="hinge",
                 kernel=None, random_state: int | None = None):
        self.budget = check_int("budget", budget, 1)
        self.k = None if k is None else check_int("k", k, 1, self.budget)
        self.eta = check_positive("eta", eta)
        self.loss = get_loss(loss).name
        self.kernel = check_kernel(kernel)
        self.random_state = random_state

    @property
    def k_(self) -> int:
        return self.k if self.k is not None else max(1, self.budget // 10)

    def _start(self, dim):
        self.SV_ = np.zeros((self.budget, dim))
        self.alpha_ = np.zeros(self.budget)
        self.m_ = 0
        self.M_ = None
        self.w_ = None
        self.transition_round_ = None

    def _features(self, X):
        return self.kernel_(X, self.SV_) @ self.M_.T

    def _decision(self, x):
        if self.M_ is None:
            return expansion_decision(*self.kernel_.spec(), self.SV_, self.alpha_, self.m_, x)
        return float(self._features(x[None, :])[0] @ self.w_)

    def _transition(self, x, y, f, round_index):
        M, root = top_eigen_map(self.kernel_(self.SV_, self.SV_), self.k_)
        self.M_, self.w_ = M, root @ self.alpha_
        self.transition_round_ = round_index
        z = self._features(x[None, :])[0]
        self.w_ -= self.eta * self.loss_.derivative(f, y) * z

    def _process(self, X, y):
        out = np.empty(X.shape[0])
        i = 0
        if self.M_ is None:
            status, i, self.m_ = expansion_rounds(*self.kernel_.spec(), self.loss_.kind, self.eta, 0.0,
                                                  X, y, out, 0, self.SV_, self.alpha_, self.m_,
                                                  self.budget, True)
            if status == DONE:
                return out
            self._transition(X[i], y[i], out[i], self.n_seen_ + i)
            i += 1
        for s in range(i, X.shape[0], self.chunk_size):
            e = min(s + self.chunk_size, X.shape[0])
            ogd_rounds(self._features(X[s:e]), y[s:e], self.w_, self.eta, self.loss_.kind, out[s:e])
        return out

    def _first_counted_round(self):
        return None if self.transition_round_ is None else self.transition_round_ + 1

    def diagnostics(self):
        return {"support_vectors": int(self.m_), "stage": 1 if self.M_ is None else 2,
                "transition_round": self.transition_round_,
                "features": 0 if self.M_ is None else int(self.M_.shape[0])}
