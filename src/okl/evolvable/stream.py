"""Feature-evolvable streams (OPFES Sec. 2 and 5; ALGORITHMS.md 7 "Setting" and 8 "OPFES").

A feature-evolvable stream has three stages:

* previous stage, rounds 1..T1: only the old features x1 in X1 (dimension D1) arrive;
* evolving stage, rounds T1+1..T1+Te: both x1 and the new features x2 in X2 (dimension D2);
* current stage, rounds T1+Te+1..T1+Te+T2: only x2.

The OPFES protocol (Sec. 5) builds one from an ordinary dataset: the columns are split at random
into an old and a new half ("almost equal number of features"), the rows are put in a random
order, Te = 1000 if n > 10,000 else 10% of n, and T1 = T2 = (n - Te)/2 (T2 takes the odd row).
Every run draws a fresh split and order from its seed.

>>> import numpy as np
>>> X = np.random.default_rng(0).random((50, 6)); y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
>>> s = make_evolvable_stream(X, y, seed=3)
>>> (s.T1, s.Te, s.T2), s.X1.shape, s.X2.shape
((22, 5, 23), (27, 3), (28, 3))
>>> [stage for stage, _, _, _ in s.rows()][20:24]
['previous', 'previous', 'evolving', 'evolving']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import numpy as np

from okl._validation import as_float64, check_int, check_targets

STAGES = ("previous", "evolving", "current")


def stage_lengths(n: int, evolving_length: int | None = None) -> tuple[int, int, int]:
    """(T1, Te, T2) for a stream of ``n`` rows: the OPFES Sec. 5 rule unless ``evolving_length``
    is given (Te = 1000 if n > 10,000 else round(0.1 n); T1 = floor((n - Te)/2), T2 the rest).

    >>> stage_lengths(15000), stage_lengths(3175)
    ((7000, 1000, 7000), (1428, 318, 1429))
    """
    n = check_int("n", n, 0)
    if evolving_length is None:
        te = 1000 if n > 10_000 else int(round(0.1 * n))
    else:
        te = check_int("evolving_length", evolving_length, 0)
        if te > n:
            raise ValueError(f"evolving stage length Te = {te} is larger than the stream ({n} rows)")
    t1 = (n - te) // 2
    return t1, te, n - te - t1


def _finite_matrix(X, what: str) -> np.ndarray:
    X = as_float64(X, what, 2, contiguous=True)
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        r, c = bad[0]
        raise ValueError(f"{what} has a non-finite value {X[r, c]!r} at row {r}, column {c}")
    return X


def _stage_row(x, dim, out: list, t: int, name: str, space: str):
    """Append round ``t``'s features ``x`` of one space (if present) to ``out``; returns the
    dimension of that space, fixed by its first row."""
    if x is None:
        return dim
    x = np.asarray(x, dtype=float).reshape(-1)
    if dim is None:
        dim = x.shape[0]
    elif x.shape[0] != dim:
        raise ValueError(f"round {t}: {name} has {x.shape[0]} features, earlier rounds {dim}: the {space} "
                         "feature dimension changed within its stages")
    out.append(x)
    return dim


@dataclass(frozen=True)
class EvolvableStream:
    """A feature-evolvable stream with declared stage lengths.

    ``X1`` holds the old features of the previous and evolving rounds (T1 + Te rows), ``X2`` the new
    features of the evolving and current rounds (Te + T2 rows), ``y`` the labels of all
    T1 + Te + T2 rounds (-1/+1). ``old_columns``/``new_columns``/``order`` record how the stream
    was made from a dataset (None when built directly).
    """

    X1: np.ndarray
    X2: np.ndarray
    y: np.ndarray
    T1: int
    Te: int
    T2: int
    old_columns: np.ndarray | None = field(default=None, repr=False)
    new_columns: np.ndarray | None = field(default=None, repr=False)
    order: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        t1 = check_int("T1", self.T1, 0)
        te = check_int("Te", self.Te, 0)
        t2 = check_int("T2", self.T2, 0)
        X1 = _finite_matrix(self.X1, "X1")
        X2 = _finite_matrix(self.X2, "X2")
        y = check_targets(self.y, "classification", None)
        n = t1 + te + t2
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} labels but the stages declare T1 + Te + T2 = "
                             f"{t1} + {te} + {t2} = {n} rounds")
        if X1.shape[0] != t1 + te:
            raise ValueError(f"X1 has {X1.shape[0]} rows but the old features arrive in the previous "
                             f"and evolving stages: T1 + Te = {t1 + te} rows")
        if X2.shape[0] != te + t2:
            raise ValueError(f"X2 has {X2.shape[0]} rows but the new features arrive in the evolving "
                             f"and current stages: Te + T2 = {te + t2} rows")
        if X1.shape[1] < 1 and t1 + te > 0:
            raise ValueError("X1 has no columns: the old feature space is empty")
        if X2.shape[1] < 1 and te + t2 > 0:
            raise ValueError("X2 has no columns: the new feature space is empty")
        for name, value in (("X1", X1), ("X2", X2), ("y", y), ("T1", t1), ("Te", te), ("T2", t2)):
            object.__setattr__(self, name, value)

    # ---- views ---------------------------------------------------------------------------

    @property
    def n_rounds(self) -> int:
        return self.T1 + self.Te + self.T2

    @property
    def dims(self) -> tuple[int, int]:
        """(D1, D2): the old and new feature dimensions."""
        return self.X1.shape[1], self.X2.shape[1]

    def stage_of(self, t: int) -> str:
        """Stage of round ``t`` (0-based)."""
        if not 0 <= t < self.n_rounds:
            raise IndexError(f"round {t} outside the stream (0..{self.n_rounds - 1})")
        return STAGES[0] if t < self.T1 else STAGES[1] if t < self.T1 + self.Te else STAGES[2]

    def previous(self) -> tuple[np.ndarray, np.ndarray]:
        return self.X1[:self.T1], self.y[:self.T1]

    def evolving(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.X1[self.T1:], self.X2[:self.Te], self.y[self.T1:self.T1 + self.Te]

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        return self.X2[self.Te:], self.y[self.T1 + self.Te:]

    def rows(self) -> Iterator[tuple[str, np.ndarray | None, np.ndarray | None, float]]:
        """(stage, x1 or None, x2 or None, y) for every round, in order."""
        for t in range(self.n_rounds):
            x1 = self.X1[t] if t < self.T1 + self.Te else None
            x2 = self.X2[t - self.T1] if t >= self.T1 else None
            yield self.stage_of(t), x1, x2, float(self.y[t])

    # ---- construction --------------------------------------------------------------------

    @classmethod
    def from_rows(cls, rows: Iterable[tuple], T1: int, Te: int, T2: int) -> "EvolvableStream":
        """Build from ``(x1, x2, y)`` rows (None for an absent space) with declared stage lengths.

        Checks that each round carries exactly the spaces its stage declares and that each
        space keeps one dimension: a stream whose features change outside the declared stages
        raises ValueError naming the round.
        """
        t1, te, t2 = (check_int(n, v, 0) for n, v in (("T1", T1), ("Te", Te), ("T2", T2)))
        x1s, x2s, ys = [], [], []
        d1 = d2 = None
        count = 0
        for t, row in enumerate(rows):
            if len(row) != 3:
                raise ValueError(f"round {t}: expected (x1, x2, y), got {len(row)} items")
            x1, x2, y = row
            stage = STAGES[0] if t < t1 else STAGES[1] if t < t1 + te else STAGES[2] if t < t1 + te + t2 else None
            if stage is None:
                raise ValueError(f"the stream has more rounds than the declared T1 + Te + T2 = {t1 + te + t2}")
            want1, want2 = stage != "current", stage != "previous"
            if (x1 is not None) != want1 or (x2 is not None) != want2:
                got = "+".join(n for n, x in (("x1", x1), ("x2", x2)) if x is not None) or "no features"
                need = "+".join(n for n, w in (("x1", want1), ("x2", want2)) if w)
                raise ValueError(f"round {t} is in the {stage} stage (T1={t1}, Te={te}, T2={t2}) and must "
                                 f"carry {need}, got {got}: the feature space changed outside the "
                                 "declared stages")
            d1 = _stage_row(x1, d1, x1s, t, "x1", "old")
            d2 = _stage_row(x2, d2, x2s, t, "x2", "new")
            ys.append(y)
            count += 1
        if count != t1 + te + t2:
            raise ValueError(f"the stream has {count} rounds but the stages declare T1 + Te + T2 = {t1 + te + t2}")
        X1 = np.array(x1s) if x1s else np.empty((0, d1 or 1))
        X2 = np.array(x2s) if x2s else np.empty((0, d2 or 1))
        return cls(X1, X2, np.asarray(ys, dtype=float), t1, te, t2)


def make_evolvable_stream(X, y, *, seed: int, evolving_length: int | None = None,
                          old_fraction: float = 0.5, new_columns=None) -> EvolvableStream:
    """The OPFES Sec. 5 stream of run ``seed`` from a dataset (X, y).

    One Generator ``numpy.random.default_rng(seed)`` draws the row order first (so it equals
    ``okl.data.permutation(n, seed)``) and then the column permutation; the first
    ``floor(old_fraction * D)`` permuted columns (at least 1, at most D - 1) are the old space,
    the rest the new space. Stage lengths follow :func:`stage_lengths`. ``new_columns`` fixes the
    split instead (the same for every seed; the other columns are the old space): e.g.
    ``range(24)`` makes pol's new space its first 24 columns (``opfes-table2 --protocol published``'s
    fixed-split variant). The row order is drawn from the seed either way.
    """
    X = _finite_matrix(X, "X")
    y = check_targets(y, "classification", X.shape[0])
    n, D = X.shape
    if D < 2:
        raise ValueError(f"a feature-evolvable stream needs at least 2 features to split, got {D}")
    if not 0.0 < float(old_fraction) < 1.0:
        raise ValueError(f"old_fraction must be in (0, 1), got {old_fraction!r}")
    seed = check_int("seed", seed, 0)
    t1, te, t2 = stage_lengths(n, evolving_length)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cols = rng.permutation(D)
    n_old = min(max(int(np.floor(old_fraction * D)), 1), D - 1)
    old, new = np.sort(cols[:n_old]), np.sort(cols[n_old:])
    if new_columns is not None:
        new = np.unique(np.asarray(list(new_columns), dtype=np.int64))
        if new.size < 1 or new.size > D - 1 or new[0] < 0 or new[-1] >= D:
            raise ValueError(f"new_columns must name 1 to {D - 1} of the {D} columns")
        old = np.setdiff1d(np.arange(D), new)
    Xo = X[order]
    return EvolvableStream(Xo[:t1 + te][:, old], Xo[t1:][:, new], y[order], t1, te, t2,
                           old_columns=old, new_columns=new, order=order)


__all__ = ["STAGES", "EvolvableStream", "make_evolvable_stream", "stage_lengths"]
