"""The per-run :class:`Trace` of test-then-train, :func:`mistakes_of` and :class:`NonFiniteError`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class NonFiniteError(FloatingPointError):
    """A learner's decision became NaN or infinite (or its update divided by zero): its step is too
    large, or its regularisation too small, for the stream. The learner that raised it refuses to
    predict, learn or be saved until ``reset_state()``."""


def divergence_message(name: str, round_index: int | None, hint: str, kernel: bool) -> str:
    """The :class:`NonFiniteError` text: the round (None: a round of the block just learned), the
    remedy ``hint`` (the hyperparameter to change and the direction, e.g. "raise regularization"),
    a smaller kernel width for a kernel learner, and what the learner does now."""
    where = "a decision" if round_index is None else f"the decision at round {round_index} (0-based)"
    width = ", or pass a smaller kernel width" if kernel else ""
    return (f"{name}: {where} is not finite; the updates diverged on this stream. To fix it, {hint}{width}. "
            "The learner's state is no longer usable: it refuses to predict, learn or save until reset_state().")


def mistakes_of(decisions: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Boolean mistakes: the prediction is +1 when f >= 0 else -1 (as the authors' code and LSOKL);
    for (n, K) multi-class margins (:mod:`okl.runtime.multiclass`) the class of the largest margin
    against the class indices y (a row whose margins are all -inf, no class seen yet, is a mistake)."""
    if decisions.ndim == 2:
        if decisions.shape[1] == 0:
            return np.ones(decisions.shape[0], dtype=bool)
        best = decisions.max(axis=1)
        return (np.argmax(decisions, axis=1) != y) | ~np.isfinite(best)
    return np.where(decisions >= 0.0, 1.0, -1.0) != y


@dataclass
class Trace:
    """What one test-then-train run produced.

    ``decisions[t]`` is f_t(x_t) before (x_t, y_t) was learned. ``mistake_rate`` (percent) counts
    every round; ``authors_mistake_rate`` is the FORKS code's count (rounds before
    ``counted_from`` are skipped but the division is still by T, ALGORITHMS.md 4 "Evaluation
    quirk"); it is ``None`` for learners without a first stage.
    """

    decisions: np.ndarray
    y: np.ndarray
    seconds: float
    task: str = "classification"
    counted_from: int | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rounds(self) -> int:
        return int(self.decisions.shape[0])

    @property
    def mistakes(self) -> np.ndarray:
        return mistakes_of(self.decisions, self.y)

    @property
    def mistake_rate(self) -> float:
        """Percentage of rounds whose prediction sign(f) (f >= 0 -> +1) differs from y; ``nan`` for
        a run over 0 rows (deliberate: ``run`` on an empty batch is allowed, so that ``run`` on
        two parts equals ``run`` on the whole, and a rate over no rounds is undefined, not 0)."""
        if self.task != "classification":
            raise ValueError("mistake_rate is defined for classification; use mean_squared_loss")
        return 100.0 * float(self.mistakes.mean()) if self.n_rounds else float("nan")

    @property
    def authors_mistake_rate(self) -> float | None:
        if self.task != "classification" or self.counted_from is None:
            return None
        return 100.0 * float(self.mistakes[self.counted_from:].sum()) / max(self.n_rounds, 1)

    @property
    def mean_squared_loss(self) -> float:
        """Average of (f_t(x_t) - y_t)^2 over every round."""
        return float(np.mean((self.decisions - self.y) ** 2)) if self.n_rounds else float("nan")

    @property
    def metric(self) -> float:
        """The task's headline metric: mistake rate (%) or mean squared loss."""
        return self.mistake_rate if self.task == "classification" else self.mean_squared_loss

    def cumulative_mistake_rate(self) -> np.ndarray:
        """Mistake rate (%) after each round, for mistake-rate-vs-rounds curves."""
        return 100.0 * np.cumsum(self.mistakes) / np.arange(1, self.n_rounds + 1)

    def cumulative_metric(self) -> np.ndarray:
        """:attr:`metric` after each round: cumulative mistake rate (%) or mean squared loss."""
        if self.task == "classification":
            return self.cumulative_mistake_rate()
        return np.cumsum((self.decisions - self.y) ** 2) / np.arange(1, self.n_rounds + 1)
