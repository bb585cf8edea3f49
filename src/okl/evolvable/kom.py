"""The Kernel Ortho-Mapping (KOM) discrepancy and its one-pass optimisation (OPFES Sec. 3).

Exact discrepancy (Def. 3.1, Lemma 3.2) on a sample of n paired instances with Gram matrices K1, K2:

    E(S_n, K1, K2) = min_{U orthogonal} ||U sqrt(K1) - sqrt(K2)||_F / sqrt(n)
                   = ( (tr K1 + tr K2)/n - 2 ||sqrt(K1) sqrt(K2)||_* / n )^{1/2}.

For any factorisations K_i = F_i F_i^T the same value is the Procrustes distance between F_1 and
F_2 (``kom_discrepancy_factors``): ||sqrt(K1) sqrt(K2)||_* = ||F_1^T F_2||_*.

Random-feature objective (Eq. 6-8). With frozen random Fourier features Phi1 (n x d1, weights p1)
for K1 and Phi2 (n x d2) for K2 = Phi2 diag(p) Phi2^T, streaming statistics over the evolving stage

    m_kl = sum_t a_k Phi1_tk Phi2_tl    (a_k = p1_k in the paper's Eq. 7; sqrt(p1_k) is exact),
    v_l  = sum_t Phi2_tl^2              (Eq. 8),

turn the KOM minimisation into the convex problem on the simplex

    min_{p in Delta} f(p) = 0.5 <p, v> - ||M diag(sqrt p)||_*.                      (Eq. 6)

Its subgradient (Lemma B.1), with the SVD M diag(sqrt p) = U S W^T, is

    g(p) = v - diag(M^T U W^T) / sqrt(p) = v - sum_k (M^T U)_{lk}^2 / S_k   (the second form has
                                                                            no 1/sqrt(p) and is used);

the exact derivative of f is g/2 (``gradient="exact"``), a constant absorbed by the step.
Algorithm 1 (mirror descent with the entropy mirror map): p <- p exp(-eta g(p)), normalised, from
p = 1/d2, for T_M iterations; the last iterate is returned (Thm 3.7 bounds the average; both are
offered). Default eta (App. B proof of Thm 3.7) = sqrt(2 ln d2 / (T_M Te (1 + sqrt(d2)/eps))).

Cost: the statistics cost O(d1 d2) per evolving round. ``KOMProblem`` reduces M once by its SVD,
M = V_M N (N = S_M W_M^T, r x d2 with r = rank(M) <= min(Te, d1, d2)); a mirror-descent step
then costs O(r^2 d2 + r^3) (the Gram N diag(p) N^T and its eigendecomposition) instead of an SVD
of the d1 x d2 matrix. ``rank_tol`` > 0 drops the smallest singular directions of M holding that
fraction of its nuclear norm (an approximation, off by default in the exact functions).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> F = rng.normal(size=(6, 3)); Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
>>> round(kom_discrepancy(F @ F.T, (F @ Q) @ (F @ Q).T), 6)   # a rotated factor: same kernel
0.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl._threads import one_blas_thread
from okl._validation import check_choice, check_int, check_nonnegative


# --------------------------------------------------------------------------------------------
# Exact discrepancy


def _check_gram(K, what: str) -> np.ndarray:
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{what} must be a square Gram matrix, got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError(f"{what} has non-finite entries")
    scale = max(1.0, float(np.abs(K).max()) if K.size else 1.0)
    if not np.allclose(K, K.T, atol=1e-10 * scale, rtol=0.0):
        raise ValueError(f"{what} is not symmetric")
    return 0.5 * (K + K.T)


def psd_sqrt(K: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix. Eigenvalues at rounding level (below
    n * 1e-15 * the largest, including negative ones) are set to 0: their square roots (~1e-8)
    would otherwise be noise in the nuclear norm of Lemma 3.2."""
    lam, E = np.linalg.eigh(K)
    top = lam[-1] if lam.size else 0.0
    lam = np.where(lam > max(top, 0.0) * K.shape[0] * 1e-15, lam, 0.0)
    return (E * np.sqrt(lam)) @ E.T


