"""Holt-Winters candidates of the Forecaster: exponential smoothing of a level, a trend and a season
of period P over a grid of smoothing constants (:class:`SmoothingBank`); the grid's tempered average
is one candidate of the Forecaster's mixture at every horizon, scored on its own record.

Why: the Forecaster's members learn a regression per horizon from the pairs they have seen; a
series whose trend and season multiply (AirlinePassengers) gives a few seasons of pairs, and the
regressions are still learning them when a state-space model has them (Holt 1957, Winters 1960;
Hyndman et al., *Forecasting with exponential smoothing*, 2008). On z = log y (while every value is
positive: a multiplicative season and a growth rate made additive, as the log views) and on y, each
candidate keeps

    l_t = alpha (z_t - s_{t-P}) + (1 - alpha) (l_{t-1} + b_{t-1})
    b_t = beta (l_t - l_{t-1}) + (1 - beta) b_{t-1}
    s_t = gamma (z_t - l_{t-1} - b_{t-1}) + (1 - gamma) s_{t-P}
    zhat_{t+h|t} = l_t + h b_t + s_{t+h-P ceil(h/P)},

initialised from its first m values, P < m <= 2P (the trend the mean seasonal difference over P,
the level the line through the first season's mean, the season the deviations from that line), its
forecasts kept within the values seen widened by half their range (the Forecaster's rule). No
constant is chosen for a series: :data:`ALPHAS` x :data:`BETAS` x :data:`GAMMAS` in the admissible
region gamma < 1 - alpha (beyond it a forecast can grow without bound; Hyndman et al. ch. 10), and
one more candidate, the one of least discounted one-step error (exponential smoothing's maximum
likelihood fit), forecasting every horizon. Each is scored at every horizon by the discounted
squared error of its own forecasts, and the bank answers their tempered averages over the
temperatures and their median (:class:`okl.timeseries.mixing.TemperedMix`): the grid's many near-equal models enter
the Forecaster's mixture as one hypothesis. Measured (docs/results/timeseries.md): each grid model a
candidate of the Forecaster's mixture instead gave AirlinePassengers MAE 9.07 / 13.36 / 18.35 at +1
/ +6 / +12 (one answer: 9.27 / 15.38 / 17.92) but held-out series lost (El Nino +6 0.99 -> 1.06,
electrical equipment 5.48 -> 5.94; one answer: 0.99, 5.51).

**Without a season** (``period`` 0: a local level, Muth 1960, or a local trend, Holt 1957; ETS(A,N,N)
and ETS(A,A,N) of Hyndman et al.) the season is 0 and the grid is :data:`ALPHAS` x (0 and
:data:`BETAS`), beta 0 with no trend (simple exponential smoothing, the forecast of an
ARIMA(0, 1, 1)), initialised from its first m >= 2 values (the level the line through their mean
at the last, the trend its slope (z_{m-1} - z_0) / (m - 1)). The Forecaster keeps one such bank
from its first members on, whatever the season: a local level (the Nile's) is fitted by neither a
season nor a kernel member (docs/results/timeseries.md, sixth round).

Cost per value: O(C (P + H |ETAS|)) for C = 2 x 27 + 1 candidates (2 x 16 + 1 without a season) and H
horizons (vectorised over the grid).
"""

from __future__ import annotations

import math

import numpy as np

from okl.timeseries.mixing import TemperedMix

#: the smoothing constants of the grid (level, trend, season)
ALPHAS = (0.1, 0.3, 0.5, 0.8)
BETAS = (0.01, 0.1, 0.3)
GAMMAS = (0.1, 0.3, 0.6)


