"""Categorical input columns: the map from category codes to indicator columns (``categorical=``).

A learner takes numeric rows. A column declared categorical (``okl.make(name, categorical=[j])``,
``okl stream --categorical j``) holds category codes: any finite number, whose value names a level
and is not a magnitude. :class:`CategoryMap` turns such rows into the rows the learner sees, of a
fixed width, by one rule:

* the numeric (undeclared) columns come first, in their order, with their values unchanged;
* then one indicator column (1 where the row has that level, else 0) per **level seen in the
  width window** (the first :data:`~okl.kernels.WIDTH_WINDOW` rows learned), in order of first
  appearance over all declared columns (a level is the pair (column, code); the map's state);
* then, per declared column in increasing index order, **H_j hashed columns** for the levels first
  seen after the window, H_j = the number of levels the window showed for column j (at least 1):
  a later level v of column j sets column ``bucket(v, H_j)`` of its block (:func:`bucket`: CRC-32,
  stable across processes and machines), so a resumed stream maps it to the same column.

Why this rule: a learner's input width is fixed once its model starts, so a level must find its
column without growing it. Levels that show up in the first rows are the frequent ones and get
their own column (the one-hot encoding a ``OneHotEncoder`` in front would give); a column whose
levels keep arriving after the window (an id) gets room in proportion to how many the window
showed, and a column whose levels all showed up (a handful of categories) loses almost nothing to
hashed columns that stay 0 (a column constant in the window enters the input scale as 0 until it
changes: :mod:`okl.scaling`). Every level has a column, so nothing is dropped; two late levels of
one column may share a hashed column (counted in ``n_hashed``). The River adapter uses the same
rule for dict keys (its own first-seen columns, then hashed ones by :func:`bucket`).

While the window is open the map grows: a level learned for the first time takes the next
indicator column (the rows buffered so far have 0 there, which is their one-hot value), so the
window's rows are exactly the one-hot rows of the levels seen so far. A row predicted (not learned)
with a level not seen yet has no indicator for that column until the map is fixed.
"""

from __future__ import annotations

import math
import numbers
import zlib

import numpy as np

from okl.kernels import WIDTH_WINDOW

#: most levels the map keeps per declared column (the width window holds this many rows)
MAX_LEVELS = WIDTH_WINDOW


def key_hash(key) -> int:
    """The 32-bit CRC-32 of a key's ``repr`` (UTF-8): stable across processes and machines,
    unlike ``hash``; a float key is taken as ``key + 0.0`` (so -0.0 is 0.0)."""
    if isinstance(key, float):
        key = key + 0.0
    return zlib.crc32(repr(key).encode("utf-8", "backslashreplace"))


def bucket(key, n: int) -> int:
    """The hashed column (0..n-1) of a key: CRC-32 of its ``repr`` (:func:`key_hash`) modulo n."""
    return key_hash(key) % n


def signed_bucket(key, n: int) -> tuple[int, int]:
    """(column, sign) of a key for signed feature hashing: the column of :func:`bucket` and a sign
    +1 / -1 from the top bit (bit 31) of the same 32-bit hash h: column = h mod n, sign = +1 when
    bit 31 is 0. A value v of the key is added to the hashed row as sign * v.

    Feature hashing with a sign hash (Weinberger, Dasgupta, Langford, Smola and Attenberg, "Feature
    hashing for large scale multitask learning", ICML 2009, eq. 1-2; the ``alternate_sign`` of
    scikit-learn's and River's FeatureHasher, which take the sign bit of a signed 32-bit hash):
    with an independent sign the hashed inner product <phi(x), phi(x')> is an unbiased estimate of
    <x, x'> (the values of two colliding keys cancel in expectation instead of adding up). For n a
    power of two up to 2^31, h mod n reads only the low bits, so the sign is exactly independent of
    the column; for other n, P(column, sign) differs from P(column) P(sign) by less than 2^-32.
    O(len(repr(key))) per call."""
    h = key_hash(key)
    return h % n, (-1 if h >> 31 else 1)


def check_categorical(categorical, name: str = "categorical") -> list[int] | None:
    """``categorical`` as a sorted list of distinct column indices (None: no categorical column);
    ValueError naming ``name`` and what it takes otherwise."""
    if categorical is None:
        return None
    allowed = f"{name} must be None or a list of column indices (distinct integers >= 0)"
    if isinstance(categorical, (str, bytes, dict)) or not hasattr(categorical, "__iter__"):
        raise ValueError(f"{allowed}, got {categorical!r}")
    cols = list(categorical)
    for c in cols:
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral) or c < 0:
            raise ValueError(f"{allowed}, got {categorical!r} (entry {c!r})")
    cols = [int(c) for c in cols]
    if len(set(cols)) != len(cols):
        twice = next(c for i, c in enumerate(cols) if c in cols[:i])
        raise ValueError(f"{allowed}, got {categorical!r} (column {twice} named twice)")
    if not cols:
        raise ValueError(f"{allowed}, got an empty list (pass None for no categorical column)")
    return sorted(cols)


