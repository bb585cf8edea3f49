"""Truncated incremental SVD (TISVD): Brand's additive low-rank SVD update, truncated to rank k.

FORKS (Wen et al. 2025) Sec. 3.3, Algorithm 1, Eq. 6-9; Brand (2006); ALGORITHMS.md 1.4 and 4.

Given a thin SVD X ~ U diag(s) V^T (U: m x k, V: n x k, orthonormal columns) and update
factors A (m x r), B (n x r), the update X' = X + A B^T is decomposed without touching an
m x n matrix:

1. M_A = U^T A, residual R_a = (I - U U^T) A = P R_A (P: m x r_a orthonormal, P perp U);
   M_B = V^T B, R_b = (I - V V^T) B = Q R_B (Q: n x r_b orthonormal, Q perp V)     (Eq. 7)
2. K = [[diag(s), 0], [0, 0]] + [M_A; R_A] [M_B; R_B]^T      ((k + r_a) x (k + r_b), Eq. 8)
3. K = U_K diag(s_K) V_K^T (full SVD of the small matrix), keep the top k triplets
4. U' = [U P] U_K[:, :k], s' = s_K[:k], V' = [V Q] V_K[:, :k]                        (Eq. 9)

Without truncation step 4 reproduces X + A B^T exactly (when X = U diag(s) V^T exactly); with
truncation it is the best rank-k approximation of (previous truncated matrix + update), so the
discarded tail accumulates over updates. :attr:`TruncatedIncrementalSVD.discarded_` records the
Frobenius norm dropped at each update, which bounds the drift from the best rank-k approximation
of the exactly accumulated matrix:
``||X'_T - [X_T]_k||_F <= sum_t discarded_t + ||X_T - [X_T]_k||_F``.

Rank-deficient residuals (for FORKS's sketch update A = [s, S^T psi, xi s] the first and last
columns are parallel) are detected by a column-pivoted QR; the null directions are dropped
(``residual="drop"``, default) or kept as zero columns of P / zero rows of R_A
(``residual="pad"``, as Wingate's ``svd_update.m``), which keeps K at (k + r) x (k + r).
Residuals are projected twice ("twice is enough" Gram-Schmidt) so that P stays orthogonal to U
to machine precision; ``reorthogonalize_every`` optionally re-orthonormalises U and V by QR
(the product U diag(s) V^T is kept exactly).

``variant="code"`` reproduces the authors' ``ISVD_lowrank::update`` (Henry-ruc/FORKS
``OKL_fun.hpp``; ALGORITHMS.md 4 "TISVD as implemented"), which is *not* an exact update:
P is the first r columns of the Householder Q of a column-pivoted QR of (I - U U^T) A, even
when that matrix has rank < r (the extra column is an arbitrary unit vector, not orthogonal to
U); R_A = P^T A uses the whole A; and the same P stands in for B's basis (R_B = P^T B,
V' = [V P] V_K). It is offered for reproducing the code's numbers only.

Cost per update: O((m + n) k r + (m + n) r^2) for the projections and QR, O((k + r)^3) for the
small SVD and O((m + n)(k + r) k) for the rotations -- linear in m, n (FORKS: "linear in the
sketch size s_p"), against O(m n min(m, n)) for a fresh SVD.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((30, 20))
>>> svd = TruncatedIncrementalSVD.from_matrix(X, rank=20)
>>> A, B = rng.standard_normal((30, 2)), rng.standard_normal((20, 2))
>>> _ = svd.update(A, B)
>>> bool(np.allclose(svd.matrix(), X + A @ B.T))
True
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from okl._validation import check_choice, check_int, check_real

VARIANTS = ("exact", "code")
RESIDUAL_MODES = ("drop", "pad")


def truncated_svd(X: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-``rank`` truncation of the full (LAPACK gesdd) SVD of X: (U, s, V) with X ~ U diag(s) V^T.

    This is the "fresh truncated SVD" TISVD replaces; cost O(m n min(m, n)).
    """
    U, s, Vt = np.linalg.svd(np.asarray(X, dtype=float), full_matrices=False)
    rank = min(rank, s.shape[0])
    return U[:, :rank].copy(), s[:rank].copy(), Vt[:rank].T.copy()


