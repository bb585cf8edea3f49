"""The input map of a :class:`okl.runtime.base.Learner` (:class:`InputMap`, its ``inputs`` object):
the width window (the first :data:`~okl.kernels.WIDTH_WINDOW` rows buffered, predicted by the running
label mean or the input map's :meth:`InputMap.window_estimate`, then learned in order once they fixed the map), the
per-feature input scale (:mod:`okl.scaling`: one transform on every path), the Gaussian width chosen
from the window's rows (:func:`okl.kernels.scale_sigma`) and the levels of categorical columns
(:mod:`okl.runtime.categorical`). Its state is the learner's ``started_``, ``warmup_X_``,
``warmup_y_``, ``scale_center_``, ``scale_spread_`` and ``kernel_`` (declared by
:meth:`InputMap.spec`); the object holds nothing."""

from __future__ import annotations

import numpy as np

import okl.calibration as calibration
from okl._sparse import SparseRows, window_buffer
from okl._validation import MAX_ABS_FEATURE, check_random_state, check_vector
from okl.kernels import RBF, WIDTH_WINDOW, scale_sigma
from okl.runtime.events import drop_event_cache
from okl.runtime.state import Arr, StateSpec
from okl.scaling import RULE_CODES, scale_rows, scale_rule, scale_sparse_rows, window_scale
from okl.runtime.hyperparameters import param_names


