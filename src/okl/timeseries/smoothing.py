"""Exponential smoothing over a grid of settings (:class:`SmoothingGrid`), a member family of
:class:`okl.timeseries.Forecaster`.

Holt-Winters' method with a damped trend (Holt 1957, Winters 1960, Gardner & McKenzie 1985; the
error-correction form of Hyndman & Athanasopoulos, *Forecasting: Principles and Practice*, 7.3 and
8.3), for every setting of the grid at once. With level l, trend b, damping phi and season s of
period P (none when P = 0), y_t arriving:

    additive season:        l_t = a (y_t - s_{t-P}) + (1 - a)(l_{t-1} + phi b_{t-1})
                            s_t = g (y_t - l_{t-1} - phi b_{t-1}) + (1 - g) s_{t-P}
    multiplicative season:  l_t = a y_t / s_{t-P} + (1 - a)(l_{t-1} + phi b_{t-1})
                            s_t = g y_t / (l_{t-1} + phi b_{t-1}) + (1 - g) s_{t-P}
    trend:                  b_t = c (l_t - l_{t-1}) + (1 - c) phi b_{t-1}
    forecast of y_{t+h}:    (l_t + (phi + ... + phi^h) b_t) (+ or x) s_{t+h-P ceil(h/P)}

The multiplicative settings live while every value is positive. Why a family beside the kernel
and linear members: the members of a regression learn a season from pairs, one pair a round, and
forecast poorly for the first seasons; the smoothing recursions start from a classical
decomposition of the first two seasons (level and trend from their means, the season from the
values over the line through them) and forecast a seasonal pattern from then on. No setting is
chosen here: the Forecaster scores each setting's own forecasts at each horizon with its members.

The grid (:data:`ALPHAS` x :data:`BETAS` x :data:`GAMMAS` x :data:`PHIS`, additive and
multiplicative) spans the ranges of the literature's fitted values rather than any one series':
level weights from slow to fast, a slow to moderate trend, a slow to fast season, a trend kept or
damped. Cost per value: O(K) to learn and O(K H) to forecast H steps, K settings (vectorised).
"""

from __future__ import annotations

import math

import numpy as np

#: the smoothing weights of the level, the trend and the season, and the trend's damping
ALPHAS = (0.1, 0.3, 0.5, 0.7, 0.9)
BETAS = (0.01, 0.1, 0.3)
GAMMAS = (0.05, 0.2, 0.5)
PHIS = (1.0, 0.9)


class SmoothingGrid:
    """Holt-Winters' recursions (module docstring) for every setting of the grid, period ``period``
    (0: Holt's linear trend, no season). ``multiplicative``: also the multiplicative settings (they
    end with the first value <= 0). :meth:`learn_one` takes the series from its start; the settings
    forecast once ``need`` values have been seen (two seasons, or two values without one)."""

    def __init__(self, period: int = 0, multiplicative: bool = True):
        self.period, self.multiplicative = int(period), bool(multiplicative)
        kinds = (False, True) if (multiplicative and self.period) else (False,)
        grid = [(a, b, g if self.period else 0.0, p, m) for m in kinds for a in ALPHAS for b in BETAS
                for g in (GAMMAS if self.period else (0.0,)) for p in PHIS]
        self.settings = np.array(grid, dtype=float)  # columns: alpha, beta, gamma, phi, multiplicative
        self.n_ = 0
        self.first_: list[float] = []
        self.level_ = np.zeros(0)
        self.trend_ = np.zeros(0)
        self.season_ = np.zeros((0, 0))
        self.live_ = np.ones(len(grid), dtype=bool)

    @property
    def need(self) -> int:
        return 2 * self.period if self.period else 2

    def __len__(self) -> int:
        return len(self.settings)

    def describe(self, j: int) -> str:
        a, b, g, p, m = self.settings[j]
        kind = ("multiplicative" if m else "additive") + f" season {self.period}" if self.period else "no season"
        return f"smoothing(alpha {a:g}, beta {b:g}, gamma {g:g}, phi {p:g}, {kind})"

    def _start(self) -> None:
        """Level, trend and season from the first two seasons (or values): the classical decomposition."""
        y = np.asarray(self.first_)
        K = len(self.settings)
        if not self.period:
            self.level_, self.trend_ = np.full(K, y[1]), np.full(K, y[1] - y[0])
            self.season_ = np.zeros((K, 0))
            return
        P = self.period
        m1, m2 = float(np.mean(y[:P])), float(np.mean(y[P:]))
        slope = (m2 - m1) / P
        line = m1 + slope * (np.arange(2 * P) - (P - 1) / 2)   # the trend line through the seasons' means
        add = (y - line).reshape(2, P).mean(axis=0)
        add -= add.mean()
        with np.errstate(divide="ignore", invalid="ignore"):
            mul = (y / line).reshape(2, P).mean(axis=0)
            mul /= mul.mean()
        if np.any(line <= 0) or not np.all(np.isfinite(mul)):
            self.live_ &= self.settings[:, 4] == 0.0
            mul = np.ones(P)
        # phase i of the season is the time t with t % P == i; the level sits at the last value, 2P - 1
        self.season_ = np.where(self.settings[:, 4:5] == 1.0, mul[None, :], add[None, :])
        self.level_ = np.full(K, m2 + slope * (P - 1) / 2)
        self.trend_ = np.full(K, slope)

    def learn_one(self, y: float) -> None:
        """The next value y_t (t = the values seen so far)."""
        t = self.n_
        self.n_ += 1
        if y <= 0.0:
            self.live_ &= self.settings[:, 4] == 0.0
        if t < self.need:
            self.first_.append(float(y))
            if t + 1 == self.need:
                self._start()
            return
        a, c, g, phi, mul = self.settings.T
        mul = mul == 1.0
        prior = self.level_ + phi * self.trend_
        if self.period:
            i = t % self.period
            s = self.season_[:, i]
            with np.errstate(divide="ignore", invalid="ignore"):
                level = np.where(mul, a * y / s, a * (y - s)) + (1 - a) * prior
                self.season_[:, i] = np.where(mul, g * y / prior, g * (y - prior)) + (1 - g) * s
        else:
            level = a * y + (1 - a) * prior
        self.trend_ = c * (level - self.level_) + (1 - c) * phi * self.trend_
        self.level_ = level

    def forecast(self, H: int) -> np.ndarray:
        """[K, H]: every setting's forecasts of the next H values (NaN before it forecasts, or ended)."""
        K = len(self.settings)
        if self.n_ < self.need:
            return np.full((K, H), math.nan)
        phi = self.settings[:, 3:4]
        steps = np.cumsum(phi ** np.arange(1, H + 1)[None, :], axis=1)  # phi + ... + phi^h
        out = self.level_[:, None] + steps * self.trend_[:, None]
        if self.period:
            s = self.season_[:, (self.n_ - 1 + np.arange(1, H + 1)) % self.period]
            out = np.where(self.settings[:, 4:5] == 1.0, out * s, out + s)
        out[~self.live_] = math.nan
        out[~np.isfinite(out)] = math.nan
        return out

    def to_dict(self) -> dict:
        return {"period": self.period, "multiplicative": self.multiplicative,
                "n": self.n_, "first": list(self.first_), "level": self.level_.tolist(), "trend": self.trend_.tolist(),
                "season": self.season_.tolist(), "live": self.live_.tolist()}

    @classmethod
    def from_dict(cls, d: dict, where: str = "smoothing") -> "SmoothingGrid":
        try:
            g = cls(int(d["period"]), bool(d["multiplicative"]))
            g.n_, g.first_ = int(d["n"]), [float(v) for v in d["first"]]
            K = len(g.settings)
            g.live_ = np.array(d["live"], dtype=bool).reshape(K)
            if g.n_ >= g.need:
                g.level_ = np.array(d["level"], dtype=float).reshape(K)
                g.trend_ = np.array(d["trend"], dtype=float).reshape(K)
                g.season_ = np.array(d["season"], dtype=float).reshape(K, g.period)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        return g