class SmoothingBank:
    """Every (view, alpha, beta, gamma) of the grid at season ``period`` (>= 2; 0: none), forecasting
    ``horizons`` steps at each value, each horizon's errors discounted by ``discount``."""

    def __init__(self, period: int, horizons: int, discount: float, log: bool, first: int | None = None):
        self.period, self.discount = int(period), float(discount)
        if self.period:
            # the values that initialise (P + 1 .. 2P: the trend needs one seasonal difference)
            self.first = 2 * self.period if first is None else min(max(int(first), self.period + 1), 2 * self.period)
            # (the admissible region, gamma < 1 - alpha: beyond it the season takes what the level
            # should and a forecast can grow without bound; Hyndman et al. 2008, ch. 10)
            grid = [(a, b, g) for a in ALPHAS for b in BETAS for g in GAMMAS if g < 1.0 - a]
        else:
            self.first = max(int(first or 2), 2)
            grid = [(a, b, 0.0) for a in ALPHAS for b in (0.0,) + BETAS]
        views = (True, False) if log else (False,)
        self.logs_ = np.array([lg for lg in views for _ in grid], dtype=bool)
        abg = np.array([p for _ in views for p in grid], dtype=float).reshape(-1, 3)
        self.alpha_, self.beta_, self.gamma_ = abg[:, 0], abg[:, 1], abg[:, 2]
        k = len(self.logs_)
        self.level_, self.trend_ = np.zeros(k), np.zeros(k)
        self.season_ = np.zeros((k, max(self.period, 1)))  # s_{t-P+1} .. s_t: season_[:, (t + 1) % P] is s_{t+1-P}
        self.first_: list[float] = []              # the values before the two seasons that initialise
        self.n_ = 0                                 # values learned
        self.lo_, self.hi_ = math.inf, -math.inf    # the smallest and largest value learned
        self.loss_, self.weight_ = np.zeros((0, k + 1)), np.zeros((0, k + 1))
        self.made_: dict[int, np.ndarray] = {}      # origin t: (k + 1, H) forecasts of y_{t+1} .. y_{t+H}
        # (row k: the fitted candidate's, the one of least discounted one-step error at t)
        self.mix_ = TemperedMix(0, discount)         # the grid's own tempered average: the bank's answer
        self.add_horizons(horizons)

    @classmethod
    def replayed(cls, period: int, horizons: int, discount: float, log: bool, first: int, values,
                 offset: int = 0) -> "SmoothingBank":
        """A bank that learned ``values`` (the series from index ``offset``) one at a time."""
        bank = cls(period, horizons, discount, log, first)
        for i, v in enumerate(values):
            bank.learn_one(offset + i, float(v))
        return bank

    @property
    def size(self) -> int:
        return len(self.logs_)

    def add_horizons(self, H: int) -> None:
        more = H - len(self.loss_)
        if more > 0:
            self.loss_ = np.vstack([self.loss_, np.zeros((more, self.size + 1))])
            self.weight_ = np.vstack([self.weight_, np.zeros((more, self.size + 1))])
            self.made_ = {}  # (forecasts made for fewer horizons: the new ones start at the next value)
            self.mix_.add_horizons(H)

    def _z(self, y: float) -> np.ndarray:
        return np.where(self.logs_, math.log(y) if y > 0 else math.nan, y)

    def _init(self, t: int) -> None:
        """Level, trend and season at t from the 2P values ending at t."""
        P = self.period
        Z = np.stack([self._z(v) for v in self.first_], axis=1)  # (k, m), P < m <= 2P
        m = Z.shape[1]
        if not P:
            self.trend_ = np.where(self.beta_ > 0, (Z[:, -1] - Z[:, 0]) / (m - 1), 0.0)
            self.level_ = Z.mean(axis=1) + self.trend_ * (m - 1) / 2.0
            self.season_ = np.zeros((len(self.logs_), 1))
            return
        # the trend from the seasonal differences seen (a season's change over a season), the level
        # through the first season's mean at its middle, the season the deviations from that line
        self.trend_ = (Z[:, P:] - Z[:, :m - P]).mean(axis=1) / P
        at = np.arange(m) - (P - 1) / 2.0
        line = Z[:, :P].mean(axis=1)[:, None] + self.trend_[:, None] * at[None, :]
        dev = Z - line
        season = dev[:, :P].copy()
        season[:, :m - P] = 0.5 * (season[:, :m - P] + dev[:, P:])
        season -= season.mean(axis=1, keepdims=True)
        self.level_ = line[:, -1]
        # (column i holds the season of the values t with t % P == i: the first value is t - m + 1)
        self.season_ = np.roll(season, (t - m + 1) % P, axis=1)

    def learn_one(self, t: int, y: float) -> None:
        """y_t arrives (t: its index in the series): score the forecasts of it, update, forecast from t."""
        P = max(self.period, 1)
        self.n_ += 1
        self.lo_, self.hi_ = min(self.lo_, y), max(self.hi_, y)
        if self.n_ <= self.first:
            self.first_.append(float(y))
            if self.n_ == self.first:
                self._init(t)
                self.first_ = []
                self._make(t)
            return
        z = self._z(y)
        ok = np.r_[np.isfinite(z), True]
        for h in range(1, len(self.loss_) + 1):
            f = self.made_.pop(t - h, None) if h == len(self.loss_) else self.made_.get(t - h)
            if f is not None:
                e = np.where(ok, y - f[:, h - 1], 0.0)
                self.loss_[h - 1] = np.where(ok, self.discount * self.loss_[h - 1] + e * e, self.loss_[h - 1])
                self.weight_[h - 1] = np.where(ok, self.discount * self.weight_[h - 1] + 1.0, self.weight_[h - 1])
        z = np.where(ok[:-1], z, self.level_ + self.trend_)
        i = t % P
        s = self.season_[:, i]
        lvl = self.alpha_ * (z - s) + (1.0 - self.alpha_) * (self.level_ + self.trend_)
        self.season_[:, i] = self.gamma_ * (z - self.level_ - self.trend_) + (1.0 - self.gamma_) * s
        self.trend_ = self.beta_ * (lvl - self.level_) + (1.0 - self.beta_) * self.trend_
        self.level_ = lvl
        self.mix_.learn_one(t, float(y))
        self._make(t)
        for o in [o for o in self.made_ if o < t - len(self.loss_)]:
            del self.made_[o]

    def _make(self, t: int) -> None:
        """Every candidate's forecasts from t, and the grid's tempered averages of them at each horizon."""
        f = self.made_[t] = self._forecasts(t)
        for h in range(1, len(self.loss_) + 1):
            w = self.weight_[h - 1]
            if (w > 0).any():
                with np.errstate(divide="ignore", invalid="ignore"):
                    score = np.where(w > 0, self.loss_[h - 1] / w, np.inf)
                self.mix_.make(t, h, f[:, h - 1], score, w)

    def _forecasts(self, t: int) -> np.ndarray:
        H, P = len(self.loss_), max(self.period, 1)
        h = np.arange(1, H + 1)
        z = self.level_[:, None] + self.trend_[:, None] * h[None, :] + self.season_[:, (t + h) % P]
        with np.errstate(over="ignore"):
            f = np.where(self.logs_[:, None], np.exp(np.minimum(z, 700.0)), z)
        # within the values seen widened by half their range (the Forecaster's rule for every output)
        pad = 0.5 * (self.hi_ - self.lo_)
        f = np.clip(f, self.lo_ - pad, self.hi_ + pad)
        # the fitted candidate: least one-step error (exponential smoothing's maximum likelihood,
        # Hyndman et al. 2008), its forecasts at every horizon scored as a candidate of their own
        w = self.weight_[0, :-1]
        fit = int(np.argmin(np.where(w > 0, self.loss_[0, :-1] / np.where(w > 0, w, 1.0), np.inf))) if (w > 0).any() else 0
        return np.vstack([f, f[fit]])

    def candidates(self, t: int, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """(forecasts of y_{t+h} made at t, discounted mean squared errors, counts, log flags) of the
        grid's candidates scored at least once at horizon h; None when none."""
        f = self.made_.get(t)
        if f is None or h > len(self.loss_):
            return None
        w = self.weight_[h - 1, :-1]
        ok = w > 0
        if not ok.any():
            return None
        return f[:-1][ok, h - 1], self.loss_[h - 1, :-1][ok] / w[ok], w[ok], self.logs_[ok]

    def candidate(self, t: int, h: int) -> tuple[float, float, float] | None:
        """The bank's answer as one candidate of the Forecaster's mixture: (its forecast of y_{t+h}
        made at t, the discounted mean squared error and count of its answers at h); None before it
        has a scored answer. The answer is the grid's tempered averages over the temperatures and
        its median (:class:`okl.timeseries.mixing.TemperedMix`, as the Forecaster's own): the grid's
        many near-equal candidates enter the Forecaster's mixture as one hypothesis, scored on the
        record of its leading combination."""
        if h > len(self.loss_):
            return None
        f = self.mix_.forecast(t, h)
        w = self.mix_.weight_[h - 1]
        if f is None or not (w > 0).any():
            # (before the averages have a record, none: the grid's leader on its first few errors
            # instead gave AirlinePassengers +12 18.59 against 17.92)
            return None
        score = np.where(w > 0, self.mix_.loss_[h - 1] / np.where(w > 0, w, 1.0), np.inf)
        k = int(np.argmin(score))
        return f, float(score[k]), float(w[k])

    def drop_log(self) -> None:
        """A value <= 0 arrived: the log candidates end (never scored again, never mixed)."""
        raw = ~self.logs_
        for name in ("logs_", "alpha_", "beta_", "gamma_", "level_", "trend_"):
            setattr(self, name, getattr(self, name)[raw])
        self.season_ = self.season_[raw]
        keep = np.r_[raw, True]
        self.loss_, self.weight_ = self.loss_[:, keep], self.weight_[:, keep]
        self.made_ = {o: f[keep] for o, f in self.made_.items()}

    def to_dict(self) -> dict:
        return {"period": self.period, "first": self.first, "logs": self.logs_.tolist(), "alpha": self.alpha_.tolist(),
                "beta": self.beta_.tolist(), "gamma": self.gamma_.tolist(), "level": self.level_.tolist(),
                "trend": self.trend_.tolist(), "season": self.season_.tolist(), "buffer": self.first_, "n": self.n_, "range": [self.lo_, self.hi_],
                "loss": self.loss_.tolist(), "weight": self.weight_.tolist(),
                "made": [[o, f.tolist()] for o, f in self.made_.items()], "mix": self.mix_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict, discount: float, where: str = "smoothing") -> "SmoothingBank":
        try:
            logs = np.array(d["logs"], dtype=bool)
            season = np.array(d["season"], dtype=float)
            k, P = len(logs), int(d["period"])
            if season.shape != (k, max(P, 1)) or P < 0 or P == 1:  # (checked before a bank of P columns is made)
                raise ValueError(f"a season of shape {season.shape} for {k} candidates of period {P} (0 or >= 2)")
            bank = cls(P, 0, discount, False, int(d["first"]))
            bank.logs_ = logs
            bank.alpha_, bank.beta_, bank.gamma_ = (np.array(d[n], dtype=float).reshape(k) for n in ("alpha", "beta", "gamma"))
            bank.level_, bank.trend_ = (np.array(d[n], dtype=float).reshape(k) for n in ("level", "trend"))
            bank.season_ = season
            bank.first_, bank.n_ = [float(v) for v in d["buffer"]], int(d["n"])
            bank.lo_, bank.hi_ = (float(v) for v in d["range"])
            bank.loss_ = np.array(d["loss"], dtype=float).reshape(-1, k + 1)
            bank.weight_ = np.array(d["weight"], dtype=float).reshape(-1, k + 1)
            H = len(bank.loss_)
            bank.made_ = {int(o): np.array(f, dtype=float).reshape(k + 1, H) for o, f in d["made"]}
            bank.mix_ = TemperedMix.from_dict(d["mix"], discount, f"{where}: mix")
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if bank.loss_.shape != bank.weight_.shape:
            raise ValueError(f"{where}: losses and counts disagree in shape")
        return bank


__all__ = ["ALPHAS", "BETAS", "GAMMAS", "SmoothingBank"]