class InputMap:
    """A learner's input map (``Learner.inputs``, one object per class): what turns the rows given
    into the rows its model sees, and the width window that fixes it (see the module docstring). A
    learner whose input side does more (``auto``: rows wider than its hashing width, the engine's
    compile at its first rows) gives a subclass. Per-round cost: O(d) a row for the scale; the
    window's rows once, at its end."""

    def spec(self, learner) -> StateSpec:
        """The declaration of the input map's state: in the window, the buffered rows and labels
        (the scale not fixed yet); started, the scale (optional when the learner does not scale its
        input) and the buffer (None, or inside :meth:`finish_warmup` the rows being learned)."""
        if not learner.started_:
            return StateSpec(fields={"warmup_X_": Arr((WIDTH_WINDOW, "dim")), "warmup_y_": Arr((WIDTH_WINDOW,)),
                                     "scale_center_": Arr(("dim",), optional=True),
                                     "scale_spread_": Arr(("dim",), optional=True)})
        optional = not self.scales_input(learner)
        return StateSpec(sizes={"_warmup": (0, WIDTH_WINDOW)}, fields={
            "warmup_X_": Arr(("_warmup", "dim"), optional=True), "warmup_y_": Arr(("_warmup",), optional=True),
            "scale_center_": Arr(("dim",), optional=optional),
            "scale_spread_": Arr(("dim",), low=0.0, optional=optional)}, groups=(("scale_center_", "scale_spread_"),))

    def ensure_started(self, learner, dim: int) -> None:
        if learner.dim_ is None:
            learner._rng = np.random.default_rng(check_random_state(getattr(learner, "random_state", None)))
            learner.n_seen_ = 0
            learner.target_sum_ = 0.0
            learner.scale_center_ = learner.scale_spread_ = None
            learner.calibration_ = calibration.new_state(1) if learner.task == "classification" and not learner.n_outputs_ \
                else None
            learner.kernel_ = None if self.chooses_width(learner) else getattr(learner, "kernel", None)
            if self.uses_window(learner):
                learner.started_ = False
                learner.warmup_X_ = window_buffer(WIDTH_WINDOW, int(dim))  # (wide: written pages only)
                learner.warmup_y_ = np.zeros(WIDTH_WINDOW)
            else:
                learner.started_ = True
                learner.warmup_X_ = learner.warmup_y_ = None
                learner._start(int(dim))
            learner.dim_ = int(dim)

    def chooses_width(self, learner) -> bool:
        """True when the learner takes a kernel and none was given: it then fixes a Gaussian width
        from its first :data:`~okl.kernels.WIDTH_WINDOW` rows (see :meth:`finish_warmup`)."""
        return "kernel" in param_names(learner) and getattr(learner, "kernel", None) is None

    def scale_rule(self, learner) -> str | None:
        """The statistic of the per-feature input scale this learner fixes in its first rows
        (``"symlog"``, ``"range"`` or ``"affine"``), or None: the ``scale`` hyperparameter resolved by
        :func:`okl.scaling.scale_rule` (``"auto"``: scaled unless a kernel was given)."""
        return scale_rule(getattr(learner, "scale", None), getattr(learner, "kernel", None) is not None)

    def scales_input(self, learner) -> bool:
        """True when the learner fixes a per-feature input scale in its first rows."""
        return self.scale_rule(learner) is not None

    def uses_window(self, learner) -> bool:
        """Whether the first :data:`~okl.kernels.WIDTH_WINDOW` rows are buffered (predicted by the
        running label mean) to fix the width, the input scale and/or the levels of categorical
        columns before the model starts."""
        return getattr(learner, "categorical", None) is not None or self.chooses_width(learner) \
            or self.scales_input(learner)  # (categorical columns: the window's rows fix the levels)

    def scaled_rows(self, learner, X, commit: bool, spread: np.ndarray | None = None):
        """The rows of a validated block as the model sees them (X itself without a scale);
        ``commit`` stores the spreads that these rows fix in ``spread`` (default: the learner's),
        otherwise nothing changes. Sparse rows (:class:`okl._sparse.SparseRows`) stay sparse under
        a map that keeps zeros zero (centre 0: a window of sparse rows gives it), else become
        dense."""
        if learner.scale_spread_ is None:
            return X
        spread = learner.scale_spread_ if spread is None else spread
        if isinstance(X, SparseRows):
            if not self.zero_centre(learner):  # (a map fixed on dense rows centres: the rows enter dense)
                return self.scaled_rows(learner, X.toarray(), commit, spread)
            values = np.empty_like(X.data)
            done = scale_sparse_rows(X.indptr, X.indices, X.data, spread, commit, MAX_ABS_FEATURE,
                                     RULE_CODES[self.scale_rule(learner)], values)
            if done < X.shape[0]:
                check_vector(X[done], learner.dim_)
            return X.with_data(values)
        out = np.empty_like(X)
        done = scale_rows(X, learner.scale_center_, spread, commit, MAX_ABS_FEATURE,
                          RULE_CODES[self.scale_rule(learner)], out)
        if done < X.shape[0]:
            check_vector(X[done], learner.dim_)  # raises the message naming the value
        return out

    def scaled_row(self, learner, x: np.ndarray, commit: bool) -> np.ndarray:
        """One row as the model sees it (values checked; see :meth:`scaled_rows`)."""
        if learner.scale_spread_ is None:
            return x
        return self.scaled_rows(learner, x[None, :], commit)[0]

    def window_estimate(self, learner, x: np.ndarray):
        """A learner's own decision on x from the rows buffered in the width window (labels, or
        residuals under target centring), or None: then the running mean decides (the default;
        ``auto``'s input map smooths the buffered rows, :class:`okl.ensemble.window_phase.WindowPhase`)."""
        return None

    def warmup_decision(self, learner, x: np.ndarray | None = None) -> float:
        """Decision during the width window on row x: :meth:`window_estimate` when it gives one
        (plus the running target mean under centring), else the running mean of the labels/targets
        seen so far (the majority vote for labels -1/+1; 0, i.e. +1, before any label)."""
        estimate = None if x is None else self.window_estimate(learner, x)
        if estimate is not None:
            return estimate + learner.heads.target_mean(learner) if learner.heads.centers_targets(learner) else estimate
        n = learner.n_seen_
        if learner.n_outputs_:  # K outputs: each class's running mean of its -1/+1 targets
            counts = np.bincount(learner.warmup_y_[:n].astype(np.int64), minlength=learner.n_outputs_)[:learner.n_outputs_]
            return (2.0 * counts - n) / n if n else np.zeros(learner.n_outputs_)
        if learner.heads.centers_targets(learner):
            return learner.heads.target_mean(learner)  # the buffer holds residuals from that mean
        return float(learner.warmup_y_[:n].sum() / n) if n else 0.0

    def finish_warmup(self, learner) -> None:
        """Fix the input scale (:func:`okl.scaling.window_scale`) and the width
        (:func:`okl.kernels.scale_sigma`, on the scaled rows) from the buffered rows, labels
        unused; create the state, and learn the buffered rows in order (their decisions were
        already given by the running mean, so nothing is predicted with a label it has seen)."""
        levels = getattr(learner, "categorical_map_", None)
        if levels is not None:  # (categorical columns: the levels are fixed, the buffered rows widened)
            levels.fix()
            learner._widen(levels.width)
        rows = learner.warmup_X_
        if learner._sparse_window:  # (learned as sparse rows; the width from the columns they use)
            known = learner._window_nonzero
            rows = SparseRows.from_columns(rows, known) if known is not None and len(known) == len(rows) \
                and all(c is not None for c in known) else SparseRows.from_dense(rows)  # (O(nnz) when known)
        if self.scales_input(learner):
            learner.scale_center_, learner.scale_spread_ = window_scale(rows if learner._sparse_window else learner.warmup_X_,
                                                                  self.scale_rule(learner), sparse=learner._sparse_window)
            if learner._sparse_window:  # (centre 0 by construction: no scan of d zeros to find it out)
                learner._zero_centre_of = (learner.scale_center_, True)
            rows = self.scaled_rows(learner, rows, commit=True)
        learner.warmup_X_ = rows.compact() if learner._sparse_window else rows  # (what the width rules read)
        if self.chooses_width(learner):
            learner.kernel_ = RBF(sigma=scale_sigma(learner.warmup_X_) * learner._width_factor)
        learner._start(learner.dim_)
        learner.started_ = True
        seen, learner.n_seen_ = learner.n_seen_, 0
        self.process_rows(learner, rows, learner.warmup_y_)
        learner.n_seen_ = seen
        learner.warmup_X_ = learner.warmup_y_ = None

    def advance(self, learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Test-then-train over validated rows (shared by ``learn_one`` and ``run``)."""
        drop_event_cache(learner)
        n = X.shape[0]
        out = learner.heads.new_decisions(learner, n)
        mu = None
        if learner.heads.centers_targets(learner) and n:
            mu, y, sums = learner.heads.running_target_means(learner, y)
        i = 0
        if not learner.started_:
            if n and learner.n_seen_ == 0:  # (the kind of rows the window comes as fixes its input map)
                learner._sparse_window = isinstance(X, SparseRows) or learner._nonzero is not None
                learner._window_nonzero = []
            while i < n and learner.n_seen_ < WIDTH_WINDOW:
                outer = learner._nonzero
                if isinstance(X, SparseRows):  # (written in place: no dense copy of a wide row)
                    learner._nonzero, values = X.row(i)
                    learner.warmup_X_[learner.n_seen_, learner._nonzero] = values
                    x = learner.warmup_X_[learner.n_seen_]  # (the estimate reads the rows before it only)
                else:
                    x = X[i]
                if learner._window_nonzero is not None and len(learner._window_nonzero) == learner.n_seen_:
                    learner._window_nonzero.append(learner._nonzero)  # (None: not known)
                sparse_row = isinstance(X, SparseRows)
                try:
                    if mu is None:
                        out[i] = self.warmup_decision(learner, x)
                    else:  # (mu[i]: the running target mean, the same float as heads.target_mean())
                        estimate = self.window_estimate(learner, x)
                        out[i] = mu[i] if estimate is None else mu[i] + estimate
                finally:
                    learner._nonzero = outer
                if outer is not None and not sparse_row:  # (a sparse row given per event, made dense:
                    learner.warmup_X_[learner.n_seen_, outer] = x[outer]  # its non-zeros, the buffer's row is 0)
                elif not sparse_row:  # (a sparse row is in place already: no pass over its d columns)
                    learner.warmup_X_[learner.n_seen_] = x
                learner.warmup_y_[learner.n_seen_] = y[i]
                learner.n_seen_ += 1
                if mu is not None:
                    learner.target_sum_ = float(sums[i + 1])
                i += 1
            if learner.n_seen_ == WIDTH_WINDOW:
                self.finish_warmup(learner)
        if i < n:
            try:
                out[i:] = self.process_rows(learner, self.scaled_rows(learner, X[i:], commit=True), y[i:])
            except ZeroDivisionError:  # (a compiled update that divided by zero: a numerical failure)
                learner.events.non_finite(learner, None)
            if mu is not None:
                out[i:] += mu[i:]
                learner.target_sum_ = float(sums[-1])
            first = learner.n_seen_
            learner.n_seen_ += n - i
            learner.events.check_finite(learner, out[i:], first)
        return out

    def process_rows(self, learner, X, y: np.ndarray) -> np.ndarray:
        """:meth:`_process` of mapped rows; sparse rows go to a learner without a sparse path
        (:attr:`accepts_csr`) as dense blocks of bounded size, one after the other (every path
        continues from the state it leaves)."""
        if not isinstance(X, SparseRows) or learner.accepts_csr:
            return learner._process(X, y)
        out = learner.heads.new_decisions(learner, X.shape[0])
        for s, block in X.dense_chunks():
            out[s:s + block.shape[0]] = learner._process(block, y[s:s + block.shape[0]])
        return out

    def kept_nonzero(self, learner, columns: np.ndarray) -> np.ndarray | None:
        """A sparse row's non-zero columns, when the input map keeps its zeros zero (no map yet, or
        centre 0 in every column: ``okl.scaling.window_scale``), else None (it maps them to other
        values: the row is dense to the model)."""
        return columns if self.zero_centre(learner) else None

    def zero_centre(self, learner) -> bool:
        """Whether the input map keeps zeros zero (no map, or centre 0 everywhere), remembered for the
        centre array it was found for (a scan of d values: 2^20 for hashed text)."""
        center = getattr(learner, "scale_center_", None)
        if center is None:
            return True
        seen = getattr(learner, "_zero_centre_of", None)
        if seen is None or seen[0] is not center:
            seen = learner._zero_centre_of = (center, not center.any())
        return seen[1]


#: the input map of every learner that does not give its own
INPUT_MAP = InputMap()
