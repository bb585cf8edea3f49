"""KORS — kernel online row sampling (Calandriello, Lazaric & Valko, ICML 2017; PROS-N-KONS App. A).

ALGORITHMS.md 5.1. KORS builds a weighted dictionary I = {(i_s, p_s)} of points of the stream,
with S = diag(1 / sqrt(p_s)), by one pass that never removes a point. At round t the point x_t
is added temporarily with weight 1 and its gamma-ridge leverage score is estimated by
PROS-N-KONS App. A Eq. 6:

    tau~_t = (1 + eps)/gamma * ( k_tt - k_bar^T S_bar (S_bar K_bar S_bar + gamma I)^{-1} S_bar k_bar ),

then p_t = min(beta tau~_t, 1) and z_t ~ Bernoulli(p_t); if z_t = 1, (t, p_t) joins the
dictionary. With M = S K_I S + gamma I (current dictionary, j x j), b = S k_I(x_t) and
delta_t = k_tt - b^T M^{-1} b (the regularised residual of x_t), a Schur complement / Sherman-
Morrison step on the bordered matrix gives the closed form used here

    tau~_t = (1 + eps) * delta_t / (delta_t + gamma),

so one estimate costs O(j d) for the kernel row plus O(j^2) for b^T M^{-1} b. M^{-1} is kept
by a bordered-inverse (Schur) update in O(j^2) when a point joins: with u = M^{-1} b and
c = delta_t / p_t + gamma (the Schur complement, >= gamma),

    M_new^{-1} = [[M^{-1} + u u^T / (p_t c), -u / (sqrt(p_t) c)], [-u^T / (sqrt(p_t) c), 1 / c]].

Guarantee (PNK Prop. 1): if beta >= 3 log(T/delta)/eps^2 then w.p. 1 - delta every estimate
satisfies tau_t <= tau~_t <= (1 + eps)/(1 - eps) tau_t, where tau_t is the exact gamma-RLS of
x_t among x_1..x_t, and the dictionary has at most (1 + eps)/(1 - eps) 3 beta d_eff^T(gamma)
log(2T/delta) points. The experiments of PNK use beta = 1, eps = 0.5 (no guarantee then).

Between two additions M^{-1} is fixed, so the estimates of a block of rounds are computed with
matrix products (:func:`leverage_estimates`); only the Bernoulli draws are sequential: the
first accepted row of a block ends it (:meth:`KORS.update`).

>>> import numpy as np, okl
>>> X, _ = okl.load_dataset("german")
>>> kors = KORS(kernel=okl.RBF(sigma=8.0), gamma=1.0, random_state=0)
>>> added = kors.update(X)
>>> kors.size == len(added), 20 < kors.size < 80
(True, True)
"""

from __future__ import annotations

import numpy as np

from okl._validation import check_int, check_positive, check_random_state, check_real
from okl.kernels import as_kernel
from okl.linalg.svd import one_blas_thread