class CategoryMap:
    """The categorical columns of rows of ``n_inputs`` columns as indicator columns (the module
    docstring gives the rule). State: ``levels`` (the (column, code) pairs seen in the window, in
    order of first appearance: the dedicated columns), ``hashed`` (H_j per declared column once
    fixed, else None) and ``n_hashed`` (values that went to a hashed column when learned)."""

    def __init__(self, columns: list[int], n_inputs: int):
        columns = check_categorical(columns)
        if columns[-1] >= n_inputs:
            raise ValueError(f"categorical: column {columns[-1]} is not a column of the input, whose "
                             f"{n_inputs} columns are 0..{n_inputs - 1}")
        self.columns = columns
        self.n_inputs = int(n_inputs)
        self.numeric = np.array([j for j in range(n_inputs) if j not in set(columns)], dtype=np.intp)
        self.levels: list[tuple[int, float]] = []
        self.hashed: list[int] | None = None
        self.n_hashed = 0
        self._index: dict[tuple[int, float], int] = {}

    # ---- the layout ------------------------------------------------------------------------

    @property
    def fixed(self) -> bool:
        return self.hashed is not None

    @property
    def width(self) -> int:
        """Columns of the mapped rows."""
        return len(self.numeric) + len(self.levels) + (sum(self.hashed) if self.fixed else 0)

    def levels_of(self, column: int) -> list[float]:
        """The levels of one declared column seen in the window, in order of appearance."""
        return [v for c, v in self.levels if c == column]

    def _hash_offsets(self) -> dict[int, int]:
        start = len(self.numeric) + len(self.levels)
        out = {}
        for c, h in zip(self.columns, self.hashed):
            out[c] = start
            start += h
        return out

    def fix(self) -> None:
        """Close the window: each declared column gets its hashed columns (H_j = its levels, >= 1)."""
        if not self.fixed:
            counts = {c: 0 for c in self.columns}
            for c, _ in self.levels:
                counts[c] += 1
            self.hashed = [max(1, counts[c]) for c in self.columns]

    # ---- rows ------------------------------------------------------------------------------

    def learn(self, X: np.ndarray) -> bool:
        """Record the levels of rows about to be learned (only while the window is open); True
        when the width grew."""
        if self.fixed:
            return False
        grew = False
        for x in X:
            for c in self.columns:
                key = (c, float(x[c]) + 0.0)
                if key not in self._index:
                    self._index[key] = len(self.levels)
                    self.levels.append(key)
                    grew = True
        return grew

    def rows(self, X: np.ndarray, learned: bool = False) -> np.ndarray:
        """The mapped rows of a validated block (float64, ``n_inputs`` columns); ``learned``:
        they are being learned (counts the values that go to hashed columns)."""
        n = X.shape[0]
        out = np.zeros((n, self.width))
        k = len(self.numeric)
        out[:, :k] = X[:, self.numeric]
        offsets = self._hash_offsets() if self.fixed else None
        index = self._index
        for c in self.columns:
            codes = X[:, c] + 0.0
            values, inverse = np.unique(codes, return_inverse=True)
            for u, v in enumerate(values.tolist()):
                col = index.get((c, v))
                if col is not None:
                    col += k
                elif offsets is not None:
                    col = offsets[c] + bucket(v, self.hashed[self.columns.index(c)])
                    if learned:
                        self.n_hashed += int(np.count_nonzero(inverse == u))
                else:
                    continue  # (a level not seen yet inside the window: no indicator)
                out[inverse.reshape(-1) == u, col] = 1.0
        return out

    # ---- the state in model files ----------------------------------------------------------

    def to_json(self) -> dict:
        return {"columns": list(self.columns), "n_inputs": self.n_inputs,
                "levels": [[c, v] for c, v in self.levels], "hashed": self.hashed, "n_hashed": self.n_hashed}

    @classmethod
    def from_json(cls, data, columns: list[int]) -> "CategoryMap":
        """The map saved by :meth:`to_json`, checked against the learner's ``columns``; ValueError
        naming the field otherwise (a model file is untrusted input)."""
        if not isinstance(data, dict) or set(data) != {"columns", "n_inputs", "levels", "hashed", "n_hashed"}:
            raise ValueError("categorical map: must hold columns, n_inputs, levels, hashed and n_hashed")
        if data["columns"] != list(columns):
            raise ValueError(f"categorical map: columns {data['columns']!r} are not the learner's {list(columns)!r}")
        n_inputs = data["n_inputs"]
        if isinstance(n_inputs, bool) or not isinstance(n_inputs, int) or not columns[-1] < n_inputs <= 1 << 24:
            raise ValueError(f"categorical map: n_inputs must be an integer in [{columns[-1] + 1}, {1 << 24}], "
                             f"got {n_inputs!r}")
        m = cls(columns, n_inputs)
        levels = data["levels"]
        if not isinstance(levels, list) or len(levels) > MAX_LEVELS * len(columns):
            raise ValueError(f"categorical map: levels must be a list of at most {MAX_LEVELS * len(columns)} "
                             "[column, code] pairs")
        for pair in levels:
            if not (isinstance(pair, list) and len(pair) == 2 and pair[0] in columns and not isinstance(pair[1], bool)
                    and isinstance(pair[1], (int, float)) and math.isfinite(pair[1])):
                raise ValueError(f"categorical map: level {pair!r} is not a [declared column, finite code] pair")
            key = (pair[0], float(pair[1]) + 0.0)
            if key in m._index:
                raise ValueError(f"categorical map: level {pair!r} appears twice")
            m._index[key] = len(m.levels)
            m.levels.append(key)
        hashed, n_hashed = data["hashed"], data["n_hashed"]
        if hashed is not None:
            m.fix()
            if hashed != m.hashed:
                raise ValueError(f"categorical map: hashed must be {m.hashed!r} (one per declared column, as many "
                                 f"as its levels, at least 1), got {hashed!r}")
        if isinstance(n_hashed, bool) or not isinstance(n_hashed, int) or n_hashed < 0 or (
                hashed is None and n_hashed):
            raise ValueError(f"categorical map: n_hashed must be a non-negative integer (0 before the map is "
                             f"fixed), got {n_hashed!r}")
        m.n_hashed = n_hashed
        return m


__all__ = ["CategoryMap", "MAX_LEVELS", "bucket", "check_categorical", "key_hash", "signed_bucket"]
