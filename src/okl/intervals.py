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


#: the level tracked from the first round (a 90 % interval)
DEFAULT_ALPHA = 0.1


class ConformalHead:
    """Online conformal calibration of a point predictor's intervals: the one place every okl
    regressor's ``predict_interval_one(x, alpha)`` comes from (:class:`okl.river.OKLRiverRegressor`,
    :class:`okl.timeseries.Forecaster`).

    Scores: s_t = |y_t - f_t| / u_t, f_t the prediction made before learning y_t and u_t its scale:
    the learner's predictive standard deviation where it has one (krls-t's ``predict_mean_var_one``),
    else the local scale of the stream, an exponential average of the past |y - f| (weight ``beta``
    on the past: normalised, "locally weighted" conformal scores, so a stream whose errors grow or
    shrink keeps its coverage without waiting for the quantile to catch up). The interval at level
    1 - alpha is f -/+ q_t(alpha) u with

        q_t = Q_{1-alpha}(the last ``window`` scores) x (1 + c_t),
        c_{t+1} = max(c_t + ``lr`` (err_t - alpha), -1),   err_t = 1 if s_t > q_t else 0,

    the window quantile a split-conformal base and c the integral (quantile-tracking) term of
    conformal PID control (Angelopoulos, Candes & Tibshirani, NeurIPS 2023), which is adaptive
    conformal inference (Gibbs & Candes, NeurIPS 2021): it needs no exchangeability, and as
    sum_t (err_t - alpha) = (c_T - c_0) / lr stays bounded (c >= -1, and a c past the largest score
    ratio misses nothing), the long-run miss rate tends to alpha on any sequence of bounded scores
    (their Proposition 1). c is kept in units of the window quantile: with a steady quantile it is
    the absolute correction of step lr x Q; when the quantile moves (the window fills, a large early
    score leaves it) the correction keeps its proportion, where an absolute one wound down at a
    large quantile left q = 0 at the next (a Forecaster's first rounds on AirlinePassengers: the
    quantile 36 -> 1.6 when the 19th score arrived, c = -6.1: two point intervals, five misses in a row).

    Measured (prequential, ``OKLRiverRegressor()`` at its defaults, 90 %; ../shared/checks/
    timeseries.py): TrumpApproval 90.0 %, ChickWeights 90.0 %, Friedman #1 90.0 %; the Forecaster's
    heads on 16 held-out series 88.3 % on average at horizons 1, 6 and 12 (84.6 % with the absolute
    correction; docs/results/timeseries.md, eighth round). 1 - alpha = 0.9 is tracked from the first
    round; a level asked for the first time starts with c = 0. Before two scores the interval is
    infinite. Per round O(levels + window log window); memory O(window).

    >>> head = ConformalHead()
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> for e in rng.standard_normal(4000):
    ...     head.update(0.0, float(e))
    >>> round(head.coverage(), 2), round(head.interval(0.0).upper / head.local_scale(), 1)
    (0.9, 1.7)
    """

    def __init__(self, lr: float = 0.1, window: int = 100, beta: float = 0.95):
        self.lr = check_real("lr", lr, 0.0, None, low_open=True)
        self.beta = check_real("beta", beta, 0.0, 1.0, high_open=True)
        if isinstance(window, bool) or not isinstance(window, int) or window < 2:
            raise ValueError(f"window must be an integer >= 2, got {window!r}")
        self.window = window
        self.scores: list[float] = []
        self.correction: dict[float, float] = {DEFAULT_ALPHA: 0.0}  # c per level, in window quantiles
        self.scale = 0.0               # the exponential average of |y - f| (0 before the first)
        self.hits = self.n = 0

    def __setstate__(self, state: dict) -> None:
        """A head pickled by an okl whose correction was absolute (``c``) is converted."""
        absolute = state.pop("c", None) if "correction" not in state else None
        self.__dict__.update(state)
        if absolute is not None:
            self.correction = {a: self._relative(a, c) for a, c in absolute.items()}

    def _relative(self, alpha: float, c: float) -> float:
        """An absolute correction c (the quantile plus c) in units of the current window quantile."""
        base = self._base(alpha) if len(self.scores) >= 2 else 0.0
        return max(c / base, -1.0) if base > 0.0 else 0.0

    def _base(self, alpha: float) -> float:
        s = sorted(self.scores)
        return s[min(len(s) - 1, int(math.ceil((1.0 - alpha) * (len(s) + 1))) - 1)]

    def local_scale(self) -> float:
        """The exponential average of the past |y - f| (1 before the first nonzero one)."""
        return self.scale if self.scale > 0.0 else 1.0

    def update(self, prediction: float, y: float, scale: float | None = None,
               issued: tuple[float, dict[float, float]] | None = None) -> None:
        """Score the prediction made before y was learned (``scale``: the predictive standard
        deviation it came with; None: the local scale) and step every tracked level. ``issued``: the
        head's :meth:`snapshot` when the interval for y was answered, for a forecast answered rounds
        before its value arrives (a Forecaster's horizon h > 1): then the score is in that interval's
        scale and a miss is a miss of that interval (Gibbs and Candes' err_t is of the set C_t issued
        for y_t; judged by the head's newer state instead, Lorenz 10 steps ahead covered 79 % while
        the head counted 88 %)."""
        if not (math.isfinite(prediction) and math.isfinite(y)):
            return
        u = self.local_scale() if scale is None else scale
        if issued is not None:
            u = issued[0]
        if not (u > 0.0 and math.isfinite(u)):
            return
        err = abs(y - prediction)
        score = err / u
        if len(self.scores) >= 2:
            for alpha, c in self.correction.items():
                base = self._base(alpha)
                q = issued[1].get(alpha, base * (1.0 + c)) if issued is not None else base * (1.0 + c)
                miss = score > q
                if alpha == DEFAULT_ALPHA:
                    self.n += 1
                    self.hits += not miss
                # anti-windup: at c = -1 the interval is already a point (q = 0), and an integral
                # wound further down by a run of hits would take rounds of misses to unwind (the
                # second round's absolute term, unbounded: a Forecaster's head on AirlinePassengers
                # covered 17 of 97)
                self.correction[alpha] = max(c + self.lr * (miss - alpha), -1.0)
        self.scores.append(score)
        if len(self.scores) > self.window:
            del self.scores[0]
        self.scale = err if self.scale == 0.0 else self.beta * self.scale + (1.0 - self.beta) * err

    def half_width(self, alpha: float = DEFAULT_ALPHA) -> float:
        """q(alpha): the interval's half-width in units of the scale (inf before two scores)."""
        alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        if len(self.scores) < 2:
            return math.inf
        return self._base(alpha) * (1.0 + self.correction.setdefault(alpha, 0.0))

    def snapshot(self) -> tuple[float, dict[float, float]]:
        """(the local scale, {alpha: the half-width q(alpha)} of every tracked level): what an interval
        answered now is made of, for :meth:`update`'s ``issued``."""
        return self.local_scale(), {alpha: self.half_width(alpha) for alpha in self.correction}

    def interval(self, prediction: float, alpha: float = DEFAULT_ALPHA, scale: float | None = None) -> Interval:
        """[prediction -/+ q(alpha) u], u = ``scale`` or the local scale (class docstring)."""
        u = self.local_scale() if scale is None else scale
        half = self.half_width(alpha) * u
        return Interval(float(prediction - half), float(prediction), float(prediction + half))

    def coverage(self) -> float:
        """The share of scores so far inside the tracked 1 - DEFAULT_ALPHA interval (nan before one)."""
        return self.hits / self.n if self.n else math.nan

    def to_dict(self) -> dict:
        """The head's state as plain JSON values (for model files and checkpoints)."""
        return {"lr": self.lr, "window": self.window, "beta": self.beta, "scores": list(self.scores),
                "correction": [[a, c] for a, c in self.correction.items()], "scale": self.scale,
                "hits": int(self.hits), "n": int(self.n)}

    @classmethod
    def from_dict(cls, d: dict, where: str = "interval head") -> "ConformalHead":
        """The head :meth:`to_dict` wrote; a field of the wrong kind raises ValueError naming ``where``."""
        try:
            head = cls(float(d["lr"]), int(d["window"]), float(d["beta"]))
            head.scores = [float(v) for v in d["scores"]][-head.window:]
            if "correction" in d:
                head.correction = {float(a): float(c) for a, c in d["correction"]}
            else:  # (written by an okl whose correction was absolute)
                head.correction = {float(a): head._relative(float(a), float(c)) for a, c in d["c"]}
            head.scale = float(d["scale"])
            head.hits, head.n = int(d["hits"]), int(d["n"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: not a conformal head's state ({exc})") from None
        if not all(math.isfinite(v) and v >= 0 for v in head.scores + [head.scale]) or not 0 <= head.hits <= head.n:
            raise ValueError(f"{where}: scores and scale must be finite and >= 0, hits between 0 and n")
        if not all(math.isfinite(c) and c >= -1.0 and 0.0 < a < 1.0 for a, c in head.correction.items()):
            raise ValueError(f"{where}: each level's correction must be finite and >= -1, its alpha in (0, 1)")
        return head


def replay_intervals(predictions, targets, alpha: float = DEFAULT_ALPHA, head: ConformalHead | None = None,
                     count_from: int = 1) -> tuple[float, float]:
    """(coverage, mean width) of the 1 - ``alpha`` intervals a :class:`ConformalHead` (``head``, else
    one at its defaults), on the stream's local scale, puts around predictions made before their
    targets arrived (a learner's ``run`` decisions on a regression stream): the interval of round t
    from the head's state after round t - 1, then y_t scored, as
    ``OKLRiverRegressor.predict_interval_one`` runs online. The first prediction (made before
    anything was learned) is not scored; rounds before ``count_from``, whose interval is still
    infinite (before two scores) or whose prediction is not finite are not counted; (nan, nan) when
    none is. Cost O(n window log window).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.standard_normal(3000)
    >>> coverage, width = replay_intervals(np.zeros(3000), y)
    >>> round(coverage, 2), round(width, 2)  # (N(0, 1)'s exact 90 % interval is 3.29 wide)
    (0.9, 3.48)
    """
    alpha = check_real("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    head = ConformalHead() if head is None else head
    inside = width = counted = 0
    for t, (f, y) in enumerate(zip(list(predictions)[1:], list(targets)[1:]), 1):
        f, y = float(f), float(y)
        if not (math.isfinite(f) and math.isfinite(y)):
            continue
        iv = head.interval(f, alpha)
        if t >= count_from and math.isfinite(iv.width):
            inside += iv.lower <= y <= iv.upper
            width += iv.width
            counted += 1
        head.update(f, y)
    return (inside / counted, width / counted) if counted else (math.nan, math.nan)


__all__ = ["ConformalHead", "DEFAULT_ALPHA", "Interval", "replay_intervals"]
