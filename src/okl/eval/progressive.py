"""Progressive (test-then-train) evaluation over random permutations (DESIGN.md "Evaluation protocol").

Run ``seed`` presents the rows in the order ``numpy.random.default_rng(seed).permutation(n)``;
each run builds a fresh learner with ``random_state=seed`` and, for learners whose defaults
depend on the stream length, ``horizon=T``. Every round is counted; the authors' count (first
stage skipped, still divided by T) is kept beside it where the learner has a first stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from okl.data.adversarial import parse_stream
from okl.eval.progress import Progress
from okl.runtime.base import Trace, make, select_params
from okl.runtime.multiclass import MultiClass


def learner_params(name: str, n_rounds: int | None, seed: int, budget: int | None = None, kernel=None,
                   loss: str | None = None, extra: dict[str, Any] | None = None,
                   sigma: float | None = None) -> dict[str, Any]:
    """The hyperparameters one run passes to learner ``name`` (:func:`okl.runtime.base.select_params`):
    only those it accepts; ``n_rounds`` None passes no horizon (a live stream's length is unknown)."""
    return select_params(name, extra, random_state=seed, horizon=n_rounds, budget=budget, kernel=kernel,
                         sigma=sigma, loss=loss)


@dataclass
class RunSummary:
    """Mean and spread of one learner's runs."""

    learner: str
    task: str
    traces: list[Trace] = field(repr=False)

    def _values(self, attr):
        return np.array([getattr(t, attr) for t in self.traces], dtype=float)

    @property
    def metric(self) -> np.ndarray:
        return self._values("metric")

    @property
    def authors(self) -> np.ndarray | None:
        vals = [t.authors_mistake_rate for t in self.traces]
        return None if any(v is None for v in vals) else np.array(vals)

    @property
    def seconds(self) -> np.ndarray:
        return self._values("seconds")

    def diagnostics(self) -> dict[str, float]:
        keys = {k for t in self.traces for k, v in t.diagnostics.items() if isinstance(v, (int, float))}
        return {k: float(np.mean([t.diagnostics.get(k, np.nan) for t in self.traces])) for k in sorted(keys)}


def evaluate(name: str, X: np.ndarray, y: np.ndarray, runs: int = 20, seeds=None,
             budget: int | None = None, kernel=None, loss: str | None = None,
             params: dict[str, Any] | None = None, progress: Progress | None = None,
             max_rows: int | None = None, stream=None, sigma: float | None = None,
             horizon: bool = True, classes: int | None = None) -> RunSummary:
    """Run learner ``name`` once per seed (default 0..runs-1) on the stream of (X, y) that
    ``stream`` builds for that seed (default: the seed's permutation; see
    :func:`okl.data.adversarial.parse_stream`), cut to ``max_rows`` rows if given.

    Settings left None are the learner's own defaults (no kernel and no sigma: the learner
    chooses its width from the stream). ``horizon=False`` does not tell the learner the stream's
    length (``okl run``, as for a user's live stream); the paper tables pass it. ``classes=K``: y
    holds class indices 0..K-1, learned by :class:`okl.runtime.multiclass.MultiClass` (one head
    of learner ``name`` per class)."""
    seeds = list(range(runs)) if seeds is None else list(seeds)
    transform = parse_stream(stream)
    if classes is None:
        warm_up(name, X, y, budget, kernel, loss, params, sigma)
    traces = []
    task = None
    for seed in seeds:
        Xp, yp = transform(X, y, seed)
        if max_rows is not None:
            Xp, yp = Xp[:max_rows], yp[:max_rows]
        kw = learner_params(name, len(yp) if horizon else None, seed, budget, kernel, loss, params, sigma)
        if classes is None:
            learner = make(name, **kw)
        else:
            rs = kw.pop("random_state", None)
            learner = MultiClass(name, kw, classes=list(range(classes)), random_state=rs)
        task = learner.task
        if progress is not None and progress.unit == "rows":
            traces.append(run_in_pieces(learner, Xp, yp, progress.advance, on_piece=progress.add_trace))
        else:
            traces.append(learner.run(Xp, yp))
            if progress is not None:
                progress.advance()
    return RunSummary(name, task or "classification", traces)


def baseline_curves(ys: list[np.ndarray], task: str, classes: int | None = None):
    """The baseline a learner must beat, on the runs' own label streams ``ys``, as (label, curve,
    value), each a mean over the runs. Classification: the curve is the running majority vote's
    cumulative mistake rate (it predicts the class seen most so far, ties -> +1; the dashed line of
    ``okl run --plot`` and ``okl report``'s curves), the value the minority class's share (always
    predicting the majority class). K classes (y the class indices): the class seen most so far
    (ties -> the first), and 100 minus the largest class's share. Regression: the running-mean
    predictor's cumulative squared loss, and its final value."""
    curves, values = [], []
    for yp in ys:
        yp = np.asarray(yp, dtype=float)
        t = np.arange(1, len(yp) + 1)
        if classes is not None:
            onehot = np.eye(classes)[yp.astype(int)]
            guess = np.argmax(np.cumsum(onehot, axis=0) - onehot, axis=1)  # counts before each row
            curves.append(100.0 * np.cumsum(guess != yp) / t)
            values.append(majority_rate(yp, classes))
        elif task == "classification":
            pos = np.concatenate([[0.0], np.cumsum(yp > 0)[:-1]])
            guess = np.where(pos >= (t - 1) - pos, 1.0, -1.0)
            curves.append(100.0 * np.cumsum(guess != yp) / t)
            values.append(majority_rate(yp))
        else:
            curves.append(np.cumsum((running_means(yp) - yp) ** 2) / t)
            values.append(curves[-1][-1])
    label = "running mean" if task == "regression" else "majority so far"
    return label, np.mean(curves, axis=0), float(np.mean(values))


#: rows per piece of :func:`run_in_pieces` (a progress update every few seconds at worst)
PROGRESS_ROWS = 20_000


def run_in_pieces(learner, X: np.ndarray, y: np.ndarray, on_rows, rows: int = PROGRESS_ROWS, on_piece=None) -> Trace:
    """``learner.run(X, y)`` in pieces of ``rows`` rows, calling ``on_rows(n)`` after each, so a
    long run shows its progress (rounds done, rate, ETA). A learner continues from its state, so
    the decisions are those of one ``run`` over all rows (the tests hold every learner to
    ``run`` on halves = ``run`` on the whole); the trace counts rounds as that ``run`` would.
    ``on_piece(trace)``, if given, gets each piece's trace first (the running loss of a progress line)."""
    start = learner.n_seen_
    decisions, seconds = [], 0.0
    for s in range(0, max(len(y), 1), rows):
        t = learner.run(X[s:s + rows], y[s:s + rows])
        decisions.append(t.decisions)
        seconds += t.seconds
        if on_piece is not None:
            on_piece(t)
        on_rows(len(t.decisions))
    first = learner._first_counted_round() if learner.started_ else None
    counted_from = None if first is None else max(0, first - start)
    return Trace(np.concatenate(decisions), np.asarray(y, dtype=float), seconds, learner.task, counted_from,
                 learner.all_diagnostics())


_WARM: set[tuple] = set()


def warm_up(name: str, X, y, budget=None, kernel=None, loss=None, params=None, sigma=None) -> None:
    """Run the learner once, untimed, on a short prefix with a small budget, so that compiling its
    Numba loops (first call in a process) is not counted in the first run's time."""
    key = (name, loss, type(kernel).__name__)
    if key in _WARM:
        return
    n = min(len(y), 300)
    small = None if budget is None else min(budget, 10)
    for b in (small, budget):
        try:
            make(name, **learner_params(name, n, 0, b, kernel, loss, params, sigma)).run(X[:n], y[:n])
            break
        except ValueError:
            continue
        except FloatingPointError:  # diverged on the prefix: compiled all the same; the run reports it
            break
    _WARM.add(key)


def majority_rate(y: np.ndarray, classes: int | None = None) -> float:
    """Mistake rate (%) of always predicting the most frequent label (labels -1/+1, or with
    ``classes=K`` class indices 0..K-1)."""
    if classes is not None:
        counts = np.bincount(np.asarray(y, dtype=int), minlength=classes)
        return 100.0 * (1.0 - counts.max() / max(len(y), 1))
    pos = float(np.mean(y == 1.0))
    return 100.0 * min(pos, 1.0 - pos)


def running_means(y: np.ndarray) -> np.ndarray:
    """The running-mean predictor's guesses: the mean of the targets before each round (0 first)."""
    y = np.asarray(y, float)
    return np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))]) if len(y) else np.zeros(0)


def mean_predictor_loss(y: np.ndarray) -> float:
    """Mean squared loss of predicting the running mean of the targets seen so far (0 first)."""
    y = np.asarray(y, float)
    return float(np.mean((y - running_means(y)) ** 2))
