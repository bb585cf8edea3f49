"""okl.timeseries.mixing: the tempered-likelihood averages of the Forecaster's candidates and the
temperatures' own average by the averages' errors."""

import math

import numpy as np
import pytest

from okl.timeseries.mixing import ETAS, TemperedMix, tempered_average


def test_tempered_average_between_the_leader_and_the_mean():
    f = np.array([1.0, 2.0, 4.0, math.nan])
    score = np.array([1.0, 1.1, 3.0, 0.5])      # the NaN forecast's score is ignored with it
    weight = np.array([100.0, 100.0, 100.0, 100.0])
    assert tempered_average(f, score, weight, 1e6) == 1.0                 # follow the leader
    assert tempered_average(f, score, weight, 1e-9) == pytest.approx(7.0 / 3.0)   # the plain mean
    # eta 1: weights exp(-100 (s / 1 - 1) / 2): 1, exp(-5), exp(-100)
    w = np.exp([0.0, -5.0, -100.0])
    assert tempered_average(f, score, weight, 1.0) == pytest.approx(float(w @ f[:3] / w.sum()))
    assert math.isnan(tempered_average(f, np.full(4, np.inf), weight, 1.0))
    assert tempered_average(f, np.array([0.0, 1.0, 1.0, 1.0]), weight, 1.0) == 1.0   # a perfect leader


def test_tempered_mix_averages_the_temperatures_by_their_own_errors():
    mix = TemperedMix(1, discount=0.9)
    preds = np.arange(1.0, len(ETAS) + 1.0)
    mix.made_[0][0] = preds
    mix.weight_[0] = 10.0
    scores = np.array([1.0, 1.01, 1.02, 1.5, 3.0])[:len(ETAS)]
    mix.loss_[0] = 10.0 * scores
    # eta 1 over the temperatures: v_k = exp(-W (s_k / s_min - 1) / 2); within noise of the leader
    # they share the answer (following the leader alone would answer 1)
    v = np.exp(-10.0 * (scores - 1.0) / 2.0)
    assert mix.forecast(0, 1) == pytest.approx(float(v @ preds / v.sum()), rel=1e-12)
    assert 1.9 < mix.forecast(0, 1) < 2.1                 # (2.02: the first three share it)
    mix.weight_[0, 1:] = 0.0                      # only the first temperature scored: its forecast
    assert mix.forecast(0, 1) == 1.0


def test_tempered_mix_leans_on_the_temperature_with_the_lowest_error():
    mix = TemperedMix(2, discount=0.9)
    f = np.array([0.0, 10.0])
    score, weight = np.array([1.0, 1.2]), np.array([5.0, 5.0])
    for t in range(30):
        mix.learn_one(t, 10.0)                   # the truth is the second candidate's 10
        mix.make(t, 1, f, score, weight)
        mix.make(t, 2, f, score, weight)
    preds = mix.made_[0][29]
    assert np.all(np.diff(preds) > 0)           # cooler etas lean on the leader (0), warmer on the mean
    expected = tempered_average(preds, mix.loss_[0] / mix.weight_[0], mix.weight_[0], 1.0)
    assert mix.forecast(29, 1) == pytest.approx(expected, rel=1e-12)
    assert preds.mean() < mix.forecast(29, 1) < preds[-1]   # (all about 5 off: near-equal, the warmer ahead)
    assert preds.mean() < mix.forecast(29, 2) < preds[-1]   # (its own record: one score fewer)
    assert mix.weight_[1, 0] > 0 and mix.forecast(30, 1) is None
    fresh = TemperedMix(1)
    fresh.make(0, 1, f, score, weight)
    assert fresh.forecast(0, 1) == fresh.made_[0][0][len(ETAS) // 2]    # before any score: the middle eta
    back = TemperedMix.from_dict(mix.to_dict(), 0.9)
    assert back.forecast(29, 2) == mix.forecast(29, 2)
    np.testing.assert_array_equal(back.loss_, mix.loss_)
    with pytest.raises(ValueError, match="mix"):
        TemperedMix.from_dict({"loss": [[0.0] * len(ETAS)], "weight": [], "made": []}, 0.9)


def test_the_forecaster_answers_the_mix():
    from okl.timeseries import Forecaster

    rng = np.random.default_rng(5)
    t = np.arange(220)
    s = np.sin(2 * np.pi * t / 25) + 0.05 * rng.standard_normal(220)
    fc = Forecaster(order=6, period=0, burn=50)
    for i, v in enumerate(s):
        fc.learn_one(float(v))
        if i == 40:     # horizons 2 and 3 asked for: their averages are made at once
            fc.forecast(3)
            assert 40 in fc.mix_.made_[2] and fc.mix_.weight_[2].max() == 0.0
    t = fc.n_ - 1
    answers = fc.forecast(3)
    for h in (1, 2, 3):
        preds = fc.mix_.made_[h - 1][t]
        assert answers[h - 1] == fc.mix_.forecast(t, h) and preds.min() <= answers[h - 1] <= preds.max()
        assert fc.mix_.weight_[h - 1].min() > 0
