"""What the River adapters (:mod:`okl.river`) share: the base class of OKLRiverClassifier and
OKLRiverRegressor, which maps River's dicts and DataFrames onto an okl learner's input vectors
(first-seen columns, the growing input space inside the width window, hashed columns for later
keys, categorical values one-hot; or, with ``n_features=0``, every key hashed with a sign into
n_hashed columns, a row a 1 x n_hashed CSR row) and learns and predicts with them; the rules are in
:mod:`okl.river`'s docstring."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from okl._adapters import AdapterSettings, build_core, multiclass_core
from okl.categories import bucket, signed_bucket
from okl.kernels import WIDTH_WINDOW
from okl.runtime.base import Learner, learner_class
from okl.runtime.multiclass import MultiClass


def _sort_keys(keys: list) -> list:
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


#: the hashed column (0..n-1) of a key: the core's categorical map's rule (:func:`okl.categories.bucket`)
_bucket = bucket


def _count(value, what: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0):
        raise ValueError(f"{what} must be a non-negative integer or None, got {value!r}")
    return None if value is None else int(value)


def _categorical_keys(categorical) -> frozenset:
    """The keys named by ``categorical`` (None: none, strings are categorical anyway)."""
    if categorical is None:
        return frozenset()
    if isinstance(categorical, (str, bytes)) or not hasattr(categorical, "__iter__"):
        raise ValueError(f"categorical must be None or a list of feature keys, got {categorical!r} "
                         f"(one key: categorical=[{categorical!r}])")
    keys = list(categorical)
    for k in keys:
        try:
            hash(k)
        except TypeError:
            raise ValueError(f"categorical: a feature key must be hashable, got {k!r}") from None
    return frozenset(keys)


class _OKLRiverEstimator(AdapterSettings):
    _task = "classification"

    def __init__(self, learner: str = "auto", budget: int | None = 100, sigma: float | None = None,
                 loss: str | None = None, n_features: int | None = None, n_hashed: int | None = None,
                 params: dict | None = None, seed: int | None = None, categorical=None):
        super().__init__(learner, budget, sigma, loss, params, categorical)
        self.n_features = n_features
        self.n_hashed = n_hashed
        self.seed = seed
        self._categorical = _categorical_keys(categorical)
        self.columns: dict[Any, int] = {}
        self.model: Learner | None = None
        self.n_ignored_values = 0
        self.n_hashed_values = 0
        self.n_hash_collisions = 0  # values hashed into a column that another key took first
        self._hashed_keys: dict[int, Any] = {}  # hashed column -> the first key hashed there
        self._dedicated: int | None = None  # dedicated columns once the width is fixed
        self._hashed = 0  # hashed columns once the width is fixed
        self._window: list[tuple[dict, float]] = []  # events learned while the width may grow
        self._grew = False  # a key appeared after the first event, inside the window
        self._multi = False  # the classifier switched to its classes' heads (okl.runtime.multiclass)
        self._last_row: tuple | None = None  # (a copy of x, its vector) of the last conversion
        self._hash_cache: dict = {}  # open vocabulary: key -> (column, sign), for the keys met recently
        learner_class(learner)  # unknown names fail here, listing the registered ones
        _count(n_hashed, "n_hashed")
        #: the open-vocabulary mode: every key hashed, with a sign, into n_hashed columns
        self._open = _count(n_features, "n_features") == 0
        if self._open and not n_hashed:
            raise ValueError(f"n_features=0 hashes every key into n_hashed columns (the open-vocabulary mode); give "
                             f"n_hashed=k >= 1 (e.g. 2**20), got n_hashed={n_hashed!r}; or n_features >= 1 or None")

    # ---- building -----------------------------------------------------------------------

    def _build(self) -> Learner | MultiClass:
        loss = self.loss if self.loss is not None else (None if self._task == "classification" else "squared")
        core = build_core(self, self._task, loss, random_state=self.seed)
        return multiclass_core(core, self.seed) if self._multi else core

    @property
    def dim(self) -> int | None:
        """Number of columns (None before the first learned example when not declared)."""
        if self.model is not None:
            return self.model.dim_
        return self.n_hashed if self._open else self.n_features

    @staticmethod
    def _number(key, value) -> float:
        if isinstance(value, (bool, np.bool_)):
            return float(value)
        if not isinstance(value, numbers.Real):
            raise ValueError(f"feature {key!r} has a non-numeric value {value!r}; if {key!r} holds categories, "
                             f"declare it: categorical=[{key!r}]")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"feature {key!r} has a non-finite value {value!r}")
        return value

    def _values(self, x: dict) -> dict:
        """x as {feature: float}: numbers as they are, a categorical value v of key k as the
        feature (k, v) = 1.0 (:mod:`okl.river`'s docstring)."""
        cats = self._categorical
        out = {}
        for key, value in x.items():
            if value is None:  # as if the key were absent (okl._tabular); a NaN value is refused below
                continue
            if isinstance(value, str) or key in cats:
                try:
                    hash(value)
                except TypeError:
                    raise ValueError(f"categorical feature {key!r} has an unhashable value {value!r}") from None
                if isinstance(value, float) and not math.isfinite(value):
                    raise ValueError(f"categorical feature {key!r} has a non-finite value {value!r}")
                out[(key, value)] = 1.0
            else:
                out[key] = self._number(key, value)
        return out

    def _column(self, key, columns: dict, new: dict | None):
        """(column, kind) of a key: kind 0 dedicated, 1 hashed, 2 none; ``new`` (learning only)
        receives the new dedicated columns."""
        col = columns.get(key)
        if col is None and new is not None:
            col = new.get(key)
        if col is not None:
            return col, 0
        if self._dedicated is not None and self._hashed:
            return self._dedicated + _bucket(key, self._hashed), 1
        return None, 2

    def _vector(self, vals: dict, dim: int, columns: dict, new: dict | None) -> tuple[np.ndarray, int, int]:
        """(vector, hashed values, dropped values); ``new``: assign free dedicated columns to
        unseen keys (in sorted order) into this dict."""
        if new is not None:
            free = (self._dedicated if self._dedicated is not None else math.inf) - len(columns)
            unseen = [k for k in vals if k not in columns]
            for k in _sort_keys(unseen)[:max(0, int(min(free, len(unseen))))]:
                new[k] = len(columns) + len(new)
        v = np.zeros(dim)
        hashed = dropped = 0
        for key, value in vals.items():
            col, kind = self._column(key, columns, new)
            if kind == 2:
                dropped += value != 0.0
            elif kind == 1:
                v[col] += value
                hashed += value != 0.0
            elif col < dim:
                v[col] = value
        return v, hashed, dropped

    def _known_row(self, x: dict, dim: int) -> np.ndarray | None:
        """x's vector on the common path, in one pass: every key has a dedicated column and every
        value is a finite float or an int; None otherwise (the full conversion then takes x, and
        hashes, drops or refuses what it must)."""
        columns = self.columns
        v = np.zeros(dim)
        for key, value in x.items():
            col = columns.get(key)
            kind = type(value)
            if col is None or col >= dim or not (
                    (kind is float or kind is np.float64) and value - value == 0.0 or kind is int):
                return None
            v[col] = value
        return v

    def _reused_row(self, x: dict, dim: int) -> np.ndarray | None:
        """The vector of the last :meth:`_row` when x equals that row's dict and the width is the
        same (River calls predict_one(x) then learn_one(x): one conversion an event), else None.
        A copy of x is compared, so a dict changed in place in between is converted again; equal
        values give equal vectors (1 == 1.0 == True all map to 1.0)."""
        last = self._last_row
        if last is not None and last[1].shape[0] == dim and last[0] == x:
            return last[1]
        return None

    def _row(self, x: dict) -> np.ndarray | None:
        """x as the learner's input vector (None before the first learned example); in the open
        vocabulary mode a 1 x n_hashed CSR row (:meth:`_hashed_row`)."""
        if self._open:
            if self.model is None or self.model.dim_ is None:
                self._values(x)  # (refuses what learn_one would refuse)
                return None
            last = self._last_row
            if last is not None and last[0] == x:
                return last[1]
            row = self._hashed_row(self._values(x))[0]
            self._last_row = (dict(x), row)
            return row
        if self.model is not None and self.model.dim_ is not None:
            v = self._known_row(x, self.model.dim_)
            if v is not None:
                self._last_row = (dict(x), v)
                return v
        vals = self._values(x)
        if self.model is None or self.model.dim_ is None:
            return None
        return self._vector(vals, self.model.dim_, self.columns, None)[0]

    def _decision(self, x: dict) -> float:
        v = self._row(x)
        return 0.0 if v is None else self.model.predict_one(v)

    def _fix_width(self, columns: dict) -> None:
        self._dedicated = len(columns) if self.n_features is None else self.n_features
        self._hashed = self.n_hashed if self.n_hashed is not None else (
            len(columns) if self.n_features is None and self._grew else 0)

    def _learn(self, x: dict, target: float) -> None:
        if self._open:
            self._learn_hashed(x, target)
            return
        if self._dedicated is not None and self.model is not None:
            width = self._dedicated + self._hashed
            v = self._reused_row(x, width)
            if v is None:
                v = self._known_row(x, width)
            self._last_row = None  # (learning may change the columns)
            if v is not None:  # (no new column, nothing hashed or dropped)
                self.model.learn_one(v, target)  # validates before changing state
                return
        vals = self._values(x)
        if self._dedicated is None and self.n_features is not None:  # declared: fixed from the start
            self._fix_width({})
        if self._dedicated is not None:
            model = self.model if self.model is not None else self._build()
            new: dict = {}
            v, hashed, dropped = self._vector(vals, self._dedicated + self._hashed, self.columns, new)
            model.learn_one(v, target)  # validates before changing state
            self._commit(model, new, hashed, dropped, vals)
            return
        self._learn_growing(vals, target)

    # ---- the open-vocabulary mode (n_features=0, n_hashed=k) ---------------------------------

    def _signed_column(self, key) -> tuple[int, int]:
        """(column, sign) of a key in the open-vocabulary mode (:func:`okl.categories.signed_bucket`),
        remembered for up to 2^16 keys (then the memory starts again: a vocabulary may not end)."""
        cache = self._hash_cache
        hit = cache.get(key)
        if hit is None:
            if len(cache) >= 1 << 16:
                cache.clear()
            hit = cache[key] = signed_bucket(key, self.n_hashed)
        return hit

    def _hashed_entries(self, vals: dict) -> list[tuple[Any, int, float]]:
        """(key, column, signed value) of the non-zero values of x in the open-vocabulary mode."""
        column = self._signed_column
        out = []
        for key, value in vals.items():
            if value != 0.0:
                col, sign = column(key)
                out.append((key, col, sign * value))
        return out

    def _hashed_row(self, vals: dict, entries: list | None = None):
        """(1 x n_hashed ``scipy.sparse.csr_matrix`` row, entries): value v of key k added at
        column c as s v, (c, s) = :func:`okl.categories.signed_bucket` (k, n_hashed) (signed feature
        hashing, Weinberger et al., ICML 2009: colliding keys cancel in expectation); keys of one
        column add up, the indices sorted. Built from the (column, value) pairs: O(len(x) log len(x)),
        never a dense vector of length n_hashed."""
        import scipy.sparse as sp

        if entries is None:
            entries = self._hashed_entries(vals)
        row: dict[int, float] = {}
        for _, col, value in entries:
            row[col] = row.get(col, 0.0) + value
        cols = sorted(row)
        data = np.array([row[c] for c in cols], dtype=np.float64)
        indices = np.array(cols, dtype=np.int32 if self.n_hashed <= 1 << 31 else np.int64)
        out = sp.csr_matrix((data, indices, np.array([0, len(cols)], dtype=indices.dtype)),
                            shape=(1, self.n_hashed))
        return out, entries

    def _learn_hashed(self, x: dict, target: float) -> None:
        """One event in the open-vocabulary mode: the width is n_hashed from the first event (no
        window growth, no dedicated column)."""
        last = self._last_row
        self._last_row = None
        vals = self._values(x)
        if self._dedicated is None:
            self._fix_width({})  # (0 dedicated, n_hashed hashed)
        model = self.model if self.model is not None else self._build()
        entries = self._hashed_entries(vals)
        row = last[1] if last is not None and last[0] == x else self._hashed_row(vals, entries)[0]
        model.learn_one(row, target)  # validates before changing state
        self.model = model
        self.n_hashed_values += len(entries)
        self._count_collisions((key, col) for key, col, _ in entries)

    def _count_collisions(self, key_columns) -> None:
        """Open-vocabulary mode: a value of a key hashed into a column that another key took first
        is a collision, counted in ``n_hash_collisions`` (no warning: with every key hashed, some
        collisions are the expected cost; the signs make them cancel in expectation)."""
        owners = self._hashed_keys
        for key, col in key_columns:
            first = owners.setdefault(col, key)
            if not (first is key or first == key):
                self.n_hash_collisions += 1

    def _hashed_block(self, keys: list, M: np.ndarray):
        """The rows of a frame (columns ``keys``) as an n x n_hashed CSR matrix: M times the keys'
        signed hashing matrix, O(non-zeros of M)."""
        import scipy.sparse as sp

        cols, signs = zip(*[self._signed_column(k) for k in keys]) if keys else ((), ())
        H = sp.csr_matrix((np.array(signs, dtype=np.float64), np.array(cols, dtype=np.int64),
                           np.arange(len(keys) + 1)), shape=(len(keys), self.n_hashed))
        out = sp.csr_matrix(sp.csr_matrix(M) @ H)
        out.sort_indices()
        return out

    def _learn_growing(self, vals: dict, target: float) -> None:
        """One event while the width may still grow (n_features None, inside the window)."""
        columns = dict(self.columns)
        unseen = [k for k in vals if k not in columns]
        for k in _sort_keys(unseen):
            columns[k] = len(columns)
        if not columns:
            raise ValueError("the first example has no features; declare n_features")
        grew = self._grew or bool(unseen and self.model is not None)
        model = self.model
        fresh = model is None
        if fresh:
            model = self._build()
        # this event fixes the width when the learner starts with it
        window = model._uses_window() if isinstance(model, MultiClass) else model.inputs.uses_window(model)
        fixes = (not window) if fresh else (model.n_seen_ >= WIDTH_WINDOW - 1)
        saved = (self._grew, self._dedicated, self._hashed)
        dim = len(columns)
        if fixes:
            self._grew = grew
            self._fix_width(columns)
            dim = self._dedicated + self._hashed
        try:
            if not fresh and dim != model.dim_:
                model = self._build()
                for old_vals, old_target in self._window:
                    model.learn_one(self._plain(old_vals, columns, dim), old_target)
            model.learn_one(self._plain(vals, columns, dim), target)  # validates before changing state
        except Exception:
            self._grew, self._dedicated, self._hashed = saved
            raise
        self.model = model
        self.columns = columns
        self._grew = grew
        if fixes:
            self._window = []
        else:
            self._window.append((vals, target))

    @staticmethod
    def _plain(vals: dict, columns: dict, dim: int) -> np.ndarray:
        v = np.zeros(dim)
        for key, value in vals.items():
            v[columns[key]] = value
        return v

    def _commit(self, model: Learner, new: dict, hashed: int, dropped: int, vals) -> None:
        self.model = model
        self.columns.update(new)
        self.n_hashed_values += hashed
        if self._hashed:
            self._note_hashed_keys(vals)
        if dropped:
            if not self.n_ignored_values:
                key = next(k for k in vals if self._column(k, self.columns, None)[1] == 2
                           and (vals[k] is None or vals[k] != 0.0))
                if self._held_strings(key):
                    # (a key seen from the first events with strings, a level each, now holds a number)
                    warnings.warn(f"{type(self).__name__}: feature {key!r} held strings (categories, one "
                                  f"column per level) and now holds the number {vals[key]!r}: a number of a key "
                                  f"that held strings is a new feature the width fixed ({self._dedicated} columns, "
                                  f"{self._hashed} hashed) has no column for, so it is dropped (counted in "
                                  f"n_ignored_values); declare categorical=[{key!r}] to make its numbers levels too",
                                  RuntimeWarning, stacklevel=3)
                else:
                    warnings.warn(f"{type(self).__name__}: feature {key!r} first appeared after the input width "
                                  f"was fixed ({self._dedicated} columns, {self._hashed} hashed) and is dropped "
                                  "(counted in n_ignored_values); pass n_hashed=k to hash later keys into k "
                                  "columns, or n_features to leave room", RuntimeWarning, stacklevel=3)
            self.n_ignored_values += dropped

    def _held_strings(self, key) -> bool:
        """Whether ``key`` had string values (a column per level (key, value)) before: a number of
        it now is a new feature although the key is not new (said so in the warnings)."""
        return any(type(k) is tuple and len(k) == 2 and k[0] == key for k in self.columns)

    def _note_hashed_keys(self, vals) -> None:
        """Record which key took each hashed column first (memory: one key per hashed column); a
        value of another key hashed into a taken column is a collision (their values add up
        there): counted in ``n_hash_collisions``, and the first one raises a ``RuntimeWarning``
        naming both keys and what keeps them apart."""
        owners = self._hashed_keys
        for key, value in vals.items():
            col, kind = self._column(key, self.columns, None)
            if kind != 1:
                continue
            first = owners.setdefault(col, key)
            if first is key or first == key:
                continue
            if not self.n_hash_collisions:
                late = [k for k in (first, key) if self._held_strings(k)]
                why = (f" ({', '.join(map(repr, late))} held strings until then: its numbers are a new feature)"
                       if late else "")
                warnings.warn(f"{type(self).__name__}: features {first!r} and {key!r} have no column of their own "
                              f"after the input width was fixed{why} and share hashed column {col - self._dedicated} of "
                              f"{self._hashed}: their values add up there (counted in n_hash_collisions); "
                              "pass n_hashed=k for more hashed columns, or n_features to give later keys "
                              "their own", RuntimeWarning, stacklevel=4)
            self.n_hash_collisions += 1

    # ---- mini-batches ---------------------------------------------------------------------

    def _frame_values(self, X) -> tuple[list, np.ndarray]:
        keys = list(X.columns)
        if len(set(keys)) != len(keys):
            twice = next(k for i, k in enumerate(keys) if k in keys[:i])
            raise ValueError(f"the DataFrame has {keys.count(twice)} columns named {twice!r}: each column is one "
                             "feature key, so one would silently replace the other; rename or drop them")
        try:
            M = X.to_numpy(dtype=np.float64, copy=True) if keys else np.zeros((len(X), 0))
        except (TypeError, ValueError):
            for k in keys:
                for value in X[k]:
                    self._number(k, value)
            raise
        M[np.isnan(M)] = 0.0  # a missing value: an absent key's 0 (okl._tabular)
        if M.size and not np.isfinite(M).all():
            r, c = np.argwhere(~np.isfinite(M))[0]
            raise ValueError(f"feature {keys[c]!r} has a non-finite value {M[r, c]!r} (row {r})")
        return keys, M

    def _block(self, keys: list, M: np.ndarray, columns: dict, new: dict | None) -> tuple[np.ndarray, int, int]:
        """The rows of a frame as vectors (as :meth:`_vector` per row)."""
        if new is not None:
            free = self._dedicated - len(columns)
            unseen = [k for k in keys if k not in columns]
            for k in _sort_keys(unseen)[:max(0, min(free, len(unseen)))]:
                new[k] = len(columns) + len(new)
        dim = self.model.dim_ if self.model is not None and self.model.dim_ is not None else self._dedicated + self._hashed
        V = np.zeros((M.shape[0], dim))
        hashed = dropped = 0
        for j, key in enumerate(keys):
            col, kind = self._column(key, columns, new)
            if kind == 2:
                dropped += int(np.count_nonzero(M[:, j]))
            elif kind == 1:
                V[:, col] += M[:, j]
                hashed += int(np.count_nonzero(M[:, j]))
            elif col < dim:
                V[:, col] = M[:, j]
        return V, hashed, dropped

    def _has_categories(self, X) -> bool:
        """Whether a frame holds categorical columns (named in ``categorical``, or not numeric)."""
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        return any(k in self._categorical for k in X.columns) or any(
            not (is_numeric_dtype(t) or is_bool_dtype(t)) for t in X.dtypes)

    def _learn_frame(self, X, targets: list) -> None:
        if self._has_categories(X):  # one event at a time: the levels become columns as in learn_one
            rows = X.to_dict(orient="records")
            if len(targets) != len(rows):
                raise ValueError(f"y has {len(targets)} entries but X has {len(rows)} rows")
            for x, target in zip(rows, targets):
                self._learn(x, target)
            return
        keys, M = self._frame_values(X)
        if len(targets) != M.shape[0]:
            raise ValueError(f"y has {len(targets)} entries but X has {M.shape[0]} rows")
        i = 0
        while i < M.shape[0] and self._dedicated is None:  # the width may grow: one event at a time
            self._learn({k: M[i, j] for j, k in enumerate(keys)}, targets[i])
            i += 1
        if i == M.shape[0]:
            return
        model = self.model if self.model is not None else self._build()
        if self._open:
            V = self._hashed_block(keys, M[i:])
            model.learn_many(V, list(targets[i:]) if self._multi else np.asarray(targets[i:], dtype=np.float64))
            self.model = model
            self.n_hashed_values += int(np.count_nonzero(M[i:]))
            self._count_collisions((k, self._signed_column(k)[0]) for k in keys)
            return
        new: dict = {}
        V, hashed, dropped = self._block(keys, M[i:], self.columns, new)
        model.learn_many(V, list(targets[i:]) if self._multi else np.asarray(targets[i:], dtype=np.float64))
        self._commit(model, new, hashed, dropped, dict.fromkeys(keys))  # (None: a column's values)

    def _frame_rows(self, X) -> np.ndarray | None:
        """The rows of a frame as the learner's input (None before the first learned example)."""
        if self._has_categories(X):
            rows = [self._row(x) for x in X.to_dict(orient="records")]
            if self.model is None or self.model.dim_ is None:
                return None
            if self._open:
                import scipy.sparse as sp

                return sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, self.n_hashed))
            return np.array(rows).reshape(len(rows), self.model.dim_)
        keys, M = self._frame_values(X)
        if self.model is None or self.model.dim_ is None:
            return None
        if self._open:
            return self._hashed_block(keys, M)
        return self._block(keys, M, self.columns, None)[0]

    def _frame_decisions(self, X) -> np.ndarray:
        V = self._frame_rows(X)
        return np.zeros(len(X)) if V is None else self.model.predict_many(V)

    @classmethod
    def _unit_test_params(cls):
        yield {}
        yield {"learner": "forks", "budget": 20, "params": {"horizon": 500}}
