"""Prediction intervals: :class:`Interval` (lower, center, upper), what a learner with a predictive
variance returns from ``predict_interval_one`` and :class:`okl.river.OKLRiverRegressor` from
``predict_one(x, with_interval=True)``.

River's interval regressors return an object with ``lower``, ``center`` and ``upper``; River 0.26
has no such class of its own to import, so okl defines this small one with the same fields.

>>> from okl.intervals import Interval
>>> iv = Interval.gaussian(1.0, 0.25, 0.95)
>>> round(iv.lower, 3), iv.center, round(iv.upper, 3), round(iv.width, 3)
(0.02, 1.0, 1.98, 1.96)
>>> 1.5 in iv, 2.5 in iv
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from okl._validation import check_real


@dataclass(frozen=True)
class Interval:
    """A prediction interval [lower, upper] around the point prediction ``center``."""

    lower: float
    center: float
    upper: float

    @property
    def width(self) -> float:
        """upper - lower."""
        return self.upper - self.lower

    def __contains__(self, y) -> bool:
        return self.lower <= y <= self.upper

    @classmethod
    def gaussian(cls, mean: float, variance: float, confidence: float = 0.95) -> "Interval":
        """The central ``confidence`` interval of N(mean, variance): mean -/+ z sqrt(variance), z the
        (1 + confidence) / 2 quantile of the standard normal (1.95996 at 0.95); an infinite variance
        gives (-inf, mean, inf)."""
        from statistics import NormalDist  # (here: importing statistics costs importing okl ~14 ms)

        confidence = check_real("confidence", confidence, 0.0, 1.0, low_open=True, high_open=True)
        half = NormalDist().inv_cdf(0.5 + confidence / 2.0) * math.sqrt(variance)
        return cls(float(mean - half), float(mean), float(mean + half))


class ConformalHead:
    """Online conformal calibration of a point predictor's intervals: the one place every okl
    regressor's ``predict_interval_one(x, alpha)`` comes from (:class:`okl.river.OKLRiverRegressor`,
    :class:`okl.timeseries.Forecaster`).

    The conformity score of a learned pair is s_t = |y_t - f_t| / u_t, f_t the prediction made
    before learning y_t and u_t the learner's predictive standard deviation where it has one
    (``predict_mean_var_one``: krls-t), else 1. The interval at level 1 - alpha is
    f -/+ q_t(alpha) u. q is the quantile tracker of conformal PID control (Angelopoulos, Candes &
    Tibshirani, "Conformal PID control for time series prediction", NeurIPS 2023, the "P" term),
    which is adaptive conformal inference (Gibbs & Candes, NeurIPS 2021) on the score's scale:

        q_{t+1} = q_t + eta_t (err_t - alpha),   err_t = 1 if s_t > q_t else 0,
        eta_t = ``lr`` x max(the last ``window`` scores)    (their scale-free step).

    It needs no exchangeability: for any sequence of scores bounded by B the long-run miss rate
    is within (B + eta) / (eta T) of alpha after T rounds (their Proposition 1), so coverage holds
    on drifting streams, and the interval narrows where the stream is steady. A level asked for the
    first time starts at the empirical 1 - alpha quantile of the last ``window`` scores and is
    tracked from then on; 1 - :data:`DEFAULT_ALPHA` is tracked from the first round. Before two
    scores the interval is infinite. Per round O(levels) plus O(window) when the window's maximum
    leaves it; memory O(window).

    >>> head = ConformalHead()
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> for e in rng.standard_normal(2000):
    ...     head.update(0.0, float(e))
    >>> iv = head.interval(0.0)
    >>> round(iv.upper, 1), round(head.coverage(), 3)
    (1.6, 0.899)
    """

    def __init__(self, lr: float = 0.1, window: int = 100):
        self.lr = check_real("lr", lr, 0.0, None, low_open=True)
        if isinstance(window, bool) or not isinstance(window, int) or window < 2:
            raise ValueError(f"window must be an integer >= 2, got {window!r}")
        self.window = window
        self.scores: list[float] = []
        self.q: dict[float, float] = {}
        self.hits = self.n = 0

    def _quantile(self, alpha: float) -> float:
        s = sorted(self.scores)
        return s[min(len(s) - 1, int(math.ceil((1.0 - alpha) * (len(s) + 1))) - 1)]

    def update(self, prediction: float, y: float, scale: float = 1.0) -> None:
        """Score the prediction made before y was learned (``scale``: the predictive standard
        deviation it came with) and step every tracked level."""
        if not (math.isfinite(prediction) and math.isfinite(y)) or not scale > 0.0:
            return
        score = abs(y - prediction) / scale
        if DEFAULT_ALPHA not in self.q and len(self.scores) >= 1:
            self.q[DEFAULT_ALPHA] = self._quantile(DEFAULT_ALPHA)
        if DEFAULT_ALPHA in self.q:
            self.n += 1
            self.hits += score <= self.q[DEFAULT_ALPHA]
        self.scores.append(score)
        if len(self.scores) > self.window:
            del self.scores[0]
        eta = self.lr * max(self.scores)
        for alpha, q in self.q.items():
            self.q[alpha] = q + eta * ((score > q) - alpha)

    def half_width(self, alpha: float = 0.1) -> float:
        """q(alpha): the interval's half-width in units of the predictive scale (inf before two scores)."""
        alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        if len(self.scores) < 2:
            return math.inf
        if alpha not in self.q:
            self.q[alpha] = self._quantile(alpha)
        return max(self.q[alpha], 0.0)

    def interval(self, prediction: float, alpha: float = 0.1, scale: float = 1.0) -> Interval:
        """[prediction -/+ q(alpha) scale] (class docstring)."""
        half = self.half_width(alpha) * scale
        return Interval(float(prediction - half), float(prediction), float(prediction + half))

    def coverage(self) -> float:
        """The share of scores so far inside the tracked 1 - DEFAULT_ALPHA interval (nan before one)."""
        return self.hits / self.n if self.n else math.nan

    def to_dict(self) -> dict:
        """The head's state as plain JSON values (for model files and checkpoints)."""
        return {"lr": self.lr, "window": self.window, "scores": list(self.scores),
                "q": [[a, q] for a, q in self.q.items()], "hits": int(self.hits), "n": int(self.n)}

    @classmethod
    def from_dict(cls, d: dict, where: str = "interval head") -> "ConformalHead":
        """The head :meth:`to_dict` wrote; a field of the wrong kind raises ValueError naming ``where``."""
        try:
            head = cls(float(d["lr"]), int(d["window"]))
            head.scores = [float(v) for v in d["scores"]][-head.window:]
            head.q = {float(a): float(q) for a, q in d["q"]}
            head.hits, head.n = int(d["hits"]), int(d["n"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: not a conformal head's state ({exc})") from None
        if not all(math.isfinite(v) and v >= 0 for v in head.scores) or not 0 <= head.hits <= head.n:
            raise ValueError(f"{where}: scores must be finite and >= 0, hits between 0 and n")
        return head


#: the level tracked from the first round (a 90 % interval)
DEFAULT_ALPHA = 0.1

__all__ = ["ConformalHead", "DEFAULT_ALPHA", "Interval"]