def _residual_basis(U: np.ndarray, A: np.ndarray, rtol: float, pad: bool):
    """Split A = U M + P R with P orthonormal and orthogonal to U.

    Returns (M, P, R); P has as many columns as the numerical rank of (I - U U^T) A (``pad``:
    exactly A.shape[1] columns, the surplus ones zero).
    """
    r = A.shape[1]
    M = U.T @ A
    Ra = A - U @ M
    # second Gram-Schmidt pass: the residual is orthogonal to U to working precision
    C = U.T @ Ra
    Ra -= U @ C
    M += C
    Qr, Rr, piv = scipy.linalg.qr(Ra, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rr))
    scale = max(float(np.max(np.sqrt((A * A).sum(0)), initial=0.0)), np.finfo(float).tiny)
    keep = int(np.count_nonzero(diag > rtol * scale))
    R = np.zeros((keep, r))
    R[:, piv] = Rr[:keep]
    P = Qr[:, :keep]
    if pad and keep < r:
        P = np.hstack([P, np.zeros((P.shape[0], r - keep))])
        R = np.vstack([R, np.zeros((r - keep, r))])
    return M, P, R


def _columns(A) -> np.ndarray:
    """``A`` as a float matrix; a vector becomes one column."""
    A = np.asarray(A, dtype=float)
    return A[:, None] if A.ndim == 1 else A


def tisvd_update(U: np.ndarray, s: np.ndarray, V: np.ndarray, A: np.ndarray, B: np.ndarray,
                 rank: int, *, residual: str = "drop", rtol: float = 1e-10):
    """One exact TISVD step (FORKS Alg. 1): the rank-``rank`` SVD of U diag(s) V^T + A B^T.

    Returns (U', s', V', discarded) where ``discarded`` is the Frobenius norm of the singular
    values of K that were cut off (0 when nothing was truncated). Inputs are not modified.
    """
    A, B = _columns(A), _columns(B)
    pad = residual == "pad"
    MA, P, RA = _residual_basis(U, A, rtol, pad)
    MB, Qb, RB = _residual_basis(V, B, rtol, pad)
    k = s.shape[0]
    left = np.vstack([MA, RA])
    right = np.vstack([MB, RB])
    K = left @ right.T
    K[np.arange(k), np.arange(k)] += s
    UK, sK, VKt = np.linalg.svd(K, full_matrices=False)
    keep = min(rank, sK.shape[0])
    discarded = float(np.sqrt(np.sum(sK[keep:] ** 2)))
    U_new = np.hstack([U, P]) @ UK[:, :keep]
    V_new = np.hstack([V, Qb]) @ VKt[:keep].T
    return U_new, sK[:keep].copy(), V_new, discarded


def tisvd_update_code(U: np.ndarray, s: np.ndarray, V: np.ndarray, A: np.ndarray, B: np.ndarray,
                      rank: int):
    """The authors' ``ISVD_lowrank::update`` (inexact; ALGORITHMS.md 4 "TISVD as implemented").

    P = first r columns of the Householder Q of the column-pivoted QR of (I - U U^T) A (all r
    kept even when that residual is rank deficient); R_A = P^T A, R_B = P^T B (the same P for
    both sides: the code's cod/cod2 slip); K = diag(s, 0) + [U^T A; R_A][V^T B; R_B]^T, truncated
    to rank k; U' = [U P] U_K, V' = [V P] V_K. Double precision (the code is float32).
    Returns (U', s', V', discarded) like :func:`tisvd_update`.
    """
    A, B = _columns(A), _columns(B)
    r = A.shape[1]
    p = A - U @ (U.T @ A)
    Qh, _, _ = scipy.linalg.qr(p, mode="economic", pivoting=True)
    P = Qh[:, :r]
    RA = P.T @ A
    RB = P.T @ B
    k = s.shape[0]
    K = np.vstack([U.T @ A, RA]) @ np.vstack([V.T @ B, RB]).T
    K[np.arange(k), np.arange(k)] += s
    UK, sK, VKt = np.linalg.svd(K, full_matrices=False)
    keep = min(rank, sK.shape[0])
    discarded = float(np.sqrt(np.sum(sK[keep:] ** 2)))
    return (np.hstack([U, P]) @ UK[:, :keep], sK[:keep].copy(), np.hstack([V, P]) @ VKt[:keep].T,
            discarded)


def reorthogonalize(U: np.ndarray, s: np.ndarray, V: np.ndarray):
    """Re-orthonormalise the factors by QR while keeping U diag(s) V^T: returns (U', s', V')."""
    Qu, Ru = np.linalg.qr(U)
    Qv, Rv = np.linalg.qr(V)
    Us, ss, Vst = np.linalg.svd((Ru * s) @ Rv.T)
    return Qu @ Us, ss, Qv @ Vst.T


