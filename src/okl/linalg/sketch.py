"""Sketching matrices and the incremental randomized sketch (IRS) of SkeGD.

Zhang & Liao, "Incremental Randomized Sketching for Online Kernel Learning", ICML 2019 (SkeGD),
sections 2.2-3; ALGORITHMS.md 1.1, 1.2 and 3.

SJLT (ALGORITHMS.md 1.1)
    S in R^{n x s} is d blocks side by side, S = [S_1, ..., S_d]; block k has s // d columns (the
    last block takes the remainder s - (d-1)(s // d), as the R code ``CSketch_d.R``). Every row has
    exactly one nonzero per block, at a uniformly drawn column of that block, with value
    +-1/sqrt(d) (random sign). d = 1 is the Count Sketch. Rows are i.i.d. (both public codes draw
    them so; the paper assumes O(log T)-wise independent hashes). Lemma 1 of SkeGD:
    E ||S^T A||_F^2 = ||A||_F^2 and Var <= (2/s) ||A||_F^4.

Column sampling (ALGORITHMS.md 1.2)
    S_m in R^{n x s_m} has S_m[r_j, j] = 1 for s_m indices r_j drawn uniformly without replacement
    (no rescaling, as the R and C++ codes).

Incremental sketch (SkeGD section 3)
    Over the *sketch list* L (the B buffered points at the transition, plus, in the paper's
    reading, every update-round point), with K the kernel matrix of L:

        Phi_pp = S_p^T K S_p   (s_p x s_p),      Phi_pm = S_p^T K S_m   (s_p x s_m).

    The sampled points x~_j = L[r_j] ("landmarks") are chosen once from the buffer and never
    change. A new point x with psi = [kappa(x, l)]_{l in L}, xi = kappa(x, x), a fresh SJLT row
    s and a = S_p^T psi changes the products by rank-1 / rank-2 terms (x is never sampled, so
    its S_m row is zero):

        Phi_pm += s kappa_m(x)^T,                 kappa_m(x) = [kappa(x, x~_j)]_j,
        Phi_pp += s a^T + a s^T + xi s s^T  = A Bf^T,   A = [s, a],  Bf = [a + xi s, s].

    ``grow=True`` (paper, R code): s becomes a new row of S_p and x joins L, so the products stay
    exactly S_p^T K S_p and S_p^T K S_m over the grown list (cost O(nu D + nu s_p) per update,
    nu = |L|). ``grow=False`` (FORKS C++ code): S_p and L stay on the B buffer points, so psi is
    always over the buffer (fixed cost O(B D + B s_p)); the products then lack the cross terms
    between update points.

Saving and rebuilding (for learners that keep a sketch in ``_state_attrs``)
    :meth:`IncrementalSketch.state` returns a dict of plain arrays and numbers
    (``S_p``, ``points``, ``indices``, ``Phi_pp``, ``Phi_pm``, ``d``, ``grow``);
    :meth:`IncrementalSketch.from_arrays` rebuilds the object from them without drawing anything.
    A learner stores each entry under its own attribute name (e.g. ``sketch_S_p_``) and rebuilds
    the sketch on demand with its own generator ``self._rng`` (the generator is saved by the
    learner, so a loaded model draws the same future SJLT rows)::

        st = sketch.state()                      # before save: copy entries into attributes
        sketch = IncrementalSketch.from_arrays(kernel, st, rng)   # after load
"""

from __future__ import annotations

from typing import Any

import numpy as np

from okl._validation import check_int


def _check_sjlt_sizes(s: int, d: int) -> tuple[int, int]:
    s = check_int("s (sketch size)", s, 1)
    d = check_int("d (number of SJLT blocks)", d, 1, s)
    return s, d


