"""Forecaster: River's forecaster protocol (``learn_one(y, x=None)``, ``forecast(horizon, xs=None)``)
over okl's learners, every horizon forecast directly, each forecast with a calibrated interval.

**Direct forecasts.** Horizon h has its own models, each learning the pair (embedding at time
u, y_{u+h}) when y_{u+h} arrives (KAFBOX's k-step protocol: a label delay of h - 1 rounds). A
recursive forecast (the one-step model fed its own forecasts) compounds its errors on chaotic
series; a direct model learns the h-step map itself. A horizon first asked for gets its models
then, trained on the history kept (``memory`` values), so ``forecast(H)`` always answers H values.

**Recursive forecasts as a candidate.** The one-step leader fed its own forecasts gives a path to
every horizon; each horizon > 1 weighs it with the direct members by the same discounted error of
its (true, made-at-the-origin) forecasts. Measured with one KRLS-T at the best grid cell, 10 steps
ahead: recursive -25.06 dB against direct -31.89 on Lorenz (errors compound on the chaotic series),
-35.24 against -28.47 on Mackey-Glass 30 (its one-step map is learned to -40 dB): neither wins
everywhere, so both are candidates (docs/results/timeseries.md). Not with exogenous values.

**Members and the mixture** (``learner="auto"``): at each horizon the members of
:func:`okl.ensemble.pool.series_pool` (KRLS-T over 3 widths x 3 noise levels) at each candidate
order (``orders``; or the ``order`` given), on the series' values and, when the series has a
season, on its seasonal differences y_t - y_{t-P} (the target then y_{u+h} - y_{u+h-P ceil(h/P)}:
a trend and a seasonal pattern the kernel cannot extrapolate are carried by the differencing).
The forecast of horizon h is the member with the lowest discounted squared error of its own
honest h-step predictions (each pair predicted before it is learned; discount ``discount`` per
round): follow the leader over a grid, so the width and the noise level are chosen by the stream.
After ``burn`` rounds a member whose discounted loss exceeds ``drop`` (10) times the leader's is
dropped (10 dB behind over the discount's window of about 100 rounds: measured on Lorenz and Santa
Fe, no member that far behind led again; the ``keep`` best are always kept). Any other ``learner`` name: that
learner (``loss="squared"``, its defaults, with the ``params`` given) at each horizon and order.

**Scale and season from the stream.** Members are built after ``warmup`` values: the width unit is
std(series) sqrt(order) (the typical distance of two embedded rows; std of the seasonal differences
for those members); the season P is the lag 2..n/3 with the largest autocorrelation of the first
differences when it exceeds 2 / sqrt(n) and :data:`SEASON_CORRELATION` 0.5 (``period=None``; 0: none). At 2, 4, 8 and 16 times
``warmup`` values the scale is measured again, and the members are rebuilt on the kept history when
it moved by more than a factor sqrt 2 (a width grid step) or a season appeared.

**Intervals**: one :class:`okl.intervals.ConformalHead` per horizon, fed the errors of the
forecasts the Forecaster answered h rounds earlier (what a user got, not a refit's):
``forecast_interval(horizon, alpha)``. Lorenz, 90 %: coverage 88.5 % one step ahead and 70.7 % ten
steps ahead when the head was fed the members' refit errors instead (docs/results/timeseries.md).

Cost per learned value: O(H x members x M^2) for KRLS-T members of budget M (H horizons).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from okl.intervals import ConformalHead, Interval

#: candidate orders when ``order`` is None (a doubling grid around the embeddings the literature
#: uses: 6 for Lorenz, 7 for Mackey-Glass and Santa Fe)
ORDERS = (6, 12)
SEASON_CORRELATION = 0.5
#: a season is a lag where the autocorrelation of the differences peaks above this: more than half of
#: a difference's variance repeats a period later (measured peaks: AirlinePassengers 0.62-0.80 at 12,
#: Santa Fe 0.67-0.83 at 7-8, Mackey-Glass 30 0.56-0.60 at 18 in its first 128 values; Lorenz 0.29-0.44,
#: a quasi-period that seasonal members did not help: -36.9 dB one step ahead with them, -56.2 without)


class Forecaster:
    """Forecasts of a univariate series at every horizon (module docstring).

    Parameters
    ----------
    learner : str, default "auto"
        "auto": the series pool's mixture; else a registered regressor's name.
    order : int or None, default None
        The embedding order; None: each of :data:`ORDERS` in the mixture.
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
        self.drop = float(drop)
        if not 0.0 < float(discount) <= 1.0:
            raise ValueError(f"discount must be in (0, 1], got {discount!r}")
        self.learner, self.order, self.period, self.warmup = learner, order, period, int(warmup)
        self.burn, self.keep, self.discount, self.memory = int(burn), int(keep), float(discount), int(memory)
        self.params = dict(params or {})
        self.y_: list[float] = []      # the kept values (the last ``memory``), y_[i] is value offset_ + i
        self.x_: list[np.ndarray | None] = []
        self.offset_ = 0
        self.n_ = 0                    # values learned
        self.specs_: list[tuple] = []  # per member: (season, order, name, sigma or None, params)
        self.models_: list[list] = []  # [h - 1][member]
        self.loss_ = np.zeros((0, 0))
        self.alive_ = np.zeros((0, 0), dtype=bool)
        self.heads_: list[ConformalHead] = []
        self.rounds_ = 0               # rounds since the members were built
        self.rec_loss_ = np.zeros(0)   # [h - 1]: the recursive path's discounted squared error
        self.paths_: list[tuple[int, list[float]]] = []  # (origin t, the recursive forecasts of t + 1 ..)
        self.issued_: list[tuple[int, list[float]]] = []  # (origin t, what forecast() answered at t)
        self.scale_ = (0.0, 0.0, 0)    # (std of values, std of seasonal differences, season) they were built with
        self.exog_keys_: list | None = None

    # ---- the series ---------------------------------------------------------------------------

    def _value(self, t: int) -> float:
        return self.y_[t - self.offset_] if t >= self.offset_ else 0.0

    def _row(self, season: int, order: int, u: int, h: int) -> np.ndarray:
        """Embedding at time u for horizon h: the last ``order`` values (seasonal differences when
        season > 0), zero before the start, then the exogenous values at u + h."""
        row = np.zeros(order)
        for k in range(min(order, u + 1)):
            v = self._value(u - k)
            if season:
                v = v - self._value(u - k - season) if u - k - season >= 0 else 0.0
            row[k] = v
        if self.exog_keys_:
            x = self.x_[u + h - self.offset_] if u + h - self.offset_ < len(self.x_) else None
            row = np.concatenate([row, x if x is not None else np.zeros(len(self.exog_keys_))])
        return row

    def _base(self, season: int, u: int, h: int) -> float:
        """What a seasonal member's target is relative to: y at the last time <= u in the season of u + h."""
        return self._value(u + h - season * math.ceil(h / season)) if season else 0.0

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

    def _measure(self) -> tuple[float, float, int]:
        y = np.asarray(self.y_)
        period = self.period
        if period is None:  # (a season once found is kept: the members are not rebuilt for its jitter)
            period = self.scale_[2] or detect_period(y)
        sd = float(np.std(y)) or 1.0
        sd_season = float(np.std(y[period:] - y[:-period])) if period and len(y) > period else 0.0
        return sd, sd_season or sd, int(period)

    def _build(self) -> None:
        """(Re)build every member at every horizon and replay the kept history."""
        from okl.ensemble.pool import series_pool

        sd, sd_season, period = self.scale_ = self._measure()
        orders = (self.order,) if self.order else ORDERS
        seasons = (0, period) if period else (0,)
        pool = series_pool() if self.learner == "auto" else [(self.learner, None, self.params)]
        self.specs_ = []
        for season in seasons:
            for order in orders:
                unit = (sd_season if season else sd) * math.sqrt(order)
                for name, width, params in pool:
                    self.specs_.append((season, order, name, None if width is None else width * unit, params))
        H = max(len(self.models_), 1)
        self.models_, self.heads_ = [], []
        self.loss_ = np.zeros((0, len(self.specs_)))
        self.alive_ = np.zeros((0, len(self.specs_)), dtype=bool)
        self.rounds_ = 0
        self.rec_loss_, self.paths_, self.issued_ = np.zeros(0), [], []
        self._add_horizons(H)

    def _make(self, spec):
        from okl.kernels import RBF, Polynomial
        from okl.runtime.base import make

        season, order, name, sigma, params = spec
        kw = {"loss": "squared", **params}
        if kw.get("kernel") == "affine":  # Bayesian linear regression with an intercept, inputs in width units
            kw["kernel"] = Polynomial(degree=1, scale=1.0 / sigma ** 2, offset=1.0)
            kw["budget"] = max(kw.get("budget", 0), order + 2 + len(self.exog_keys_ or ()))
        elif sigma is not None:
            kw["kernel"] = RBF(sigma=sigma)
        return make(name, **kw)

    def _add_horizons(self, H: int) -> None:
        """Models for horizons len(models_) + 1 .. H, trained on the kept history."""
        first = len(self.models_)
        for _ in range(first, H):
            self.models_.append([self._make(spec) for spec in self.specs_])
            self.heads_.append(ConformalHead())
        k = len(self.specs_)
        self.rec_loss_ = np.r_[self.rec_loss_, np.zeros(H - first)]
        self.loss_ = np.vstack([self.loss_, np.zeros((H - first, k))])
        self.alive_ = np.vstack([self.alive_, np.ones((H - first, k), dtype=bool)])
        for t in range(self.offset_, self.offset_ + len(self.y_)):
            self._learn_at(t, range(first + 1, H + 1))

    def _learn_at(self, t: int, horizons) -> None:
        y = self._value(t)
        for h in horizons:
            u = t - h
            if u < self.offset_ - 1 and u < 0:
                continue
            if u < 0:
                continue
            models, loss, alive = self.models_[h - 1], self.loss_[h - 1], self.alive_[h - 1]
            lead = int(np.argmin(np.where(alive, loss, np.inf)))
            rows: dict = {}
            lead_pred = math.nan
            for j, spec in enumerate(self.specs_):
                if not alive[j]:
                    continue
                season, order = spec[0], spec[1]
                x = rows.get((season, order))
                if x is None:
                    x = rows[(season, order)] = self._row(season, order, u, h)
                if season and u + h - season * math.ceil(h / season) < 0:
                    continue  # (no value to difference from yet)
                base = self._base(season, u, h)
                m = models[j]
                p = m.predict_one(x) if m.n_seen_ else 0.0
                if j == lead:
                    lead_pred = p + base
                e = y - base - p
                loss[j] = self.discount * loss[j] + e * e
                m.learn_one(x, y - base)
            issued = self._issued(u, h)  # the forecast answered at u: the head scores what users got
            if issued is None:
                rec = self._recursive(u, h)
                issued = lead_pred if rec is None else rec
            self.heads_[h - 1].update(issued, y)

    def _prune(self) -> None:
        """Drop, at every horizon, the members whose discounted loss exceeds ``drop`` times the
        leader's, but the ``keep`` best."""
        for h in range(len(self.models_)):
            loss = np.where(self.alive_[h], self.loss_[h], np.inf)
            order = np.argsort(loss, kind="stable")
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
        if n in (2 * self.warmup, 4 * self.warmup, 8 * self.warmup, 16 * self.warmup):
            sd, sd_season, period = self._measure()
            old = self.scale_
            if period != old[2] or not (0.5 ** 0.5 <= sd / old[0] <= 2 ** 0.5) or (
                    period and not (0.5 ** 0.5 <= sd_season / old[1] <= 2 ** 0.5)):
                self._build()
                return self
        self._learn_at(n - 1, range(1, len(self.models_) + 1))
        self.rounds_ += 1
        if self.rounds_ >= self.burn:
            self._prune()
        if not self.exog_keys_:
            self._recursive_step(n - 1)
        return self

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
            if h < len(path):
                kept.append((o, path))
        H = len(self.models_)
        added = 0
        # a path is kept within the values seen widened by half their range: an iterated model
        # (an affine member's above all) can leave the series' range, and one such path is enough
        # to undo a horizon's score before its discounted error deselects it
        lo, hi = min(self.y_), max(self.y_)
        lo, hi = lo - 0.5 * (hi - lo), hi + 0.5 * (hi - lo)
        try:
            for _ in range(H):
                self.y_.append(min(max(self._predict(1, t + added, direct=True), lo), hi))
                self.x_.append(None)
                added += 1
            path = self.y_[len(self.y_) - added:]
        finally:
            del self.y_[len(self.y_) - added:]
            del self.x_[len(self.x_) - added:]
        self.paths_ = kept + [(t, path)]
        self.issued_ = [(o, f) for o, f in self.issued_ if t - o < len(f)] + [
            (t, [self._predict(h) for h in range(1, H + 1)])]

    def _issued(self, t: int, h: int) -> float | None:
        for o, f in self.issued_:
            if o == t and h <= len(f):
                return float(f[h - 1])
        return None

    def _recursive(self, t: int, h: int) -> float | None:
        """The recursive forecast of y_{t+h} made at t, when it leads horizon h; else None."""
        if h < 2 or h > len(self.rec_loss_) or not 0.0 < self.rec_loss_[h - 1] < float(
                np.min(np.where(self.alive_[h - 1], self.loss_[h - 1], np.inf))):
            return None
        for o, path in self.paths_:
            if o == t and h <= len(path):
                return float(path[h - 1])
        return None

    def _predict(self, h: int, t: int | None = None, direct: bool = False) -> float:
        t = self.n_ - 1 if t is None else t
        if not direct:
            rec = self._recursive(t, h)
            if rec is not None:
                return rec
        loss, alive = self.loss_[h - 1], self.alive_[h - 1]
        j = int(np.argmin(np.where(alive, loss, np.inf)))
        season, order = self.specs_[j][:2]
        m = self.models_[h - 1][j]
        p = m.predict_one(self._row(season, order, t, h)) if m.n_seen_ else 0.0
        return float(p + self._base(season, t, h))

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
        """Write the forecaster to ``path`` (:func:`save_forecaster`: a zip, no pickle)."""
        save_forecaster(self, path)

    @classmethod
    def load(cls, path) -> "Forecaster":
        """Read a :meth:`save` file (:func:`load_forecaster`)."""
        return load_forecaster(path)

    def members(self, horizon: int = 1) -> list[str]:
        """The live members at ``horizon``, best first, as 'name(order, season, sigma, params): loss'."""
        h = horizon - 1
        order = np.argsort(np.where(self.alive_[h], self.loss_[h], np.inf), kind="stable")
        return [f"{self.specs_[j][2]}(order {self.specs_[j][1]}, season {self.specs_[j][0]}, sigma "
                f"{self.specs_[j][3] if self.specs_[j][3] is None else round(self.specs_[j][3], 4)}, "
                f"{self.specs_[j][4]}): {self.loss_[h, j]:.4g}" for j in order if self.alive_[h, j]]


