"""okl.timeseries.mixing: the tempered-likelihood averages of the Forecaster's candidates, their
median, and the combinations' own average by their errors."""

import math

import numpy as np
import pytest

from okl.timeseries.mixing import COMBINATIONS, ETAS, TemperedMix, tempered_average


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


def test_tempered_mix_averages_the_combinations_by_their_own_errors():
    mix = TemperedMix(2, discount=0.9)
    preds = np.arange(1.0, COMBINATIONS + 1.0)   # (the tempered averages, then the median)
    scores = np.array([1.0, 1.01, 1.02, 1.5, 3.0, 4.0])
    assert len(scores) == COMBINATIONS == len(ETAS) + 1
    for h in (1, 2):
        mix.made_[h - 1][0] = preds
        mix.weight_[h - 1] = 10.0
        mix.loss_[h - 1] = 10.0 * scores
    # eta 1 over the combinations: v_k = exp(-(W / h) (s_k / s_min - 1) / 2); within noise of the
    # leader they share the answer (following the leader alone would answer 1)
    v = np.exp(-10.0 * (scores - 1.0) / 2.0)
    assert mix.forecast(0, 1) == pytest.approx(float(v @ preds / v.sum()), rel=1e-12)
    assert 1.9 < mix.forecast(0, 1) < 2.1                 # (2.02: the first three share it)
    # two steps ahead consecutive errors share a shock: 10 errors count as 5, the answer less sure
    v2 = np.exp(-5.0 * (scores - 1.0) / 2.0)
    assert mix.forecast(0, 2) == pytest.approx(float(v2 @ preds / v2.sum()), rel=1e-12)
    assert mix.forecast(0, 2) > mix.forecast(0, 1) + 0.05
    mix.weight_[0, 1:] = 0.0                      # only the first temperature scored: its forecast
    assert mix.forecast(0, 1) == 1.0


def test_tempered_mix_forecasts_the_candidates_median_too():
    """The median of the candidates with a finite forecast and score: a crowd of poor candidates
    (here three far off, scored 20 times the leader's) moves it less than the warm tempered averages."""
    mix = TemperedMix(1)
    f = np.array([1.0, 1.2, 1.1, 1.05, 9.0, 9.5, 8.0, math.nan, 100.0])
    score = np.array([1.0, 1.0, 1.1, 1.2, 20.0, 20.0, 20.0, 1.0, np.inf])
    mix.make(0, 1, f, score, np.full(9, 2.0))
    made = mix.made_[0][0]
    assert len(made) == COMBINATIONS and made[-1] == 1.2   # (the median of the seven with a score)
    assert made[len(ETAS) - 1] > 4.0 > made[-1]   # (the warmest average is pulled toward the crowd)
    mix.make(1, 1, np.full(3, math.nan), np.ones(3), np.ones(3))
    assert np.isnan(mix.made_[0][1]).all()


def test_tempered_mix_leans_on_the_temperature_with_the_lowest_error():
    mix = TemperedMix(2, discount=0.9)
    f = np.array([0.0, 10.0])
    score, weight = np.array([1.0, 1.2]), np.array([5.0, 5.0])
    for t in range(30):
        mix.learn_one(t, 10.0)                   # the truth is the second candidate's 10
        mix.make(t, 1, f, score, weight)
        mix.make(t, 2, f, score, weight)
    preds = mix.made_[0][29]
    etas = preds[:len(ETAS)]
    assert np.all(np.diff(etas) > 0) and preds[-1] == 5.0   # cooler etas lean on the leader (0); the median
    expected = tempered_average(preds, mix.loss_[0] / mix.weight_[0], mix.weight_[0], 1.0)
    assert mix.forecast(29, 1) == pytest.approx(expected, rel=1e-12)
    assert etas.mean() < mix.forecast(29, 1) < preds[-1]   # (all about 5 off: near-equal, the median ahead)
    assert etas.mean() < mix.forecast(29, 2) < preds[-1]   # (its own record: one score fewer)
    assert mix.weight_[1, 0] > 0 and mix.forecast(30, 1) is None
    fresh = TemperedMix(1)
    fresh.make(0, 1, f, score, weight)
    assert fresh.forecast(0, 1) == fresh.made_[0][0][len(ETAS) // 2]    # before any score: the middle eta
    back = TemperedMix.from_dict(mix.to_dict(), 0.9)
    assert back.forecast(29, 2) == mix.forecast(29, 2)
    np.testing.assert_array_equal(back.loss_, mix.loss_)
    with pytest.raises(ValueError, match="mix"):
        TemperedMix.from_dict({"loss": [[0.0] * COMBINATIONS], "weight": [], "made": []}, 0.9)
    with pytest.raises(ValueError, match="mix: 4 combinations a horizon, not 6"):
        TemperedMix.from_dict({"loss": [[0.0] * 4], "weight": [[0.0] * 4], "made": [[]]}, 0.9)
    # a file written before the median (one column a temperature): the median starts unscored
    old = {"loss": [[1.0, 2.0, 3.0, 4.0, 5.0]], "weight": [[1.0] * 5], "made": [[[7, [1.0, None, 3.0, 4.0, 5.0]]]]}
    back = TemperedMix.from_dict(old, 0.9)
    assert back.loss_.tolist() == [[1.0, 2.0, 3.0, 4.0, 5.0, 0.0]] and back.weight_[0, -1] == 0.0
    assert np.isnan(back.made_[0][7][[1, 5]]).all()
    v = np.exp(-np.array([0.0, 2.0, 3.0, 4.0]) / 2.0)   # (the scored temperatures with a forecast)
    assert back.forecast(7, 1) == pytest.approx(float(v @ [1.0, 3.0, 4.0, 5.0] / v.sum()), rel=1e-12)


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