class TruncatedIncrementalSVD:
    """A rank-k thin SVD X ~ U diag(s) V^T kept up to date under additive updates X += A B^T.

    Parameters
    ----------
    U, s, V : arrays
        The starting thin SVD (U: m x k0, s: k0 descending, V: n x k0). ``k0`` may be 0 (start
        from the zero matrix: pass ``np.zeros((m, 0))`` etc.) and grows with updates up to ``rank``.
    rank : int or None
        Target rank k kept after every update (default: ``len(s)``).
    variant : {"exact", "code"}
        "exact" = FORKS Alg. 1 with orthogonal residual bases (default); "code" = the authors'
        inexact ``ISVD_lowrank::update`` (:func:`tisvd_update_code`), for reproductions.
    residual : {"drop", "pad"}
        Rank-deficient residual directions are dropped (default) or padded with zero columns.
    rtol : float, default 1e-10
        A residual direction counts when its pivoted-QR diagonal exceeds rtol x the largest
        column norm of the update factor.
    reorthogonalize_every : int, default 0
        Re-orthonormalise U and V by QR every this many updates (0 = never; the exact variant
        keeps them orthonormal to ~1e-15 per update anyway).

    Attributes
    ----------
    U, s, V : the current factors; ``n_updates``; ``discarded_`` (Frobenius mass cut at each update).
    """

    def __init__(self, U, s, V, *, rank: int | None = None, variant: str = "exact",
                 residual: str = "drop", rtol: float = 1e-10, reorthogonalize_every: int = 0):
        self.U = np.array(U, dtype=float, ndmin=2)
        self.s = np.array(s, dtype=float).reshape(-1)
        self.V = np.array(V, dtype=float, ndmin=2)
        if self.U.shape[1] != self.s.shape[0] or self.V.shape[1] != self.s.shape[0]:
            raise ValueError(f"U {self.U.shape}, s {self.s.shape} and V {self.V.shape} do not form a thin SVD")
        self.rank = self.s.shape[0] if rank is None else check_int("rank", rank, 1)
        self.variant = check_choice("variant", variant, VARIANTS)
        self.residual = check_choice("residual", residual, RESIDUAL_MODES)
        self.rtol = check_real("rtol", rtol, 0.0, 1.0)
        self.reorthogonalize_every = check_int("reorthogonalize_every", reorthogonalize_every, 0)
        self.n_updates = 0
        self.discarded_: list[float] = []

    @classmethod
    def from_matrix(cls, X, rank: int, **options) -> "TruncatedIncrementalSVD":
        """Start from the rank-``rank`` truncation of a fresh SVD of X."""
        U, s, V = truncated_svd(X, rank)
        return cls(U, s, V, rank=rank, **options)

    @property
    def shape(self) -> tuple[int, int]:
        return self.U.shape[0], self.V.shape[0]

    def update(self, A, B) -> "TruncatedIncrementalSVD":
        """Replace the factors by the rank-k SVD of U diag(s) V^T + A B^T (A: m x r, B: n x r)."""
        A = np.asarray(A, dtype=float)
        B = np.asarray(B, dtype=float)
        A2 = A[:, None] if A.ndim == 1 else A
        B2 = B[:, None] if B.ndim == 1 else B
        if A2.shape[0] != self.U.shape[0] or B2.shape[0] != self.V.shape[0] or A2.shape[1] != B2.shape[1]:
            raise ValueError(f"update factors A {A.shape} and B {B.shape} do not fit a "
                             f"{self.shape[0]} x {self.shape[1]} matrix")
        if self.variant == "code":
            U, s, V, cut = tisvd_update_code(self.U, self.s, self.V, A2, B2, self.rank)
        else:
            U, s, V, cut = tisvd_update(self.U, self.s, self.V, A2, B2, self.rank,
                                        residual=self.residual, rtol=self.rtol)
        self.U, self.s, self.V = U, s, V
        self.n_updates += 1
        self.discarded_.append(cut)
        if self.reorthogonalize_every and self.n_updates % self.reorthogonalize_every == 0:
            self.U, self.s, self.V = reorthogonalize(self.U, self.s, self.V)
        return self

    def matrix(self) -> np.ndarray:
        """U diag(s) V^T (m x n)."""
        return (self.U * self.s) @ self.V.T

    def __repr__(self) -> str:
        return (f"TruncatedIncrementalSVD(shape={self.shape}, rank={self.rank}, variant={self.variant!r}, "
                f"n_updates={self.n_updates})")


__all__ = ["TruncatedIncrementalSVD", "tisvd_update", "tisvd_update_code", "truncated_svd",
           "reorthogonalize"]
