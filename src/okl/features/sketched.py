"""The explicit feature map of SkeGD built from an incremental randomized sketch.

SkeGD Eq. 1-4 and section 4 (ALGORITHMS.md 3): with C_m = K S_m (kernel columns of the s_m sampled
points), the sketched problem min_F ||S_p^T (C_m F C_m^T - K) S_p||_F^2 is solved by
F_sk = Phi_pm^+ Phi_pp (Phi_pm^T)^+. With the rank-k decomposition Phi_pp ~ V diag(sigma) V^T,
F_sk ~ Q Q^T where

    Q = Phi_pm^+ V diag(sigma)^{1/2}   (s_m x k),

and the feature map is phi(x) = Q^T kappa_m(x), kappa_m(x) = [kappa(x, x~_j)]_{j <= s_m}, so that
phi(x)^T phi(x') = kappa_m(x)^T F_sk kappa_m(x') approximates kappa(x, x'). Cost per point
O(s_m D) for kappa_m plus O(s_m k) for the product.
"""

from __future__ import annotations

import numpy as np

from okl.linalg.svd import PINV_RTOL, pinv


def sketched_map(Phi_pm: np.ndarray, V: np.ndarray, sigma: np.ndarray, rtol: float = PINV_RTOL) -> np.ndarray:
    """Q = pinv(Phi_pm) V diag(sigma)^{1/2}, (s_m x k); phi(x) = Q^T kappa_m(x).

    ``V`` (s_p x k) are singular vectors of Phi_pp and ``sigma`` (k,) its singular values
    (nonnegative; negative entries are an error). ``rtol`` is the pinv cut-off relative to the
    largest singular value of Phi_pm (default sqrt(eps), as ``MASS::ginv`` in the R code).

    >>> Phi_pm = np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> sketched_map(Phi_pm, np.eye(3)[:, :2], np.array([4.0, 1.0])).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    if np.any(sigma < 0):
        raise ValueError("singular values must be nonnegative")
    return pinv(Phi_pm, rtol) @ (np.asarray(V, dtype=np.float64) * np.sqrt(sigma)[None, :])


__all__ = ["sketched_map"]
