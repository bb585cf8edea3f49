"""Forecaster: River's forecaster protocol (``learn_one(y, x=None)``, ``forecast(horizon, xs=None)``)
over okl's learners, every horizon forecast directly, each forecast with a calibrated interval.

**Direct forecasts.** Horizon h has its own models, each learning the pair (embedding at time
u, y_{u+h}) when y_{u+h} arrives (KAFBOX's k-step protocol: a label delay of h - 1 rounds). A
recursive forecast (the one-step model fed its own forecasts) compounds its errors on chaotic
series; a direct model learns the h-step map itself. A horizon first asked for gets its models
then, trained on the history kept (``memory`` values), so ``forecast(H)`` always answers H values.

**Recursive forecasts as a candidate.** The one-step leader fed its own forecasts gives a path to
every horizon; each horizon > 1 weighs it with the direct members by the same discounted error of
its (true, made-at-the-origin) forecasts: errors compound on a chaotic series (Lorenz), a one-step
map learned closely iterates well (Mackey-Glass 30), neither wins everywhere (docs/results). Not
with exogenous values. A path ends at its first step outside the values seen widened by half their
range (diverged).

**Views, members and the mixture** (``learner="auto"``): at each horizon, members on views of
the series: its values; its first differences y_t - y_{t-1} (target y_{u+h} - y_u: a trend, and
the last value until a member has learned); its seasonal differences y_t - y_{t-P} when it has a
season (target y_{u+h} - y_{u+h-P ceil(h/P)}: a seasonal pattern the kernel cannot extrapolate);
and, while every value is positive, the same three views of log y (a member's output exp'd: a
multiplicative season and growth made additive, Box and Jenkins' variance-stabilising transform).
On the values and their first differences the members are :func:`okl.ensemble.pool.series_pool`
(KRLS-T over 3 widths x 3 noise levels and two linear autoregressions), on the log and seasonal
views its linear autoregressions only (the transforms make a trend and a season linear; the whole
grid on every view cost Lorenz 20 times the time), each at each order of :data:`ORDERS` (or the
``order`` given), the linear ones also at :data:`LINEAR_ORDERS` (parsimony: on a short series an
AR(1) or AR(2) of the differences is ARIMA(1 or 2, 1, 0)). A view is a candidate, not a decision: each
member is scored by the discounted (``discount`` per round) mean squared error of its own
forecasts, each made h rounds before its value arrived with what the member knew then (a mean, so
members scored fewer times compare fairly), and the forecast of horizon h is a tempered-likelihood
average of the members and the recursive path by those scores, over a grid of temperatures, and their
median, weighed by these combinations' own errors (:mod:`okl.timeseries.mixing`; follow-the-leader is its
coldest limit). Every output is kept within the values seen widened by half their range. After ``burn``
rounds a member whose loss exceeds ``drop`` (10) times its view's leader's is dropped (10 dB behind over
the discount's window of about 100 rounds), the view's ``keep`` best always kept. Any other ``learner`` name:
that learner (``loss="squared"``, its defaults, with the ``params`` given) on every view and order.

**Scale and season from the stream.** Members are built after ``warmup`` values: a view's width
unit is the std of its values times sqrt(order) (the typical distance of two embedded rows). The
season P is :func:`detect_period`'s (a significant peak of the differences' autocorrelation,
``period=None``; 0: none), looked for at every value until one is found (up to 16 ``warmup``
values; AirlinePassengers: found at 25 values). At 2, 4, 8 and 16 times ``warmup`` values scale and
season are measured again, and the members rebuilt on the kept history when the scale moved by more
than a factor sqrt 2 (a width grid step) or another season is significant: one found from few values
can be a divisor or neighbour of the series' own, untestable before two of its periods (electrical
equipment: 3 from 20 values, 12 from 64). At any rebuild the views without a season keep their
widths unless the scale moved: the same members, replayed to the same state (re-drawn, an iterated
one-step leader can diverge; docs/results).

**Exponential smoothing candidates** (auto, no exogenous values; :mod:`okl.timeseries.smoothing`):
two grids of state-space models on log y (while positive) and y, each grid's tempered average one
more candidate at every horizon. Holt-Winters (a level, trend and season P), at the season found
or, before one is significant, at the likeliest lag (:func:`likely_period`; AirlinePassengers: 12
from 15 values); and, from the first members on, the same without a season (a local level or
trend: simple exponential smoothing and Holt's, the forecasts of an ARIMA(0, 1, 1) and (0, 2, 2)).
Each replayed on the kept history when built and kept through the members' rebuilds.

**Intervals**: one :class:`okl.intervals.ConformalHead` per horizon, fed the errors of the
forecasts the Forecaster answered h rounds earlier (what a user got, not a refit's: kept through
the members' rebuilds, which do not change what users got), each judged
a miss or not by the interval answered with it (the head's snapshot then: its scale and half-width;
adaptive conformal inference's err_t is of the set issued for y_t): ``forecast_interval(horizon,
alpha)``. Lorenz, 90 %, ten steps ahead: 90.0 % (70.7 % fed the members' refit errors; docs).

Cost per learned value: O(H x members x M^2) for KRLS-T members of budget M (H horizons), and
O(C (P + H |ETAS|)) for the C smoothing candidates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from okl.intervals import ConformalHead, Interval
from okl.timeseries.mixing import TemperedMix
from okl.timeseries.season import detect_period, likely_period
from okl.timeseries.smoothing import SmoothingBank
from okl.timeseries.views import kept_widths, member_specs

#: candidate orders when ``order`` is None (a doubling grid around the embeddings the literature
#: uses: 6 for Lorenz, 7 for Mackey-Glass and Santa Fe)
ORDERS = (6, 12)
#: more orders of the linear autoregressions (auto, ``order`` None): Box and Jenkins' low orders, the
#: parsimonious models of a short series (measured on 15 held-out series, docs/results/timeseries.md)
LINEAR_ORDERS = (1, 2)


class Forecaster:
    """Forecasts of a univariate series at every horizon (module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        "auto": the series pool's mixture; else a registered regressor's name.
    order : int or None, default None
        The embedding order; None: each of :data:`ORDERS` (linear members also :data:`LINEAR_ORDERS`).
    period : int or None, default None
        The season P (0: none); None: detected from the series.
    warmup : int, default 16
        Values before the members are built (the last value is forecast until then).
    burn, keep, drop : default 300, 2, 10.0
        After ``burn`` rounds, members ``drop`` times worse than the leader are dropped, but the ``keep`` best.
    discount : float, default 0.99
        The per-round discount of each member's squared error.
    memory : int, default 4096
        Values kept for building new horizons' models and rebuilds.
    params : dict or None
        Hyperparameters of a named ``learner``.
    """

    def __init__(self, learner: str = "auto", order: int | None = None, period: int | None = None, warmup: int = 16,
                 burn: int = 300, keep: int = 2, drop: float = 10.0, discount: float = 0.99, memory: int = 4096,
                 params: dict | None = None):
        from okl.runtime.base import learners

        if learner != "auto" and learner not in learners(kind="streaming"):
            raise ValueError(f"learner must be 'auto' or a registered streaming learner, got {learner!r}")
        for name, v, lo in (("order", order, 1), ("period", period, 0)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo):
                raise ValueError(f"{name} must be None or an integer >= {lo}, got {v!r}")
        for name, v, lo in (("warmup", warmup, 4), ("burn", burn, 1), ("keep", keep, 1), ("memory", memory, 64)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not drop > 1.0:
            raise ValueError(f"drop must be a number > 1, got {drop!r}")
        if not 0.0 < float(discount) <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {discount!r}")
        self.learner, self.order, self.period, self.warmup = learner, order, period, int(warmup)
        self.burn, self.keep, self.discount, self.memory = int(burn), int(keep), float(discount), int(memory)
        self.params, self.drop = dict(params or {}), float(drop)
        self.y_: list[float] = []      # the kept values (the last ``memory``), y_[i] is value offset_ + i
        self.x_: list[np.ndarray | None] = []
        self.offset_, self.n_ = 0, 0   # (the index of y_[0], values learned)
        self.specs_: list[tuple] = []  # per member: (season, order, name, sigma or None, params)
        self.models_: list[list] = []  # [h - 1][member]
        self.loss_, self.alive_ = np.zeros((0, 0)), np.zeros((0, 0), dtype=bool)
        self.heads_: list[ConformalHead] = []
        self.rounds_ = 0               # rounds since the members were built
        self.rec_loss_, self.rec_weight_ = np.zeros(0), np.zeros(0)  # [h - 1]: the recursive path's loss, count
        self.weight_ = np.zeros((0, 0))  # the discounted count of the errors in loss_ (and rec_weight_ in rec_loss_)
        self.pending_: list[dict] = []  # [h - 1]: {origin u: every member's forecast of y_{u+h} made at u}
        self.paths_: list[tuple[int, list[float]]] = []  # (origin t, the recursive forecasts of t + 1 ..)
        # (origin t, what forecast() answered at t, each horizon's head snapshot then: the interval's make)
        self.issued_: list[tuple[int, list[float], list]] = []
        self.scale_ = (0.0, 0.0, 0)    # (std of values, std of seasonal differences, season) they were built with
        self.positive_ = True          # every value so far > 0: the log members live
        self.lo_, self.hi_ = math.inf, -math.inf  # the smallest and largest value seen
        self.exog_keys_: list | None = None
        self.mix_ = TemperedMix(0, discount)  # the answer: tempered averages and median of the candidates
        self.bank_: SmoothingBank | None = None  # the Holt-Winters candidates (auto, a season found)
        self.bank_spec_: tuple[int, int, bool] | None = None  # (season, values that initialise, significant)
        self.level_bank_: SmoothingBank | None = None  # the smoothing candidates without a season (auto)

    # ---- the series ---------------------------------------------------------------------------

    def _value(self, t: int, log: bool = False) -> float:
        if t < self.offset_:
            return 0.0
        v = self.y_[t - self.offset_]
        return math.log(v) if log else v

    def _row(self, season: int, order: int, u: int, h: int, log: bool = False) -> np.ndarray:
        """Embedding at time u for horizon h: the last ``order`` values (their logs when ``log``;
        seasonal differences when season > 0), zero before the start, then the exogenous values at u + h."""
        row = np.zeros(order)
        for k in range(min(order, u + 1)):
            v = self._value(u - k, log)
            if season:
                v = v - self._value(u - k - season, log) if u - k - season >= 0 else 0.0
            row[k] = v
        if self.exog_keys_:
            x = self.x_[u + h - self.offset_] if u + h - self.offset_ < len(self.x_) else None
            row = np.concatenate([row, x if x is not None else np.zeros(len(self.exog_keys_))])
        return row

    def _base(self, season: int, u: int, h: int, log: bool = False) -> float:
        """What a seasonal member's target is relative to: y (log y) at the last time <= u in the season of u + h."""
        return self._value(u + h - season * math.ceil(h / season), log) if season else 0.0

    def _out(self, z: float, log: bool) -> float:
        """A member's output (target + base) on the series' scale, kept within the values seen widened
        by half their range (a GP with little noise can answer far outside sparse early rows)."""
        v = math.exp(min(z, 700.0)) if log else z
        pad = 0.5 * (self.hi_ - self.lo_)
        return min(max(v, self.lo_ - pad), self.hi_ + pad)

    def _exog(self, x) -> np.ndarray | None:
        if x is None:
            return None
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of exogenous values or None, got {type(x).__name__}")
        if self.exog_keys_ is None:
            self.exog_keys_ = sorted(x)
        if sorted(x) != self.exog_keys_:
            raise ValueError(f"x: the exogenous features must be the first value's {self.exog_keys_}, got {sorted(x)}")
        return np.array([float(x[k]) for k in self.exog_keys_])

    # ---- the members --------------------------------------------------------------------------

    def _measure(self, again: bool = False) -> tuple[float, float, int]:
        """(std of values, of seasonal differences, season): a season found is kept unless ``again`` finds another."""
        y = np.asarray(self.y_)
        period = self.period
        if period is None:
            period = (detect_period(y) or self.scale_[2]) if again else (self.scale_[2] or detect_period(y))
        sd = float(np.std(y)) or 1.0
        sd_season = float(np.std(y[period:] - y[:-period])) if period and len(y) > period else 0.0
        return sd, sd_season or sd, int(period)

    def _build(self, scale: tuple[float, float, int] | None = None, keep: bool = False) -> None:
        """(Re)build every member at every horizon for ``scale`` (None: measured) and replay the kept
        history; ``keep``: the views without a season (0 and 1) keep their members' widths."""
        from okl.ensemble.pool import series_pool

        kept = kept_widths(self.specs_) if keep else None
        self.scale_ = scale or self._measure()
        period = self.scale_[2]
        orders = (self.order,) if self.order else ORDERS
        # the views and members (okl.timeseries.views): the kernel grid on the values, the linear
        # autoregression on every other view (auto), or the learner named on every view
        pool = series_pool() if self.learner == "auto" else [(self.learner, None, self.params)]
        low = LINEAR_ORDERS if self.learner == "auto" and not self.order else ()
        self.specs_ = member_specs(self.y_, period, orders, pool, self.positive_, self.learner == "auto", kept, low)
        H, heads = max(len(self.models_), 1), self.heads_
        self.models_, self.heads_, self.pending_ = [], [], []
        self.loss_ = np.zeros((0, len(self.specs_)))
        self.weight_ = np.zeros((0, len(self.specs_)))
        self.alive_ = np.zeros((0, len(self.specs_)), dtype=bool)
        self.rounds_ = 0
        self.rec_loss_, self.rec_weight_, self.paths_ = np.zeros(0), np.zeros(0), []
        self.mix_ = TemperedMix(0, self.discount)
        # the smoothing candidates (scale-free: kept by a rebuild, the Holt-Winters ones at their season;
        # a kept bank learns the value this rebuild was made at; half the values initialise a new one)
        if self.level_bank_ is None and self.learner == "auto" and not self.exog_keys_:
            self.level_bank_ = SmoothingBank.replayed(0, H, self.discount, self.positive_, (len(self.y_) + 1) // 2,
                                                      self.y_, self.offset_)
        elif self.level_bank_ is not None:
            self.level_bank_.learn_one(self.n_ - 1, self.y_[-1])
        if self.bank_ is not None and self.bank_spec_[0] == period and self.bank_spec_[2]:
            self.bank_.learn_one(self.n_ - 1, self.y_[-1])
        else:
            self._bank(period, True, H, len(self.y_))
        # the interval heads calibrate what users got, which a rebuild does not change: kept, not fed the
        # replay (new heads fed it: held-out 90 % intervals covered 73-88 %; docs/results/timeseries.md)
        self._add_horizons(H, heads)

    def _bank(self, period: int, significant: bool, H: int, end: int) -> None:
        """The Holt-Winters candidates at season P (significant or likely) replayed on the kept values
        before ``end`` (P + 1 + half the seasonal differences initialise them); None below P = 2."""
        n = len(self.y_)
        self.bank_spec_ = self.bank_ = None
        if period >= 2 and self.learner == "auto" and not self.exog_keys_ and n > period:
            self.bank_spec_ = (period, period + 1 + (n - period - 1) // 2, significant)
            self.bank_ = SmoothingBank.replayed(period, H, self.discount, self.positive_, self.bank_spec_[1],
                                                self.y_[:end], self.offset_)

    def _banks(self) -> list[SmoothingBank]:
        """The smoothing candidates: the Holt-Winters bank (a season), then the one without a season."""
        return [b for b in (self.bank_, self.level_bank_) if b is not None]

    def _make(self, spec):
        from okl.kernels import RBF, Polynomial
        from okl.runtime.base import make

        season, order, name, sigma, params, _ = spec
        kw = {"loss": "squared", **params}
        if kw.get("kernel") == "affine":  # Bayesian linear regression with an intercept, inputs in width units
            kw["kernel"] = Polynomial(degree=1, scale=1.0 / sigma ** 2, offset=1.0)
            kw["budget"] = max(kw.get("budget", 0), order + 2 + len(self.exog_keys_ or ()))
        elif sigma is not None:
            kw["kernel"] = RBF(sigma=sigma)
        return make(name, **kw)

    def _add_horizons(self, H: int, heads: list = ()) -> None:
        """Models for horizons len(models_) + 1 .. H, trained on the kept history (``heads``: kept)."""
        first = len(self.models_)
        for i in range(first, H):
            self.models_.append([self._make(spec) for spec in self.specs_])
            self.pending_.append({})
            self.heads_.append(heads[i] if i < len(heads) else ConformalHead())
        k, self.rec_loss_ = len(self.specs_), np.r_[self.rec_loss_, np.zeros(H - first)]
        self.rec_weight_ = np.r_[self.rec_weight_, np.zeros(H - first)]
        self.mix_.add_horizons(H)
        self.bank_, self.level_bank_ = (  # (one state: replayed whole)
            b if b is None or len(b.loss_) >= H else
            SmoothingBank.replayed(b.period, H, self.discount, self.positive_, b.first, self.y_, self.offset_)
            for b in (self.bank_, self.level_bank_))
        self.loss_ = np.vstack([self.loss_, np.zeros((H - first, k))])
        self.weight_ = np.vstack([self.weight_, np.zeros((H - first, k))])
        live = np.array([self.positive_ or not spec[5] for spec in self.specs_], dtype=bool)
        self.alive_ = np.vstack([self.alive_, np.tile(live, (H - first, 1))])
        for t in range(self.offset_, self.offset_ + len(self.y_)):
            self._learn_at(t, range(first + 1, H + 1), kept=len(heads))
        if self.n_ and not self.exog_keys_:
            self._mix_at(self.n_ - 1, range(first + 1, H + 1))

    def _learn_at(self, t: int, horizons, kept: int = 0) -> None:
        """y_t arrives: at each horizon h, score the members' forecasts of y_t made at u = t - h,
        learn the pair (row at u, y_t), then forecast y_{t+h} from t (scored h rounds on); the interval
        heads of horizons 1 .. ``kept`` score the last value only (a replay: they scored the others live)."""
        y = self._value(t)
        k = len(self.specs_)
        for h in horizons:
            models, loss, weight, alive = self.models_[h - 1], self.loss_[h - 1], self.weight_[h - 1], self.alive_[h - 1]
            pending = self.pending_[h - 1]
            u = t - h
            if u >= 0:
                # a member is scored on the forecast it made at u, with what it knew then (scored
                # after h - 1 more pairs, a model that fits the latest pairs closely looks better
                # than its forecasts are). With exogenous values x_{u+h} arrives with y_{u+h}: the
                # forecast is made now.
                made = pending.pop(u, None) if not self.exog_keys_ else None
                if made is None:
                    made = self._forecasts(u, h)
                lead = int(np.argmin(self._score(h)))
                lead_pred = float(made[lead])
                for j in range(k):
                    if alive[j] and math.isfinite(made[j]):
                        e = y - made[j]
                        loss[j] = self.discount * loss[j] + e * e
                        weight[j] = self.discount * weight[j] + 1.0
                rows: dict = {}
                for j, spec in enumerate(self.specs_):
                    season, order, log = spec[0], spec[1], spec[5]
                    if not alive[j] or (season and u + h - season * math.ceil(h / season) < 0):
                        continue  # (no value to difference from yet)
                    x = rows.get((season, order, log))
                    if x is None:
                        x = rows[(season, order, log)] = self._row(season, order, u, h, log)
                    models[j].learn_one(x, (math.log(y) if log else y) - self._base(season, u, h, log))
                # the forecast and interval answered at u: the head scores what users got, a miss
                # of that interval a miss (module docstring, Intervals)
                issued, snapshot = self._issued(u, h)
                if h > kept or issued is not None and t == self.n_ - 1:  # (else a kept head scored it live)
                    if issued is None:
                        rec = self._recursive(u, h)
                        issued = lead_pred if rec is None else rec
                    if math.isfinite(issued):
                        self.heads_[h - 1].update(issued, y, issued=snapshot)
            if not self.exog_keys_:
                pending[t] = self._forecasts(t, h)

    def _forecasts(self, u: int, h: int) -> np.ndarray:
        """Every live member's forecast of y_{u+h} from u (NaN: dropped, or nothing to difference from yet)."""
        out = np.full(len(self.specs_), math.nan)
        rows: dict = {}
        for j, spec in enumerate(self.specs_):
            season, order, log = spec[0], spec[1], spec[5]
            if not self.alive_[h - 1, j] or (season and u + h - season * math.ceil(h / season) < 0):
                continue
            x = rows.get((season, order, log))
            if x is None:
                x = rows[(season, order, log)] = self._row(season, order, u, h, log)
            m = self.models_[h - 1][j]
            out[j] = self._out((m.predict_one(x) if m.n_seen_ else 0.0) + self._base(season, u, h, log), log)
        return out

    def _score(self, h: int) -> np.ndarray:
        """Each member's discounted mean squared error at horizon h (inf: dropped, or nothing scored
        yet). A mean, not a sum: a view that starts later (a seasonal one waits a season for its
        first difference) or a candidate rebuilt later (the recursive path) is not favoured for
        having fewer errors counted."""
        w = self.weight_[h - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.alive_[h - 1] & (w > 0), self.loss_[h - 1] / w, np.inf)

    def _prune(self) -> None:
        """Drop, at every horizon, the members whose discounted loss exceeds ``drop`` times their
        family's leader's, but the family's ``keep`` best. A family is one view of the series (raw
        or log values, with or without seasonal differences); its members are compared among
        themselves only: the views learn at different rates, and a view that leads early can trail
        later (Lorenz's seasonal view at its quasi-period; a Forecaster-wide drop cost 19 dB, docs)."""
        families: dict = {}
        for j, spec in enumerate(self.specs_):
            families.setdefault((spec[0], spec[5]), []).append(j)
        for h in range(len(self.models_)):
            loss = self._score(h + 1)
            for members in families.values():
                order = sorted(members, key=lambda j: loss[j])
                for j in order[self.keep:]:
                    if self.alive_[h, j] and loss[j] > self.drop * loss[order[0]]:
                        self.alive_[h, j] = False
                        self.models_[h][j] = None

    # ---- River's protocol ---------------------------------------------------------------------

    def learn_one(self, y, x: dict | None = None) -> "Forecaster":
        """Learn the next value ``y`` (and its exogenous values ``x``, a dict, or None)."""
        if isinstance(y, (bool, np.bool_)) or not isinstance(y, (int, float, np.integer, np.floating)):
            raise ValueError(f"y must be a number, got {y!r}")
        y = float(y)
        if not math.isfinite(y):
            raise ValueError(f"y must be finite, got {y!r} (value {self.n_})")
        self.x_.append(self._exog(x))
        self.y_.append(y)
        self.n_ += 1
        self.lo_, self.hi_ = min(self.lo_, y), max(self.hi_, y)
        if y <= 0.0 and self.positive_:  # the log members end with the first value they cannot take
            self.positive_ = False
            for bank in self._banks():
                bank.drop_log()
            for j, spec in enumerate(self.specs_):
                if spec[5]:
                    self.alive_[:, j] = False
                    for models in self.models_:
                        models[j] = None
        if len(self.y_) > self.memory:
            drop = len(self.y_) - self.memory
            del self.y_[:drop]
            del self.x_[:drop]
            self.offset_ += drop
        n = self.n_
        if not self.specs_:
            if n >= self.warmup:
                self._build()
            return self
        # scale and season at each doubling of the values seen; the season at every value until one
        # is found (a season the members know a period earlier is a period of better forecasts)
        doubling = n in (2 * self.warmup, 4 * self.warmup, 8 * self.warmup, 16 * self.warmup)
        if doubling or (self.period is None and not self.scale_[2] and n <= 16 * self.warmup):
            sd, sd_season, period = self._measure(again=doubling)
            old = self.scale_
            steady = 0.5 ** 0.5 <= sd / old[0] <= 2 ** 0.5
            if period != old[2] or doubling and (not steady or (
                    period and not (0.5 ** 0.5 <= sd_season / old[1] <= 2 ** 0.5))):
                self._build((sd, sd_season, period), keep=steady)
                return self
            if not period and self.period is None and self.learner == "auto":  # (period=0: no season)
                # no significant season yet: the Holt-Winters candidates at the likeliest lag
                # (cheap, and weighed by their own errors), rebuilt when that lag moves
                likely = likely_period(np.asarray(self.y_))
                if likely != (self.bank_.period if self.bank_ is not None else 0):
                    self._bank(likely, False, len(self.models_), len(self.y_) - 1)  # (y learned below)
        self._learn_at(n - 1, range(1, len(self.models_) + 1))
        self.rounds_ += 1
        if self.rounds_ >= self.burn:
            self._prune()
        self.mix_.learn_one(n - 1, y)
        for bank in self._banks():
            bank.learn_one(n - 1, y)
        if not self.exog_keys_:
            self._recursive_step(n - 1)
            H = len(self.models_)
            self._mix_at(n - 1, range(1, H + 1))
            self.issued_ = [(o, f, q) for o, f, q in self.issued_ if n - 1 - o < len(f)] + [
                (n - 1, [self._predict(h) for h in range(1, H + 1)], [hd.snapshot() for hd in self.heads_[:H]])]
        return self

    def _mix_at(self, t: int, horizons) -> None:
        """At each horizon, every temperature's average of the candidates' forecasts made at t
        (:class:`okl.timeseries.mixing.TemperedMix`): what forecast() answers at t."""
        for h in horizons:
            f, score, weight = self.pending_[h - 1].get(t), self._score(h), self.weight_[h - 1]
            if f is None:
                continue
            rec = self._path(t, h)
            if h >= 2 and rec is not None and self.rec_weight_[h - 1] > 0:
                f = np.r_[f, rec]
                score = np.r_[score, self.rec_loss_[h - 1] / self.rec_weight_[h - 1]]
                weight = np.r_[weight, self.rec_weight_[h - 1]]
            # each smoothing grid enters as one candidate: its own tempered average, on its record
            for bank in self._banks():
                c = bank.candidate(t, h)
                if c is not None:
                    f, score, weight = np.r_[f, c[0]], np.r_[score, c[1]], np.r_[weight, c[2]]
            self.mix_.make(t, h, f, score, weight)

    # ---- the recursive candidate ---------------------------------------------------------------

    def _recursive_step(self, t: int) -> None:
        """Score the recursive paths that reach y_t, then forecast a new path from t: the one-step
        leader fed its own forecasts (a candidate at every horizon > 1, weighed with the direct
        members by the same discounted error)."""
        y = self._value(t)
        kept = []
        for o, path in self.paths_:
            h = t - o
            if 1 <= h <= len(path):
                e = y - path[h - 1]
                self.rec_loss_[h - 1] = self.discount * self.rec_loss_[h - 1] + e * e
                self.rec_weight_[h - 1] = self.discount * self.rec_weight_[h - 1] + 1.0
            if h < len(path):
                kept.append((o, path))
        H, added = len(self.models_), 0
        # a path ends at its first step the range bound clamps (every output's): iterating a model on
        # the bound is no forecast, and a diverged path keeps its weight h rounds (Rossler, docs)
        lo, hi = min(self.y_), max(self.y_)
        lo, hi = lo - 0.5 * (hi - lo), hi + 0.5 * (hi - lo)
        try:
            for _ in range(H):
                step = self._predict(1, t + added, direct=True)
                if not lo < step < hi:
                    break
                self.y_.append(step)
                self.x_.append(None)
                added += 1
            path = self.y_[len(self.y_) - added:]
        finally:
            del self.y_[len(self.y_) - added:]
            del self.x_[len(self.x_) - added:]
        self.paths_ = kept + [(t, path)]

    def _issued(self, t: int, h: int) -> tuple[float | None, tuple | None]:
        """(the forecast of y_{t+h} answered at t, its head's snapshot then), or (None, None)."""
        for o, f, q in self.issued_:
            if o == t and h <= len(f):
                return float(f[h - 1]), (q[h - 1] if h <= len(q) else None)
        return None, None

    def _recursive(self, t: int, h: int) -> float | None:
        """The recursive forecast of y_{t+h} made at t, when it leads horizon h; else None."""
        if h < 2 or h > len(self.rec_loss_) or not 0.0 < self.rec_weight_[h - 1] or not (
                self.rec_loss_[h - 1] / self.rec_weight_[h - 1] < float(np.min(self._score(h)))):
            return None
        return self._path(t, h)

    def _path(self, t: int, h: int) -> float | None:
        """The recursive path's forecast of y_{t+h} made at t (None: no path from t)."""
        for o, path in self.paths_:
            if o == t and h <= len(path):
                return float(path[h - 1])
        return None

    def _predict(self, h: int, t: int | None = None, direct: bool = False) -> float:
        t = self.n_ - 1 if t is None else t
        if not direct:
            mixed = self.mix_.forecast(t, h)
            if mixed is not None:
                return mixed
            rec = self._recursive(t, h)
            if rec is not None:
                return rec
        j = int(np.argmin(self._score(h)))
        season, order, log = self.specs_[j][0], self.specs_[j][1], self.specs_[j][5]
        m = self.models_[h - 1][j]
        p = m.predict_one(self._row(season, order, t, h, log)) if m.n_seen_ else 0.0
        return float(self._out(p + self._base(season, t, h, log), log))

    def _future_exog(self, horizon: int, xs) -> None:
        if self.exog_keys_ is None:
            return
        if xs is None or len(xs) < horizon:
            raise ValueError(f"xs: a model learned with exogenous values needs {horizon} of them, one per step")
        # (the future rows sit after the kept values for _row; removed again by forecast)
        for x in xs[:horizon]:
            self.x_.append(self._exog(x))

    def forecast(self, horizon: int, xs: list | None = None) -> list[float]:
        """The forecasts of the next ``horizon`` values (River's protocol; ``xs``: their exogenous
        values, when the model learned with them)."""
        return [iv.center for iv in self.forecast_interval(horizon, xs=xs, alpha=None)]

    def forecast_interval(self, horizon: int, alpha: float | None = 0.1, xs: list | None = None) -> list[Interval]:
        """The forecasts of the next ``horizon`` values with their 1 - alpha intervals (a
        :class:`okl.intervals.ConformalHead` per horizon; infinite until it has two scores)."""
        if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 1:
            raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
        last = self.y_[-1] if self.y_ else 0.0
        if not self.specs_:
            return [Interval(-math.inf, last, math.inf)] * horizon
        if horizon > len(self.models_):
            self._add_horizons(horizon)
        kept = len(self.x_)
        self._future_exog(horizon, xs)
        try:
            out = []
            for h in range(1, horizon + 1):
                p = self._predict(h)
                out.append(Interval(p, p, p) if alpha is None else self.heads_[h - 1].interval(p, alpha))
            return out
        finally:
            del self.x_[kept:]

    def save(self, path) -> None:
        """Write the forecaster to ``path`` (:func:`okl.timeseries.files.save_forecaster`: a zip, no pickle)."""
        from okl.timeseries.files import save_forecaster

        save_forecaster(self, path)

    @classmethod
    def load(cls, path) -> "Forecaster":
        """Read a :meth:`save` file (:func:`okl.timeseries.files.load_forecaster`)."""
        from okl.timeseries.files import load_forecaster

        return load_forecaster(path, cls)

    def members(self, horizon: int = 1) -> list[str]:
        """The live members at ``horizon``, best first, as 'name(order, season, [log,] sigma, params): loss'."""
        h = horizon - 1
        order = np.argsort(self._score(horizon), kind="stable")
        return [f"{self.specs_[j][2]}(order {self.specs_[j][1]}, season {self.specs_[j][0]}, "
                f"{'log, ' if self.specs_[j][5] else ''}sigma "
                f"{self.specs_[j][3] if self.specs_[j][3] is None else round(self.specs_[j][3], 4)}, "
                f"{self.specs_[j][4]}): {self._score(horizon)[j]:.4g}" for j in order if self.alive_[h, j]]


__all__ = ["Forecaster", "LINEAR_ORDERS", "ORDERS"]
