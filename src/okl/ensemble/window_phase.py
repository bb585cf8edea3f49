"""``auto`` inside its width window (the first rows, before the pool exists): the window member's
kernel smoother on the rows buffered so far, dense or sparse (:class:`WindowPhase`, a mixin of
:class:`okl.ensemble.auto.Auto`)."""

from __future__ import annotations

import numpy as np

from okl._sparse import SparseRows
from okl.kernels import scale_sigma
from okl.learners.window import WIDTH_FACTOR as WINDOW_WIDTH
from okl.runtime.events import event_state
from okl.scaling import RULE_CODES, scale_row, scale_rows, window_scale


class WindowPhase:
    """:meth:`_window_estimate`: auto's prediction inside its width window."""

    def _window_estimate(self, x):
        """Inside the width window (the first rows, before the pool exists), the window member's
        rule on the rows buffered so far: the kernel smoother over them (the weights of
        :func:`okl.components.maps.window.window_decision`), under the input map and width that the first
        m rows give (:func:`okl.scaling.window_scale`, :func:`okl.kernels.scale_sigma` x 1/4; m the
        largest power of two at most the n rows buffered: the map is refitted as the rows double,
        as the pool fixes it from the whole window at 50). Only rows before x and their labels (or
        residuals) are used. Why: the running label mean predicts these rows at the majority rate,
        which on a short stream is a visible share of its mistakes (River's Phishing, 1,250 rows:
        the first 50 at 50 % against SRP(10)'s 82 %). Cost O(n d) a row for n <= 50 buffered rows
        (in NumPy: a compiled version cost a cold start seconds of compiling for 50 rounds).
        None with a kernel given (no width to choose), fewer than two rows, or for a one-member
        pool standing in for a single learner (``_raw_member``: that learner's running mean)."""
        n = self.n_seen_
        if n < 2 or not self.inputs.chooses_width(self) or self._raw_member:
            return None
        x = np.asarray(x, dtype=float)
        ev = event_state(self)
        key = (n, self.n_outputs_, x.tobytes())
        cache = ev.window if ev.window is not None and ev.window["rows"] is self.warmup_X_ else None
        if cache is not None and cache["key"] == key:  # (learn_one asks again for predict_one's row)
            return cache["value"].copy() if self.n_outputs_ else cache["value"]
        m = 1 << (n.bit_length() - 1)
        if self._sparse_window:
            value = self._sparse_window_estimate(x, n, m, ev, cache)
            ev.window["key"], ev.window["value"] = key, value
            return value.copy() if self.n_outputs_ else value
        if cache is None or cache["m"] != m:  # the map and width of the first m rows
            rule = self.inputs.scale_rule(self)
            center, spread = (window_scale(self.warmup_X_[:m], rule, sparse=self._sparse_window) if rule is not None
                              else (None, None))
            cache = ev.window = {"rows": self.warmup_X_, "m": m, "rule": rule, "center": center, "spread": spread,
                                 "S": np.empty_like(self.warmup_X_), "done": 0, "sigma": None, "key": None}
        S = cache["S"]
        done = cache["done"]
        if done < n:  # the rows buffered since, mapped
            S[done:n] = self._window_map(self.warmup_X_[done:n], cache)
            cache["done"] = n
        if cache["sigma"] is None:
            cache["sigma"] = scale_sigma(S[:m]) * WINDOW_WIDTH
        xs = self._window_map(x[None, :], cache)[0]
        d2 = ((S[:n] - xs) ** 2).sum(axis=1)
        sigma = cache["sigma"]
        w = np.exp(-(d2 - d2.min()) / (2.0 * sigma * sigma))  # (relative to the nearest row: sum >= 1)
        labels = self.warmup_y_[:n]
        if self.n_outputs_:  # the K outputs' votes (2 S_k - S) / S, as window_decision's
            mass = np.bincount(labels.astype(np.int64), weights=w, minlength=self.n_outputs_)[:self.n_outputs_]
            value = (2.0 * mass - w.sum()) / w.sum()
        else:
            value = float(w @ labels / w.sum())
        cache["key"], cache["value"] = key, value
        return value.copy() if self.n_outputs_ else value

    def _sparse_window_estimate(self, x, n, m, ev, cache):
        """:meth:`_window_estimate` when the window came as sparse rows: the same smoother and rule
        on the buffered rows' non-zeros (mapped with centre 0), each squared distance from the
        norms, ||s_i||^2 + ||x||^2 - 2 <s_i, x> (clipped at 0), and the width from the columns the
        first m rows use (:meth:`okl._sparse.SparseRows.compact`): O(n nnz) a row and no n x d work
        space, which a window of 2^20 hashed columns could not hold."""
        if cache is None:
            cache = ev.window = {"rows": self.warmup_X_, "m": 0, "raw": [], "key": None}
        raw = cache["raw"]
        known = self._window_nonzero or []
        while len(raw) < n:  # the rows buffered since: their non-zero columns and values
            row = self.warmup_X_[len(raw)]
            cols = known[len(raw)] if len(raw) < len(known) and known[len(raw)] is not None else np.flatnonzero(row)
            raw.append((cols, row[cols]))
        if cache["m"] != m:  # the map and width of the first m rows
            rule = self.inputs.scale_rule(self)
            spread = None
            if rule is not None:  # (window_scale(sparse=True) of the first m rows: max |x_j|)
                spread = np.zeros(x.shape[0])
                for cols, vals in raw[:m]:
                    spread[cols] = np.maximum(spread[cols], np.abs(vals))
            cache.update(m=m, rule=rule, spread=spread, S=[], sigma=None)
        S = cache["S"]
        while len(S) < n:  # (columns, mapped values, squared norm)
            S.append(self._sparse_window_row(*raw[len(S)], cache))
        if cache["sigma"] is None:
            first = SparseRows(np.cumsum([0] + [len(c) for c, _, _ in S[:m]]).astype(np.int64),
                               np.concatenate([c for c, _, _ in S[:m]]).astype(np.int64),
                               np.concatenate([v for _, v, _ in S[:m]]), x.shape[0])
            cache["sigma"] = scale_sigma(first.compact()) * WINDOW_WIDTH
        cols = self._nonzero if self._nonzero is not None else np.flatnonzero(x)
        cols, vals, norm = self._sparse_window_row(cols, x[cols], cache)
        d2 = np.empty(n)
        for i, (c, v, s) in enumerate(S[:n]):
            _, a, b = np.intersect1d(c, cols, assume_unique=True, return_indices=True)
            d2[i] = max(s + norm - 2.0 * float(v[a] @ vals[b]), 0.0)
        sigma = cache["sigma"]
        w = np.exp(-(d2 - d2.min()) / (2.0 * sigma * sigma))  # (relative to the nearest row: sum >= 1)
        labels = self.warmup_y_[:n]
        if self.n_outputs_:
            mass = np.bincount(labels.astype(np.int64), weights=w, minlength=self.n_outputs_)[:self.n_outputs_]
            return (2.0 * mass - w.sum()) / w.sum()
        return float(w @ labels / w.sum())

    @staticmethod
    def _sparse_window_row(cols, vals, cache):
        """(columns, values under the window's provisional map, squared norm) of a row's non-zeros."""
        if cache["rule"] is not None:
            out = np.empty_like(vals)
            scale_row(vals, np.zeros_like(vals), cache["spread"][cols].copy(), False, RULE_CODES[cache["rule"]], out)
            vals = out
        return cols, vals, float(vals @ vals)

    @staticmethod
    def _window_map(rows, cache):
        """Rows under the window phase's provisional map (a pending spread stays pending)."""
        if cache["rule"] is None:
            return rows
        out = np.empty_like(rows)
        scale_rows(rows, cache["center"], cache["spread"], False, np.inf, RULE_CODES[cache["rule"]], out)
        return out