class SmoothingFamily:
    """A :class:`SmoothingGrid` as a candidate family of the Forecaster: each setting's forecasts of
    horizons 1 .. ``horizons`` made at every origin, kept until their values arrive, and scored as
    the Forecaster's members are (a ``discount``-ed mean squared error of the forecasts each setting
    made h rounds before its value, per horizon h). Cost per value: O(K H)."""

    def __init__(self, period: int, multiplicative: bool, horizons: int, discount: float):
        self.grid = SmoothingGrid(period, multiplicative)
        self.horizons, self.discount = int(horizons), float(discount)
        K = len(self.grid)
        self.loss_ = np.zeros((self.horizons, K))
        self.weight_ = np.zeros((self.horizons, K))
        self.made_: list[tuple[int, np.ndarray]] = []  # (origin t, [K, horizons] forecasts of t + 1 ..)

    def learn_one(self, t: int, y: float) -> None:
        """y_t arrives: score the forecasts of it, learn it, forecast from t."""
        kept = []
        for o, F in self.made_:
            h = t - o
            if 1 <= h <= self.horizons:
                e = y - F[:, h - 1]
                ok = np.isfinite(e)
                self.loss_[h - 1, ok] = self.discount * self.loss_[h - 1, ok] + e[ok] ** 2
                self.weight_[h - 1, ok] = self.discount * self.weight_[h - 1, ok] + 1.0
            if h < self.horizons:
                kept.append((o, F))
        self.grid.learn_one(y)
        self.made_ = kept + [(t, self.grid.forecast(self.horizons))]

    def score(self, h: int) -> np.ndarray:
        """Each setting's discounted mean squared error at horizon h (inf: none yet, or ended)."""
        w = self.weight_[h - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.grid.live_ & (w > 0), self.loss_[h - 1] / w, np.inf)

    def forecasts(self, t: int, h: int) -> np.ndarray | None:
        """Every setting's forecast of y_{t+h} made at t (None: not kept)."""
        for o, F in self.made_:
            if o == t and h <= self.horizons:
                return F[:, h - 1]
        return None

    def to_dict(self) -> dict:
        return {"grid": self.grid.to_dict(), "horizons": self.horizons, "discount": self.discount,
                "loss": self.loss_.tolist(), "weight": self.weight_.tolist(),
                "made": [[o, [[v if math.isfinite(v) else None for v in row] for row in F]] for o, F in self.made_]}

    @classmethod
    def from_dict(cls, d: dict, where: str = "smoothing") -> "SmoothingFamily":
        try:
            grid = SmoothingGrid.from_dict(d["grid"], where)
            f = cls(grid.period, grid.multiplicative, int(d["horizons"]), float(d["discount"]))
            f.grid = grid
            K = len(grid)
            f.loss_ = np.array(d["loss"], dtype=float).reshape(f.horizons, K)
            f.weight_ = np.array(d["weight"], dtype=float).reshape(f.horizons, K)
            f.made_ = [(int(o), np.array([[math.nan if v is None else float(v) for v in row] for row in F],
                                         dtype=float).reshape(K, f.horizons)) for o, F in d["made"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        return f


__all__ = ["ALPHAS", "BETAS", "GAMMAS", "PHIS", "SmoothingFamily", "SmoothingGrid"]
