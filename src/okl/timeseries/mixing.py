"""The Forecaster's answer at each horizon: tempered-likelihood averages of its candidates and their
median, combined by their own errors (:class:`TemperedMix`).

Each candidate j (a direct member, or the recursive path) has a discounted mean squared error s_j
of the forecasts it made h rounds before their values, over a discounted count W_j of them. Read as
a Gaussian likelihood with the leader's error as the noise variance, the posterior weight of j is
exp(-W_j (s_j / s_min - 1) / 2) (Bayesian model averaging); raised to a power eta <= 1 it is the
tempered ("generalised", "safe") posterior of Grunwald and van Ommen (2017), which stays robust when
no candidate is the true model (a kernel member on a chaotic series, a regression on a season):

    f_eta = sum_j w_j f_j / sum_j w_j,   w_j = exp(-eta W_j (s_j / s_min - 1) / 2).

eta -> infinity is follow-the-leader (the Forecaster's first rule), eta -> 0 the plain mean. No eta
is set per series: each of :data:`ETAS` forecasts at every origin, and so does the candidates'
median (the robust combination of the forecast-combination literature: a crowd of poor candidates
moves it less than any average; on US unemployment +12 the members' median had MAE 1.519 against
1.562-1.755 for the temperatures, docs/results/timeseries.md, tenth round). Each combination k is
scored like a member (its own discounted mean squared error s_k of its forecasts at that horizon,
over a discounted count W_k), and the answer is their own Bayesian average, the same rule at eta 1
over them, with the count of independent errors: consecutive h-step errors share h - 1 shocks, so
W_k of them hold about W_k / h:

    f = sum_k v_k f_k / sum_k v_k,   v_k = exp(-(W_k / h) (s_k / s_min - 1) / 2)

(:data:`ETAS`'s middle before any score). The candidates' own weights need no such count: their
temperatures already span how much their evidence counts (W / h at that level too cost
AirlinePassengers +6 15.27 -> 16.57). A hyperparameter averaged by its own record, not chosen: as
MetaGrad weighs its learning rates (van Erven and Koolen, 2016), the answer moves with the evidence
where one temperature leads by far (a chaotic series) and averages where the combinations' errors
are within noise of each other, where following their leader switched on that noise (on ten
held-out series it was behind the temperatures' plain mean in 26 of 30 cells; seventh round).
Cost per value: O(H x |ETAS| x candidates).
"""

from __future__ import annotations

import math

import numpy as np

#: the temperatures weighed (a grid from the Gaussian likelihood, 1, down to a near-uniform average)
ETAS = (1.0, 0.3, 0.1, 0.03, 0.01)
#: the combinations each horizon forecasts and scores: the tempered average at each of ETAS, then the median
COMBINATIONS = len(ETAS) + 1


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
    """Per horizon, the forecasts of every combination (each eta of :data:`ETAS`, the median) made
    at each origin (kept until their values arrive) and each one's ``discount``-ed mean squared error."""

    def __init__(self, horizons: int = 0, discount: float = 0.99):
        self.discount = float(discount)
        self.loss_ = np.zeros((0, COMBINATIONS))
        self.weight_ = np.zeros((0, COMBINATIONS))
        self.made_: list[dict[int, np.ndarray]] = []
        self.add_horizons(horizons)

    def add_horizons(self, H: int) -> None:
        more = H - len(self.made_)
        if more > 0:
            self.loss_ = np.vstack([self.loss_, np.zeros((more, COMBINATIONS))])
            self.weight_ = np.vstack([self.weight_, np.zeros((more, COMBINATIONS))])
            self.made_ += [{} for _ in range(more)]

    def learn_one(self, t: int, y: float) -> None:
        """y_t arrives: score every combination's forecast of it made at t - h, at each horizon h."""
        for h, made in enumerate(self.made_, 1):
            preds = made.pop(t - h, None)
            if preds is not None:
                ok = np.isfinite(preds)
                e = y - preds[ok]
                self.loss_[h - 1, ok] = self.discount * self.loss_[h - 1, ok] + e * e
                self.weight_[h - 1, ok] = self.discount * self.weight_[h - 1, ok] + 1.0

    def make(self, t: int, h: int, f: np.ndarray, score: np.ndarray, weight: np.ndarray) -> None:
        """Every combination's forecast of y_{t+h} made at t from the candidates' forecasts, scores and counts."""
        ok = np.isfinite(f) & np.isfinite(score)
        median = float(np.median(f[ok])) if ok.any() else math.nan
        self.made_[h - 1][t] = np.array([tempered_average(f, score, weight, eta) for eta in ETAS] + [median])

    def forecast(self, t: int, h: int) -> float | None:
        """The combinations' average forecast of y_{t+h} made at t, over W / h independent errors
        (module docstring; the middle eta's before any score; None: not made)."""
        if h > len(self.made_):
            return None
        preds = self.made_[h - 1].get(t)
        if preds is None:
            return None
        w = self.weight_[h - 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where((w > 0) & np.isfinite(preds), self.loss_[h - 1] / w, np.inf)
        if np.isfinite(score).any():
            return tempered_average(preds, score, w / h, 1.0)
        k = len(ETAS) // 2
        return float(preds[k]) if math.isfinite(preds[k]) else None

    def to_dict(self) -> dict:
        return {"loss": self.loss_.tolist(), "weight": self.weight_.tolist(),
                "made": [[[o, [v if math.isfinite(v) else None for v in p]] for o, p in d.items()] for d in self.made_]}

    @classmethod
    def from_dict(cls, d: dict, discount: float, where: str = "mix") -> "TemperedMix":
        try:
            mix = cls(0, discount)
            loss = np.array(d["loss"], dtype=float)
            # (a file written before the median had one column a temperature: the median starts unscored)
            width = loss.shape[1] if loss.ndim == 2 and len(loss) else COMBINATIONS
            if width not in (len(ETAS), COMBINATIONS):
                raise ValueError(f"{width} combinations a horizon, not {COMBINATIONS}")
            mix.loss_ = loss.reshape(-1, width)
            mix.weight_ = np.array(d["weight"], dtype=float).reshape(-1, width)
            mix.made_ = [{int(o): np.r_[[math.nan if v is None else float(v) for v in p],
                                        [math.nan] * (COMBINATIONS - width)].reshape(COMBINATIONS)
                          for o, p in made} for made in d["made"]]
            more = np.zeros((len(mix.loss_), COMBINATIONS - width))
            mix.loss_, mix.weight_ = np.hstack([mix.loss_, more]), np.hstack([mix.weight_, more])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        if not len(mix.loss_) == len(mix.weight_) == len(mix.made_):
            raise ValueError(f"{where}: losses, counts and forecasts disagree in length")
        return mix


__all__ = ["COMBINATIONS", "ETAS", "TemperedMix", "tempered_average"]