def save_forecaster(fc: Forecaster, path) -> None:
    """``fc`` as one zip (no pickle): ``forecaster.json`` (hyperparameters, the kept values, the
    mixture's losses, the interval heads) and one okl model file per live member, ``h<h>_m<j>.npz``;
    written beside ``path`` and renamed over it (a crash leaves the previous file whole)."""
    import json
    import os
    import tempfile
    import zipfile

    from okl._files import write_atomically

    meta = {"format": "okl-forecaster", "version": 1,
            "params": {"learner": fc.learner, "order": fc.order, "period": fc.period, "warmup": fc.warmup,
                       "burn": fc.burn, "keep": fc.keep, "drop": fc.drop, "discount": fc.discount,
                       "memory": fc.memory, "params": fc.params},
            "y": fc.y_, "x": [None if v is None else v.tolist() for v in fc.x_], "offset": fc.offset_, "n": fc.n_,
            "specs": [list(sp) for sp in fc.specs_], "loss": fc.loss_.tolist(), "alive": fc.alive_.tolist(),
            "heads": [hd.to_dict() for hd in fc.heads_], "rounds": fc.rounds_, "scale": list(fc.scale_),
            "rec_loss": fc.rec_loss_.tolist(), "paths": [[o, list(p)] for o, p in fc.paths_],
            "issued": [[o, list(p)] for o, p in fc.issued_],
            "exog_keys": fc.exog_keys_}
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for h, models in enumerate(fc.models_):
            for j, m in enumerate(models):
                if m is not None:
                    name = f"h{h + 1}_m{j}.npz"
                    m.save(os.path.join(tmp, name))
                    files.append(name)

        def write(fh):
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
                zf.writestr("forecaster.json", json.dumps(meta))
                for name in files:
                    zf.write(os.path.join(tmp, name), name)

        write_atomically(path, write)