def kom_discrepancy(K1, K2) -> float:
    """Exact KOM discrepancy of Lemma 3.2 between two n x n Gram matrices (O(n^3))."""
    K1 = _check_gram(K1, "K1")
    K2 = _check_gram(K2, "K2")
    if K1.shape != K2.shape:
        raise ValueError(f"K1 and K2 must be Gram matrices of the same sample, got {K1.shape} and {K2.shape}")
    n = K1.shape[0]
    if n == 0:
        raise ValueError("the KOM discrepancy needs at least one instance")
    for what, K in (("K1", K1), ("K2", K2)):
        lam_min = float(np.linalg.eigvalsh(K)[0])
        if lam_min < -1e-8 * max(1.0, float(np.abs(K).max())):
            raise ValueError(f"{what} is not positive semidefinite (smallest eigenvalue {lam_min:.3g})")
    nuclear = np.linalg.svd(psd_sqrt(K1) @ psd_sqrt(K2), compute_uv=False).sum()
    return float(np.sqrt(max(0.0, (np.trace(K1) + np.trace(K2) - 2.0 * nuclear) / n)))


def kom_discrepancy_factors(F1, F2) -> float:
    """KOM discrepancy of K1 = F1 F1^T and K2 = F2 F2^T from the factors (n x r1, n x r2):
    ((||F1||_F^2 + ||F2||_F^2 - 2 ||F1^T F2||_*) / n)^{1/2}; O(n r1 r2)."""
    F1 = np.asarray(F1, dtype=np.float64)
    F2 = np.asarray(F2, dtype=np.float64)
    if F1.ndim != 2 or F2.ndim != 2 or F1.shape[0] != F2.shape[0]:
        raise ValueError(f"F1 and F2 must be n x r factors of the same sample, got {F1.shape} and {F2.shape}")
    n = F1.shape[0]
    nuclear = np.linalg.svd(F1.T @ F2, compute_uv=False).sum()
    return float(np.sqrt(max(0.0, ((F1 ** 2).sum() + (F2 ** 2).sum() - 2.0 * nuclear) / n)))


# --------------------------------------------------------------------------------------------
# Spectral densities


