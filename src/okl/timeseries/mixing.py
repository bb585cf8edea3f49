"""The Forecaster's answer at each horizon: tempered-likelihood averages of its candidates, the
temperature chosen by the averages' own errors (:class:`TemperedMix`).

Each candidate j (a direct member, or the recursive path) has a discounted mean squared error s_j
of the forecasts it made h rounds before their values, over a discounted count W_j of them. Read as
a Gaussian likelihood with the leader's error as the noise variance, the posterior weight of j is
exp(-W_j (s_j / s_min - 1) / 2) (Bayesian model averaging); raised to a power eta <= 1 it is the
tempered ("generalised", "safe") posterior of Grunwald and van Ommen (2017), which stays robust when
no candidate is the true model (a kernel member on a chaotic series, a regression on a season):

    f_eta = sum_j w_j f_j / sum_j w_j,   w_j = exp(-eta W_j (s_j / s_min - 1) / 2).

eta -> infinity is follow-the-leader (the Forecaster's first rule), eta -> 0 the plain mean. No eta
is set per series: each of :data:`ETAS` forecasts at every origin and is scored like a member (its
own discounted mean squared error s_k of its forecasts at that horizon, over a discounted count
W_k), and the answer is the temperatures' own Bayesian average, the same rule at eta 1 over them:

    f = sum_k v_k f_{eta_k} / sum_k v_k,   v_k = exp(-W_k (s_k / s_min - 1) / 2)

(:data:`ETAS`'s middle before any score). A hyperparameter averaged by its own record, not chosen:
as MetaGrad weighs its learning rates (van Erven and Koolen, 2016), the answer moves with the
evidence where one temperature leads by far (a chaotic series) and averages where the temperatures'
errors are within noise of each other, where following their leader switched on that noise (on ten
held-out series it was behind the temperatures' plain mean in 26 of 30 cells;
docs/results/timeseries.md, seventh round). Cost per value: O(H x |ETAS| x candidates).
"""

from __future__ import annotations

import math

import numpy as np

#: the temperatures weighed (a grid from the Gaussian likelihood, 1, down to a near-uniform average)
ETAS = (1.0, 0.3, 0.1, 0.03, 0.01)


def tempered_average(f: np.ndarray, score: np.ndarray, weight: np.ndarray, eta: float) -> float:
    """f_eta of the module docstring over the candidates with a finite forecast and score (NaN: none)."""
    ok = np.isfinite(f) & np.isfinite(score)
    if not ok.any():
        return math.nan
    f, score, weight = f[ok], score[ok], weight[ok]
    j = int(np.argmin(score))
    if not score[j] > 0.0:
        return float(f[j])
    logw = -eta * weight * (score / score[j] - 1.0) / 2.0
    w = np.exp(logw - logw.max())
    return float(np.sum(w * f) / np.sum(w))


class TemperedMix:
    """Per horizon, the forecasts of every eta of :data:`ETAS` made at each origin (kept until
    their values arrive) and each eta's ``discount``-ed mean squared error."""

    def __init__(self, horizons: int = 0, discount: float = 0.99):
        self.discount = float(discount)
        self.loss_ = np.zeros((0, len(ETAS)))
        self.weight_ = np.zeros((0, len(ETAS)))
        self.made_: list[dict[int, np.ndarray]] = []
        self.add_horizons(horizons)

    def add_horizons(self, H: int) -> None:
        more = H - len(self.made_)
        if more > 0:
            self.loss_ = np.vstack([self.loss_, np.zeros((more, len(ETAS)))])
            self.weight_ = np.vstack([self.weight_, np.zeros((more, len(ETAS)))])
            self.made_ += [{} for _ in range(more)]

    def learn_one(self, t: int, y: float) -> None:
        """y_t arrives: score every eta's forecast of it made at t - h, at each horizon h."""
        for h, made in enumerate(self.made_, 1):
            preds = made.pop(t - h, None)
            if preds is not None:
                ok = np.isfinite(preds)
                e = y - preds[ok]
                self.loss_[h - 1, ok] = self.discount * self.loss_[h - 1, ok] + e * e
                self.weight_[h - 1, ok] = self.discount * self.weight_[h - 1, ok] + 1.0

    def make(self, t: int, h: int, f: np.ndarray, score: np.ndarray, weight: np.ndarray) -> None:
        """Every eta's forecast of y_{t+h} made at t from the candidates' forecasts, scores and counts."""
        self.made_[h - 1][t] = np.array([tempered_average(f, score, weight, eta) for eta in ETAS])

    def forecast(self, t: int, h: int) -> float | None:
        """The temperatures' average forecast of y_{t+h} made at t (module docstring; the middle eta's
        before any score; None: not made)."""
        if h > len(self.made_):
            return None
        preds = self.made_[h - 1].get(t)
        if preds is None:
            return None
        w = self.weight_[h - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where((w > 0) & np.isfinite(preds), self.loss_[h - 1] / w, np.inf)
        if np.isfinite(score).any():
            return tempered_average(preds, score, w, 1.0)
        k = len(ETAS) // 2
        return float(preds[k]) if math.isfinite(preds[k]) else None

    def to_dict(self) -> dict:
        return {"loss": self.loss_.tolist(), "weight": self.weight_.tolist(),
                "made": [[[o, [v if math.isfinite(v) else None for v in p]] for o, p in d.items()] for d in self.made_]}

    @classmethod
    def from_dict(cls, d: dict, discount: float, where: str = "mix") -> "TemperedMix":
        try:
            mix = cls(0, discount)
            mix.loss_ = np.array(d["loss"], dtype=float).reshape(-1, len(ETAS))
            mix.weight_ = np.array(d["weight"], dtype=float).reshape(-1, len(ETAS))
            mix.made_ = [{int(o): np.array([math.nan if v is None else float(v) for v in p]).reshape(len(ETAS))
                          for o, p in made} for made in d["made"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if not len(mix.loss_) == len(mix.weight_) == len(mix.made_):
            raise ValueError(f"{where}: losses, counts and forecasts disagree in length")
        return mix


__all__ = ["ETAS", "TemperedMix", "tempered_average"]