def load_forecaster(path) -> Forecaster:
    """The :class:`Forecaster` :func:`save_forecaster` wrote; a malformed file raises ValueError
    naming the file and the field (each member is checked by :meth:`okl.runtime.base.Learner.load`)."""
    import json
    import os
    import shutil
    import tempfile
    import zipfile

    from okl.runtime.base import Learner

    path = str(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{path}: not an okl forecaster file ({exc})") from None
    with zf:
        try:
            meta = json.loads(zf.read("forecaster.json"))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{path}: no readable forecaster.json ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != "okl-forecaster":
            raise ValueError(f"{path}: forecaster.json is not an okl forecaster's header")
        try:
            fc = Forecaster(**meta["params"])
            fc.y_ = [float(v) for v in meta["y"]]
            fc.x_ = [None if v is None else np.array(v, dtype=float) for v in meta["x"]]
            fc.offset_, fc.n_, fc.rounds_ = int(meta["offset"]), int(meta["n"]), int(meta["rounds"])
            fc.specs_ = [(int(a), int(b), str(c), None if d is None else float(d), dict(e))
                         for a, b, c, d, e in meta["specs"]]
            k = len(fc.specs_)
            fc.loss_ = np.array(meta["loss"], dtype=float).reshape(-1, k)
            fc.alive_ = np.array(meta["alive"], dtype=bool).reshape(-1, k)
            fc.heads_ = [ConformalHead.from_dict(d, f"{path}: head {i + 1}") for i, d in enumerate(meta["heads"])]
            fc.scale_ = (float(meta["scale"][0]), float(meta["scale"][1]), int(meta["scale"][2]))
            fc.exog_keys_ = meta["exog_keys"]
            fc.rec_loss_ = np.array(meta["rec_loss"], dtype=float)
            fc.paths_ = [(int(o), [float(v) for v in p]) for o, p in meta["paths"]]
            fc.issued_ = [(int(o), [float(v) for v in p]) for o, p in meta["issued"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: forecaster.json: {exc}") from None
        if len(fc.y_) != len(fc.x_) or fc.loss_.shape != fc.alive_.shape or not (
                len(fc.heads_) == len(fc.loss_) == len(fc.rec_loss_)):
            raise ValueError(f"{path}: forecaster.json: values, losses and heads disagree in length")
        fc.models_ = []
        tmp = tempfile.mkdtemp()
        for h in range(len(fc.loss_)):
            row = []
            for j in range(k):
                if fc.alive_[h, j]:
                    name = f"h{h + 1}_m{j}.npz"
                    try:
                        data = zf.read(name)
                    except KeyError:
                        raise ValueError(f"{path}: member file {name} is missing") from None
                    member = os.path.join(tmp, name)
                    with open(member, "wb") as fh:
                        fh.write(data)
                    try:
                        row.append(Learner.load(member))
                    except Exception as exc:
                        raise ValueError(f"{path}: {name}: {exc}") from None
                else:
                    row.append(None)
            fc.models_.append(row)
        shutil.rmtree(tmp, ignore_errors=True)
    return fc


def detect_period(y: np.ndarray) -> int:
    """The season of a series: the lag P in 2 .. n/3 where the autocorrelation of the first
    differences has its highest peak (above its neighbours: a smooth series' differences decay from
    lag 0 without one), when that exceeds max(2 / sqrt(n), :data:`SEASON_CORRELATION`); else 0."""
    d = np.diff(np.asarray(y, dtype=np.float64))
    n = len(d)
    if n < 12:
        return 0
    d = d - d.mean()
    den = float(d @ d)
    if den <= 0.0:
        return 0
    r = np.array([float(d[lag:] @ d[:n - lag]) / den for lag in range(n // 3 + 2)])
    best, at = -1.0, 0
    for lag in range(2, n // 3 + 1):
        if r[lag - 1] < r[lag] >= r[lag + 1] and r[lag] > best:  # a peak, not the decay from lag 0
            best, at = r[lag], lag
    return at if best > max(2.0 / math.sqrt(n), SEASON_CORRELATION) else 0


__all__ = ["Forecaster", "ORDERS", "detect_period", "load_forecaster", "save_forecaster"]