def check_spectral_density(p, d: int | None = None, what: str = "spectral density") -> np.ndarray:
    """A spectral density on the simplex: 1-D, finite, >= 0, summing to 1 (to 1e-8)."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.shape[0] < 1:
        raise ValueError(f"{what} must be a non-empty 1-D vector, got shape {p.shape}")
    if d is not None and p.shape[0] != d:
        raise ValueError(f"{what} has {p.shape[0]} entries but there are {d} random features")
    bad = np.flatnonzero(~np.isfinite(p))
    if bad.size:
        raise ValueError(f"{what} has a non-finite value {p[bad[0]]!r} at feature {bad[0]}")
    if (p < 0).any():
        raise ValueError(f"{what} has a negative entry {p.min()!r}")
    if abs(p.sum() - 1.0) > 1e-8:
        raise ValueError(f"{what} must sum to 1 (a point of the simplex), sums to {p.sum()!r}")
    return p


# --------------------------------------------------------------------------------------------
# Streaming statistics (Eq. 7-8)


class KOMStatistics:
    """Streaming M (d1 x d2) and v (d2) of Eq. 7-8 over the evolving stage.

    ``row_weights`` a (length d1) multiplies Phi1: the paper's a_k = p1_k, or sqrt(p1_k) for the
    exact nuclear-norm identity. For the ideal kernel K* = y y^T pass Phi1 = y[:, None] with
    a = [1]. ``update`` costs O(n d1 d2) for a block of n rounds (one matrix product).
    """

    def __init__(self, row_weights, d2: int):
        self.row_weights = np.asarray(row_weights, dtype=np.float64)
        self.M = np.zeros((self.row_weights.shape[0], int(d2)))
        self.v = np.zeros(int(d2))
        self.count = 0

    def update(self, Phi1: np.ndarray, Phi2: np.ndarray) -> None:
        if Phi1.shape[0] != Phi2.shape[0]:
            raise ValueError("Phi1 and Phi2 must have one row per evolving round")
        self.M += (Phi1 * self.row_weights).T @ Phi2
        self.v += np.einsum("ij,ij->j", Phi2, Phi2)
        self.count += Phi1.shape[0]


# --------------------------------------------------------------------------------------------
# Objective, subgradient, mirror descent


#: in the per-iteration subgradient (computed from the Gram matrix N diag(p) N^T, whose rounding
#: level is ~1e-16 relative to s_max^2) singular directions below this fraction of the largest
#: are ignored
RANK_RTOL = 1e-7
#: singular values of M (and of M diag(sqrt p) in the rotation, both by SVD) below this fraction
#: of the largest, times max(d1, d2), are rounding noise
SVD_RTOL = 1e-13


def _nuclear_parts(N: np.ndarray, p: np.ndarray):
    """Singular values S and G = N^T E (d2 x r) of N diag(sqrt p) from the eigendecomposition of
    N diag(p) N^T = E S^2 E^T (directions with S below rounding level dropped)."""
    G = (N * p) @ N.T
    lam, E = np.linalg.eigh(0.5 * (G + G.T))
    top = lam[-1] if lam.size else 0.0
    keep = lam > top * RANK_RTOL ** 2 if top > 0 else np.zeros(lam.shape, bool)
    S = np.sqrt(lam[keep])
    return S, N.T @ E[:, keep]


class KOMProblem:
    """f(p) = 0.5 <p, v> - ||M diag(sqrt p)||_* (Eq. 6) with M reduced once by its SVD.

    Parameters
    ----------
    M : (d1, d2) array, v : (d2,) array
        The statistics of Eq. 7-8 (``KOMStatistics``).
    rank_tol : float in [0, 1), default 0
        Drop the smallest singular directions of M that hold at most this fraction of its nuclear
        norm before the iterations (0: only directions at rounding level are dropped, exact).
    """

    def __init__(self, M, v, rank_tol: float = 0.0):
        M = np.asarray(M, dtype=np.float64)
        v = np.asarray(v, dtype=np.float64)
        if M.ndim != 2 or v.ndim != 1 or M.shape[1] != v.shape[0]:
            raise ValueError(f"M must be d1 x d2 and v of length d2, got {M.shape} and {v.shape}")
        if not (np.isfinite(M).all() and np.isfinite(v).all()):
            raise ValueError("the KOM statistics M and v must be finite")
        self.rank_tol = check_nonnegative("rank_tol", rank_tol)
        if self.rank_tol >= 1.0:
            raise ValueError(f"rank_tol must be in [0, 1), got {rank_tol!r}")
        self.v = v
        self.d1, self.d2 = M.shape
        Vm, s, Wt = np.linalg.svd(M, full_matrices=False)
        top = s[0] if s.size else 0.0
        exact = int((s > top * SVD_RTOL * max(M.shape)).sum()) if top > 0 else 0
        r = exact
        if self.rank_tol > 0 and exact:
            tail = np.cumsum(s[:exact][::-1])[::-1] / s[:exact].sum()  # tail[k] = mass of s[k:]
            r = int(np.searchsorted(-tail, -self.rank_tol, side="left"))
            r = max(1, min(exact, r))
        self.left = Vm[:, :exact]               # d1 x r_exact, orthonormal columns
        self.N_exact = s[:exact, None] * Wt[:exact]   # r_exact x d2: M = left @ N_exact (to rounding)
        self.N = self.N_exact[:r]
        self.singular_values = s[:exact]
        self.rank = r
        self.exact_rank = exact

    def objective(self, p) -> float:
        p = np.asarray(p, dtype=np.float64)
        if self.N.shape[0] == 0:
            return float(0.5 * p @ self.v)
        S = np.linalg.svd(self.N * np.sqrt(p), compute_uv=False)
        return float(0.5 * p @ self.v - S.sum())

    def subgradient(self, p, gradient: str = "paper") -> np.ndarray:
        """Lemma B.1's subgradient (``"paper"``) or the exact derivative of f (``"exact"``, half)."""
        p = np.asarray(p, dtype=np.float64)
        if self.N.shape[0] == 0:
            g = self.v.copy()
        else:
            S, G = _nuclear_parts(self.N, p)
            g = self.v - (G * G / S).sum(axis=1) if S.size else self.v.copy()
        return 0.5 * g if gradient == "exact" else g

    def rotation(self, p):
        """Prop. 4.1's U* = V W^T from the SVD M diag(sqrt p) = V S W^T (exact rank), as the factors
        (V: d1 x r, W: d2 x r); the reused model is w2 = U*^T w1 = W (V^T w1)."""
        p = np.asarray(p, dtype=np.float64)
        if self.exact_rank == 0:
            return np.zeros((self.d1, 0)), np.zeros((self.d2, 0))
        X = self.N_exact * np.sqrt(p)
        Ux, S, Wt = np.linalg.svd(X, full_matrices=False)
        keep = S > S[0] * SVD_RTOL * max(X.shape) if S[0] > 0 else np.zeros(S.shape, bool)
        return self.left @ Ux[:, keep], Wt[keep].T


def kom_objective(M, v, p) -> float:
    """f(p) = 0.5 <p, v> - ||M diag(sqrt p)||_* (OPFES Eq. 6), exactly."""
    p = check_spectral_density(p, np.asarray(v).shape[0])
    M = np.asarray(M, dtype=np.float64)
    return float(0.5 * p @ np.asarray(v, float) - np.linalg.svd(M * np.sqrt(p), compute_uv=False).sum())