def leverage_estimates(K_rows: np.ndarray, k_diag: np.ndarray, scale: np.ndarray, inverse: np.ndarray,
                       gamma: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """KORS estimates tau~ (Eq. 6) and regularised residuals delta for a block of rows.

    ``K_rows`` (n x j): unweighted kernel rows kappa(x, x_i) to the dictionary; ``k_diag`` (n,):
    kappa(x, x); ``scale`` (j,): S = 1/sqrt(p); ``inverse``: (S K S + gamma I)^{-1}.
    Returns (tau~, delta) with delta = k_xx - b^T M^{-1} b >= 0 and tau~ = (1+eps) delta/(delta+gamma).
    Cost O(n j d) for the rows (done by the caller) plus 2 n j^2 here.
    """
    if K_rows.shape[1] == 0:
        quad = np.zeros(K_rows.shape[0])
    else:
        B = K_rows * scale[None, :]
        quad = np.einsum("ij,ij->i", B @ inverse, B)
    delta = np.maximum(k_diag - quad, 0.0)
    return (1.0 + eps) * delta / (delta + gamma), delta


def bordered_inverse(inverse: np.ndarray, b: np.ndarray, delta: float, p: float, gamma: float) -> np.ndarray:
    """(S K S + gamma I)^{-1} after appending a point with weight p (O(j^2)).

    ``b`` = S k_I(x) (scaled kernel row of the new point to the current dictionary), ``delta`` =
    k_xx - b^T M^{-1} b. The new diagonal entry of S K S + gamma I is k_xx/p + gamma and the new
    off-diagonal column b/sqrt(p); the Schur complement is c = delta/p + gamma.
    """
    j = inverse.shape[0]
    u = inverse @ b
    c = max(delta, 0.0) / p + gamma
    out = np.empty((j + 1, j + 1))
    out[:j, :j] = inverse + np.outer(u, u) / (p * c)
    out[:j, j] = out[j, :j] = -u / (np.sqrt(p) * c)
    out[j, j] = 1.0 / c
    return out


def bordered_gram(K: np.ndarray, k_row: np.ndarray, k_xx: float) -> np.ndarray:
    """The unweighted kernel matrix of the dictionary after appending a point."""
    j = K.shape[0]
    out = np.empty((j + 1, j + 1))
    out[:j, :j] = K
    out[:j, j] = out[j, :j] = k_row
    out[j, j] = k_xx
    return out


def effective_dimension(K: np.ndarray, gamma: float) -> float:
    """d_eff(gamma) = Tr(K (K + gamma I)^{-1}) = sum_i lambda_i / (lambda_i + gamma) (PNK Eq. 2)."""
    lam = np.clip(np.linalg.eigvalsh(K), 0.0, None)
    return float(np.sum(lam / (lam + gamma)))


def exact_leverage_scores(K: np.ndarray, gamma: float) -> np.ndarray:
    """tau_t = [K_t (K_t + gamma I)^{-1}]_{tt} for every prefix t = 1..T (PNK Eq. 1), O(T^3) in all.

    The quantity KORS estimates: the gamma-RLS of x_t among x_1..x_t. By the Schur complement,
    [(K_t + gamma I)^{-1}]_{tt} = 1 / L_tt^2 with L the Cholesky factor of K_T + gamma I, so
    tau_t = 1 - gamma / L_tt^2. For tests and small data.
    """
    L = np.linalg.cholesky(K + gamma * np.eye(K.shape[0]))
    return 1.0 - gamma / np.diag(L) ** 2


def dictionary_size_bound(d_eff: float, T: int, eps: float, beta: float, delta: float = 0.05) -> float:
    """PNK Prop. 1 (2): J <= (1 + eps)/(1 - eps) * 3 beta d_eff^T(gamma) log(2T/delta)."""
    return (1.0 + eps) / (1.0 - eps) * 3.0 * beta * d_eff * np.log(2.0 * T / delta)


class KORS:
    """Kernel online row sampling as a standalone dictionary learner.

    Parameters
    ----------
    kernel : Kernel, default RBF(sigma=1)
    gamma : float, default 1.0
        Ridge regularisation of the leverage scores (PNK: alpha = gamma in {1, 0.01}).
    eps : float in (0, 1), default 0.5
        Accuracy; the estimates are inflated by (1 + eps).
    beta : float, default 1.0
        Oversampling; theory needs beta >= 3 log(T/delta)/eps^2, the PNK experiments use 1.
    max_size : int or None
        Stop adding points once the dictionary has this many (B-KONS); None = unbounded.
    random_state : int or None
        One uniform number is drawn per round (z_t = [u_t < p_t]) in stream order.

    State after :meth:`update`: ``X_`` (j x d) dictionary points, ``p_`` (j,) their inclusion
    probabilities, ``rounds_`` their 0-based stream positions, ``inverse_`` = (S K S + gamma I)^{-1},
    ``gram_`` = the unweighted kernel matrix K_I, ``estimates_`` = every tau~_t seen.
    """

    def __init__(self, *, kernel=None, gamma: float = 1.0, eps: float = 0.5, beta: float = 1.0,
                 max_size: int | None = None, random_state: int | None = None):
        self.kernel = as_kernel(kernel)
        self.gamma = check_positive("gamma", gamma)
        self.eps = check_real("eps", eps, 0.0, 1.0, low_open=True, high_open=True)
        self.beta = check_positive("beta", beta)
        self.max_size = None if max_size is None else check_int("max_size", max_size, 1)
        self.random_state = random_state
        self._rng = np.random.default_rng(check_random_state(random_state))
        self.X_ = None
        self.n_seen_ = 0
        self.estimates_: list[float] = []

    @property
    def size(self) -> int:
        return 0 if self.X_ is None else int(self.X_.shape[0])

    def _init(self, dim: int) -> None:
        self.X_ = np.zeros((0, dim))
        self.p_ = np.zeros(0)
        self.rounds_: list[int] = []
        self.inverse_ = np.zeros((0, 0))
        self.gram_ = np.zeros((0, 0))

    def add(self, x: np.ndarray, k_row: np.ndarray, k_xx: float, p: float, delta: float) -> None:
        """Append x (kernel row ``k_row`` to the dictionary, weight p, residual delta): O(j^2 + j d)."""
        scale = 1.0 / np.sqrt(self.p_)
        self.inverse_ = bordered_inverse(self.inverse_, k_row * scale, delta, p, self.gamma)
        self.gram_ = bordered_gram(self.gram_, k_row, k_xx)
        self.X_ = np.vstack([self.X_, x[None, :]])
        self.p_ = np.append(self.p_, p)
        self.rounds_.append(self.n_seen_)

    def update(self, X, max_block: int = 4096) -> list[int]:
        """Feed the rows of X in order; returns the 0-based stream positions of the added rows.

        Rows are scored in blocks with the dictionary fixed; the first accepted row ends a block.
        The block length adapts (doubling while nothing is accepted, twice the last gap after an
        acceptance, between 32 and ``max_block``) so little work is thrown away; results do not
        depend on it.
        """
        with one_blas_thread():  # j x j products: threads only hurt
            return self._update(np.ascontiguousarray(X, dtype=float), max_block)

    def _update(self, X, max_block):
        if self.X_ is None:
            self._init(X.shape[1])
        uniforms = self._rng.random(X.shape[0])
        k_diag = self.kernel.diag(X)
        added = []
        block = min(32, max_block)
        i = 0
        while i < X.shape[0]:
            if self.max_size is not None and self.size >= self.max_size:
                self.n_seen_ += X.shape[0] - i
                break
            e = min(i + block, X.shape[0])
            K_rows = self.kernel(X[i:e], self.X_) if self.size else np.zeros((e - i, 0))
            tau, delta = leverage_estimates(K_rows, k_diag[i:e], 1.0 / np.sqrt(self.p_), self.inverse_,
                                            self.gamma, self.eps)
            p = np.minimum(self.beta * tau, 1.0)
            hits = np.flatnonzero(uniforms[i:e] < p)
            stop = e - i if hits.size == 0 else int(hits[0]) + 1
            self.estimates_.extend(tau[:stop].tolist())
            if hits.size:
                r = stop - 1
                self.n_seen_ += r
                self.add(X[i + r], K_rows[r], float(k_diag[i + r]), float(p[r]), float(delta[r]))
                added.append(self.n_seen_)
                self.n_seen_ += 1
                block = max(min(32, max_block), min(max_block, 2 * stop))
            else:
                self.n_seen_ += stop
                block = min(max_block, 2 * block)
            i += stop
        return added


__all__ = ["KORS", "leverage_estimates", "bordered_inverse", "bordered_gram", "effective_dimension",
           "exact_leverage_scores", "dictionary_size_bound"]