def _block_layout(s: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(first column, width) of each of the d blocks; the last block takes the remainder."""
    width = s // d
    starts = np.arange(d) * width
    widths = np.full(d, width)
    widths[-1] = s - (d - 1) * width
    return starts, widths


def sjlt_entries(n_rows: int, s: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The nonzeros of an n_rows x s SJLT: (columns, values), each (n_rows x d).

    One ``rng.random((n_rows, 2 d))`` call per matrix (fixed draw order, so results repeat from
    the generator state): column of block k = first column + floor(u_k x width_k), sign + when
    u_{d+k} < 1/2.
    """
    s, d = _check_sjlt_sizes(s, d)
    n_rows = check_int("n_rows", n_rows, 0)
    return _draw_entries(n_rows, s, d, rng)


def _draw_entries(n_rows: int, s: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    starts, widths = _block_layout(s, d)
    u = rng.random((n_rows, 2 * d))
    cols = starts[None, :] + np.minimum((u[:, :d] * widths[None, :]).astype(np.int64), widths - 1)
    vals = np.where(u[:, d:] < 0.5, 1.0, -1.0) / np.sqrt(d)
    return cols, vals


def sjlt(n_rows: int, s: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Dense n_rows x s sparse Johnson-Lindenstrauss transform (ALGORITHMS.md 1.1).

    d blocks of s // d columns (last block: the remainder); one nonzero +-1/sqrt(d) per block per
    row. ``sjlt(n, s, d, rng)`` draws the same matrix as n successive :func:`sjlt_row` calls only
    in distribution (not draw for draw).

    >>> S = sjlt(5, 10, 4, np.random.default_rng(0))
    >>> S.shape, (S != 0).sum(axis=1).tolist(), float(abs(S[S != 0][0]))
    ((5, 10), [4, 4, 4, 4, 4], 0.5)
    """
    cols, vals = sjlt_entries(n_rows, s, d, rng)
    S = np.zeros((n_rows, s))
    np.put_along_axis(S, cols, vals, axis=1)
    return S


def sjlt_row(s: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """One fresh, independent SJLT row (length s, d nonzeros +-1/sqrt(d)): the row of a new point."""
    return sjlt(1, s, d, rng)[0]


def sample_columns(n: int, s_m: int, rng: np.random.Generator) -> np.ndarray:
    """s_m distinct indices in [0, n), uniform without replacement (the columns of S_m; entries 1).

    >>> idx = sample_columns(10, 4, np.random.default_rng(0))
    >>> len(set(idx.tolist())), bool(idx.min() >= 0 and idx.max() < 10)
    (4, True)
    """
    n = check_int("n", n, 1)
    s_m = check_int("s_m (number of sampled columns)", s_m, 1, n)
    return np.asarray(rng.choice(n, size=s_m, replace=False), dtype=np.int64)


def selection_matrix(n: int, indices: np.ndarray) -> np.ndarray:
    """Dense n x len(indices) column-sampling matrix S_m with S_m[indices[j], j] = 1."""
    S = np.zeros((n, len(indices)))
    S[np.asarray(indices), np.arange(len(indices))] = 1.0
    return S


class IncrementalSketch:
    """Incremental randomized sketch Phi_pp = S_p^T K S_p, Phi_pm = S_p^T K S_m (SkeGD 3).

    Parameters
    ----------
    kernel : okl Kernel (``kernel(X, Y)`` gives the Gram matrix)
    points : (B x D) array, the buffered points at the transition (the initial sketch list)
    s_p : int, SJLT sketch size, 1 <= s_p
    s_m : int, number of sampled points (landmarks), 1 <= s_m <= B
    d : int, SJLT blocks, 1 <= d <= s_p
    rng : numpy Generator (draws S_p, then the sampled indices, then one row per update)
    grow : bool, default True
        True: the paper / R code (update points join the sketch list); False: the FORKS C++ code
        (sketch list fixed on the buffer). See the module docstring.

    Attributes
    ----------
    S_p : (nu x s_p) SJLT rows of the sketch list; points : (nu x D) the sketch list;
    indices : (s_m,) sampled rows of the buffer; landmarks : (s_m x D) = points[indices];
    Phi_pp : (s_p x s_p); Phi_pm : (s_p x s_m); n_updates : number of :meth:`update` calls.

    Cost: construction O(B^2 D + B^2 s_p) (dense products; B is small); :meth:`update`
    O(nu D + nu s_p + s_p^2 + s_p s_m).

    >>> from okl.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((20, 3))
    >>> sk = IncrementalSketch(RBF(1.0), X[:12], s_p=9, s_m=3, d=3, rng=rng)
    >>> for x in X[12:]:
    ...     A, Bf = sk.update(x)
    >>> K = RBF(1.0)(sk.points, sk.points)
    >>> bool(np.allclose(sk.Phi_pp, sk.S_p.T @ K @ sk.S_p, atol=1e-12))
    True
    """

    def __init__(self, kernel, points, s_p: int, s_m: int, d: int, rng: np.random.Generator,
                 grow: bool = True):
        points = np.array(points, dtype=np.float64, ndmin=2)
        B = points.shape[0]
        s_p, d = _check_sjlt_sizes(s_p, d)
        s_m = check_int("s_m (number of sampled points)", s_m, 1, B)
        self.kernel = kernel
        self.rng = rng
        self.grow = bool(grow)
        self.d = d
        S_p = sjlt(B, s_p, d, rng)
        self.indices = sample_columns(B, s_m, rng)
        self._set_list(S_p, points)
        K = kernel(points, points)
        KS = K @ S_p
        Phi_pp = S_p.T @ KS
        self.Phi_pp = 0.5 * (Phi_pp + Phi_pp.T)
        self.Phi_pm = KS[self.indices, :].T.copy()  # S_p^T K S_m = (S_m^T K S_p)^T
        self.landmarks = points[self.indices].copy()
        self.n_updates = 0

    def _set_list(self, S_p: np.ndarray, points: np.ndarray) -> None:
        """Store the sketch list in buffers with spare capacity (appends are amortised O(1))."""
        n = S_p.shape[0]
        cap = n + max(16, n // 2) if self.grow else n
        self._S_buf = np.zeros((cap, S_p.shape[1]))
        self._S_buf[:n] = S_p
        self._P_buf = np.zeros((cap, points.shape[1]))
        self._P_buf[:n] = points
        # the d nonzeros of every row (SJLT blocks are disjoint: exactly d per row), for
        # a = S_p^T psi in O(nu d) instead of O(nu s_p)
        rows, cols = np.nonzero(S_p)
        if rows.shape[0] != n * self.d or np.any(np.bincount(rows, minlength=n) != self.d):
            raise ValueError(f"S_p must have exactly d = {self.d} nonzeros in every row (an SJLT)")
        self._C_buf = np.zeros((cap, self.d), dtype=np.int64)
        self._C_buf[:n] = cols.reshape(n, self.d)
        self._V_buf = np.zeros((cap, self.d))
        self._V_buf[:n] = S_p[rows, cols].reshape(n, self.d)
        self._n_list = n

    @property
    def S_p(self) -> np.ndarray:
        """(nu x s_p) SJLT rows of the sketch list (a view; replaced when the list grows)."""
        return self._S_buf[: self._n_list]

    @property
    def points(self) -> np.ndarray:
        """(nu x D) the sketch list (a view)."""
        return self._P_buf[: self._n_list]

    # ---- sizes ----------------------------------------------------------------------------

    @property
    def s_p(self) -> int:
        return int(self.S_p.shape[1])

    @property
    def s_m(self) -> int:
        return int(self.indices.shape[0])

    @property
    def n_buffer(self) -> int:
        """B, the number of buffered points the sketch started from."""
        return int(self.points.shape[0]) - (self.n_updates if self.grow else 0)

    # ---- incremental update ---------------------------------------------------------------

    def update(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Fold a new point x into Phi_pp and Phi_pm (SkeGD 3); returns (A, Bf), s_p x 2 each,
        with Phi_pp_new - Phi_pp_old == A @ Bf.T (A = [s, a], Bf = [a + xi s, s])."""
        x = np.asarray(x, dtype=np.float64).reshape(1, -1)
        S_p = self.S_p
        s_p = S_p.shape[1]
        psi = self.kernel(self.points, x)[:, 0]
        xi = float(self.kernel.diag(x)[0])
        cols, vals = _draw_entries(1, s_p, self.d, self.rng)
        cols, vals = cols[0], vals[0]
        s = np.zeros(s_p)
        s[cols] = vals
        n = self._n_list
        a = np.bincount(self._C_buf[:n].ravel(), weights=(self._V_buf[:n] * psi[:, None]).ravel(),
                        minlength=s_p)
        # Phi_pm += s kappa_m(x)^T: only the d rows of s's nonzeros change
        self.Phi_pm[cols] += vals[:, None] * self.kernel(x, self.landmarks)[0][None, :]
        # Phi_pp += s a^T + a s^T + xi s s^T: rows and columns `cols`; the d x d block is set
        # from its old value plus an exactly symmetric increment, so Phi_pp stays symmetric
        R = vals[:, None] * a[None, :]
        block = self.Phi_pp[np.ix_(cols, cols)]
        inc = R[:, cols]
        block_new = block + ((inc + inc.T) + xi * (vals[:, None] * vals[None, :]))
        self.Phi_pp[cols, :] += R
        self.Phi_pp[:, cols] += R.T
        self.Phi_pp[np.ix_(cols, cols)] = block_new
        if self.grow:
            if n == self._S_buf.shape[0]:
                extra = max(16, n // 2)
                self._S_buf = np.vstack([self._S_buf, np.zeros((extra, s_p))])
                self._P_buf = np.vstack([self._P_buf, np.zeros((extra, x.shape[1]))])
                self._C_buf = np.vstack([self._C_buf, np.zeros((extra, self.d), dtype=np.int64)])
                self._V_buf = np.vstack([self._V_buf, np.zeros((extra, self.d))])
            self._S_buf[n] = s
            self._P_buf[n] = x[0]
            order = np.argsort(cols)
            self._C_buf[n] = cols[order]
            self._V_buf[n] = vals[order]
            self._n_list = n + 1
        self.n_updates += 1
        return np.column_stack([s, a]), np.column_stack([a + xi * s, s])

    def kernel_map(self, X) -> np.ndarray:
        """kappa_m(X) = kernel(X, landmarks), (n x s_m)."""
        return self.kernel(np.atleast_2d(X), self.landmarks)

    # ---- state ----------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Plain arrays and numbers that :meth:`from_arrays` rebuilds the sketch from (no pickling).

        Keys: ``S_p``, ``points``, ``indices``, ``Phi_pp``, ``Phi_pm`` (arrays), ``d`` (int),
        ``grow`` (bool), ``n_updates`` (int).
        """
        return {"S_p": self.S_p, "points": self.points, "indices": self.indices,
                "Phi_pp": self.Phi_pp, "Phi_pm": self.Phi_pm, "d": int(self.d),
                "grow": bool(self.grow), "n_updates": int(self.n_updates)}

    @classmethod
    def from_arrays(cls, kernel, state: dict[str, Any], rng: np.random.Generator) -> "IncrementalSketch":
        """Rebuild a sketch from :meth:`state` output without drawing anything.

        ``rng`` is used only by later :meth:`update` calls (pass the learner's saved generator).
        """
        self = cls.__new__(cls)
        self.kernel = kernel
        self.rng = rng
        self.grow = bool(state["grow"])
        self.d = int(state["d"])
        self._set_list(np.asarray(state["S_p"], dtype=np.float64),
                       np.asarray(state["points"], dtype=np.float64))
        self.indices = np.array(state["indices"], dtype=np.int64)
        self.Phi_pp = np.array(state["Phi_pp"], dtype=np.float64)
        self.Phi_pm = np.array(state["Phi_pm"], dtype=np.float64)
        self.n_updates = int(state.get("n_updates", 0))
        self.landmarks = self.points[self.indices].copy()
        return self


__all__ = ["sjlt", "sjlt_row", "sjlt_entries", "sample_columns", "selection_matrix", "IncrementalSketch"]