def kom_subgradient(M, v, p, gradient: str = "paper") -> np.ndarray:
    """Lemma B.1: v - diag(M^T U W^T)/sqrt(p) (``"paper"``) or its half, the derivative of f
    (``"exact"``); U, W the singular vectors of M diag(sqrt p)."""
    check_choice("gradient", gradient, ("paper", "exact"))
    p = check_spectral_density(p, np.asarray(v).shape[0])
    return KOMProblem(M, v).subgradient(p, gradient)


def default_kom_step(d2: int, te: int, iterations: int, eps: float) -> float:
    """eta_M = sqrt(2 ln d2 / (T_M Te (1 + sqrt(d2)/eps))) (OPFES App. B, proof of Thm 3.7)."""
    if d2 < 2 or te < 1 or iterations < 1:
        return 0.0
    return float(np.sqrt(2.0 * np.log(d2) / (iterations * te * (1.0 + np.sqrt(d2) / eps))))


@dataclass
class MirrorDescentResult:
    p: np.ndarray            #: the returned density (last or average iterate)
    objective: np.ndarray    #: f(p^(i)) for i = 0..T_M (the problem's, possibly rank-reduced, f)
    step: float


def mirror_descent(M=None, v=None, *, problem: KOMProblem | None = None, iterations: int = 1000,
                   step: float = 0.01, floor: float = 1e-12, gradient: str = "paper",
                   iterate: str = "last", p0=None, rank_tol: float = 0.0,
                   track_objective: bool = False) -> MirrorDescentResult:
    """Algorithm 1 of OPFES: entropic mirror descent on the simplex for Eq. 6.

    p^(0) = 1/d2 (or ``p0``); p^(i) = q / ||q||_1 with q = p^(i-1) exp(-eta g(p^(i-1))); entries
    are kept >= ``floor`` (the proof's projection, against division by 0 and underflow).
    ``iterate``: "last" (Algorithm 1) or "average" (the iterate Thm 3.7 bounds). A non-finite
    density (a step far too large) raises ValueError.
    """
    if problem is None:
        if M is None or v is None:
            raise ValueError("give the statistics (M, v) or a KOMProblem")
        problem = KOMProblem(M, v, rank_tol)
    iterations = check_int("iterations", iterations, 0)
    step = check_nonnegative("step", step)
    floor = check_nonnegative("floor", floor)
    check_choice("gradient", gradient, ("paper", "exact"))
    check_choice("iterate", iterate, ("last", "average"))
    d2 = problem.d2
    if floor * d2 >= 1.0:
        raise ValueError(f"floor must be below 1/d2 = {1.0 / d2!r}, got {floor!r}")
    p = np.full(d2, 1.0 / d2) if p0 is None else check_spectral_density(p0, d2, "p0").copy()
    with one_blas_thread():
        return _mirror_descent_loop(problem, p, iterations, step, floor, gradient, iterate, track_objective)


def _mirror_descent_loop(problem, p, iterations, step, floor, gradient, iterate, track_objective):
    d2 = problem.d2
    total = np.zeros(d2)
    history = [problem.objective(p)] if track_objective else []
    for _ in range(iterations):
        g = problem.subgradient(p, gradient)
        if not np.isfinite(g).all():
            raise ValueError("the KOM subgradient became non-finite in mirror descent")
        with np.errstate(over="ignore"):
            z = -step * (g - g.min())
        q = p * np.exp(z)
        s = q.sum()
        if not (np.isfinite(s) and s > 0):
            raise ValueError("the spectral density became non-finite in mirror descent "
                             f"(step {step!r} too large for gradients up to {np.abs(g).max():.3g})")
        p = np.maximum(q / s, floor)
        p /= p.sum()
        if not np.isfinite(p).all():
            raise ValueError("the spectral density became non-finite in mirror descent")
        total += p
        if track_objective:
            history.append(problem.objective(p))
    out = total / iterations if (iterate == "average" and iterations) else p
    return MirrorDescentResult(out, np.asarray(history), step)


def procrustes_rotation(M, p=None):
    """U* = V W^T of Prop. 4.1 as factors (V, W) of the SVD of M diag(sqrt p) (p uniform if None)."""
    M = np.asarray(M, dtype=np.float64)
    p = np.full(M.shape[1], 1.0 / M.shape[1]) if p is None else check_spectral_density(p, M.shape[1])
    return KOMProblem(M, np.zeros(M.shape[1])).rotation(p)


__all__ = ["kom_discrepancy", "kom_discrepancy_factors", "psd_sqrt", "check_spectral_density",
           "KOMStatistics", "KOMProblem", "kom_objective", "kom_subgradient", "default_kom_step",
           "mirror_descent", "MirrorDescentResult", "procrustes_rotation"]
