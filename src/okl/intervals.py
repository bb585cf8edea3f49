"""Prediction intervals: :class:`Interval` (lower, center, upper), what a learner with a predictive
variance returns from ``predict_interval_one`` (:class:`okl.river.OKLRiverRegressor`'s
``predict_one(x, with_interval=True)`` gives the same bounds as River's ``river.conf.Interval``).

The learners' intervals need no River, so okl defines this small class (a central interval keeps
its ``center``, the point prediction); the River adapter hands River's own ``river.conf.Interval``
(lower, upper) to River's code (:class:`okl.river.OKLRiverRegressor`).

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


__all__ = ["Interval"]
