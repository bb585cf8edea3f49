"""Rank-k SVD (exact or randomized), pseudo-inverse with a relative cut-off, top-k symmetric eigen.

ALGORITHMS.md 1.3. SkeGD (section 4) decomposes Phi_pp by a randomized SVD (Halko, Martinsson &
Tropp 2011) and needs pinv(Phi_pm); the authors' R code uses double LAPACK (``svd``,
``MASS::ginv`` with tolerance sqrt(eps) relative to the largest singular value). We default to
exact LAPACK in double; ``method="randomized"`` uses scikit-learn's ``randomized_svd`` with a
seed drawn from the caller's generator (oversampling p = 10, q = 2 power iterations).

(The FORKS C++ code's float32 Jacobi SVD and *absolute* 1e-8 pinv cut-off are not reproduced
here: ALGORITHMS.md 1.3 shows they turn phi into a noise-amplified map.)

>>> A = np.diag([3.0, 2.0, 1e-20])
>>> np.round(pinv(A), 3).tolist()
[[0.333, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.0]]
>>> U, s, Vt = rank_k_svd(np.diag([1.0, 3.0, 2.0]), 2)
>>> s.tolist()
[3.0, 2.0]
"""

from __future__ import annotations


import numpy as np
import scipy.linalg

from okl._threads import one_blas_thread

#: MASS::ginv's default tolerance (relative to the largest singular value), used by the R code.
PINV_RTOL = float(np.sqrt(np.finfo(np.float64).eps))

SVD_METHODS = ("exact", "randomized")

def rank_k_svd(A: np.ndarray, k: int, method: str = "exact", rng: np.random.Generator | None = None,
               n_oversamples: int = 10, n_iter: int = 2, symmetric: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-k singular triplets of A: (U (m x k), s (k,), Vt (k x n)), s descending.

    ``method="exact"``: LAPACK ``gesdd`` (falls back to ``gesvd`` if it does not converge) and
    truncation; with ``symmetric=True`` the SVD comes from the symmetric eigendecomposition
    (``syevr``, several times faster): s = |lambda|, U = eigenvectors, V = eigenvectors x
    sign(lambda). ``method="randomized"``: ``sklearn.utils.extmath.randomized_svd`` with
    ``random_state`` drawn from ``rng`` (one ``integers`` call), so results repeat with the seed.
    k is clipped to min(A.shape). Cost O(m n min(m, n)) exact, O(m n (k + p) q) randomized.
    """
    A = np.asarray(A, dtype=np.float64)
    k = int(min(k, *A.shape))
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    with one_blas_thread():
        if method == "exact":
            if symmetric:
                vals, vecs = top_k_symmetric(A, k, by="magnitude")
                signs = np.where(vals < 0, -1.0, 1.0)
                return vecs, np.abs(vals), (vecs * signs[None, :]).T
            U, s, Vt = _svd(A)
            return U[:, :k], s[:k], Vt[:k]
        if method == "randomized":
            from sklearn.utils.extmath import randomized_svd

            if rng is None:
                raise ValueError("method='randomized' needs a numpy Generator rng (for a reproducible seed)")
            seed = int(rng.integers(0, 2**31 - 1))
            return randomized_svd(A, k, n_oversamples=n_oversamples, n_iter=n_iter, random_state=seed)
    raise ValueError(f"method must be one of {list(SVD_METHODS)}, got {method!r}")


def _svd(A):
    try:
        return scipy.linalg.svd(A, full_matrices=False, lapack_driver="gesdd")
    except np.linalg.LinAlgError:
        return scipy.linalg.svd(A, full_matrices=False, lapack_driver="gesvd")


def pinv(A: np.ndarray, rtol: float = PINV_RTOL) -> np.ndarray:
    """Moore-Penrose pseudo-inverse: singular values > rtol * s_max are inverted, the rest dropped.

    The default rtol = sqrt(eps) ~ 1.5e-8 is ``MASS::ginv``'s (the SkeGD R code).
    """
    A = np.asarray(A, dtype=np.float64)
    if A.size == 0:
        return np.zeros(A.shape[::-1])
    with one_blas_thread():
        U, s, Vt = _svd(A)
    keep = s > rtol * (s[0] if s.size else 0.0)
    return (Vt[keep].T / s[keep]) @ U[:, keep].T


def top_k_symmetric(A: np.ndarray, k: int, by: str = "magnitude") -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs (values (k,), vectors (n x k)) of the symmetric matrix A.

    ``by="magnitude"`` orders by |lambda| (the rank-k SVD of a symmetric matrix: singular values
    are |lambda|), ``by="value"`` by lambda (the best PSD rank-k part). Uses LAPACK ``syevd``
    via ``scipy.linalg.eigh`` on the symmetrised matrix.
    """
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    k = int(min(k, n))
    with one_blas_thread():
        vals, vecs = scipy.linalg.eigh(0.5 * (A + A.T))
    if by == "magnitude":
        order = np.argsort(-np.abs(vals), kind="stable")[:k]
    elif by == "value":
        order = np.argsort(-vals, kind="stable")[:k]
    else:
        raise ValueError(f"by must be 'magnitude' or 'value', got {by!r}")
    return vals[order], vecs[:, order]


__all__ = ["rank_k_svd", "pinv", "top_k_symmetric", "one_blas_thread", "PINV_RTOL", "SVD_METHODS"]
