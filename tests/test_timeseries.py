"""okl.timeseries: the embedding, the Forecaster (River's protocol, direct horizons, intervals,
model files) and the conformal head every regressor's interval comes from."""

import math

import numpy as np
import pytest

from okl.ensemble.pool import series_pool
from okl.intervals import ConformalHead
from okl.timeseries import Forecaster, detect_period, embed
from okl.timeseries.views import member_specs


def test_embed_rows_targets_and_exog():
    X, y = embed(np.arange(1.0, 7.0), 3, horizon=2)
    assert X.tolist() == [[1, 0, 0], [2, 1, 0], [3, 2, 1], [4, 3, 2]] and y.tolist() == [3, 4, 5, 6]
    X, y = embed([1.0, 2.0, 3.0], 1, exog=[[10, 20], [11, 21], [12, 22]])
    assert X.tolist() == [[1, 11, 21], [2, 12, 22]] and y.tolist() == [2, 3]
    for kw, msg in (({"order": 0}, "order"), ({"order": 2, "horizon": 0}, "horizon"),
                    ({"order": 2, "horizon": 5}, "more than horizon")):
        with pytest.raises(ValueError, match=msg):
            embed([1.0, 2.0, 3.0], **kw)
    with pytest.raises(ValueError, match="value 1"):
        embed([1.0, math.nan, 3.0], 1)
    with pytest.raises(ValueError, match="one row per value"):
        embed([1.0, 2.0, 3.0], 1, exog=[1.0, 2.0])


def test_detect_period():
    t = np.arange(240)
    assert detect_period(np.sin(2 * np.pi * t / 12) + 0.01 * t) == 12
    assert detect_period(np.cumsum(np.random.default_rng(0).standard_normal(240))) == 0
    assert detect_period(np.sin(0.01 * t)) == 0  # smooth: its differences decay without a peak
    # significance, not a fixed correlation: random walks show a season at most ~ level of the time
    walks = [detect_period(np.cumsum(np.random.default_rng(i).standard_normal(240))) for i in range(100)]
    assert np.mean(np.array(walks) > 0) <= 0.06
    # and white noise, whose differences are MA(1) with r_1 = -0.5 (Bartlett's variance 1.5 / (m - P);
    # taken as white differences: 13.5 % of these 200 series)
    noise = [detect_period(np.random.default_rng(i).standard_normal(120)) for i in range(200)]
    assert np.mean(np.array(noise) > 0) <= 0.03
    # a growing multiplicative season is found from two periods and a few values
    rng = np.random.default_rng(1)
    y = (100 + 2 * np.arange(40)) * (1 + 0.2 * np.sin(2 * np.pi * np.arange(40) / 12)) + rng.standard_normal(40)
    assert detect_period(y[:23]) == 0 and detect_period(y[:30]) == 12


def _sine(n, rng):
    t = np.arange(n)
    return np.sin(2 * np.pi * t / 25) + 0.5 * np.sin(2 * np.pi * t / 7) + 0.05 * rng.standard_normal(n)


def test_forecaster_beats_last_value_at_every_horizon_with_covering_intervals():
    rng = np.random.default_rng(0)
    s = _sine(700, rng)
    fc = Forecaster(order=8, burn=100)
    H = 5
    err = np.zeros((H, 2))
    inside = np.zeros(H)
    n = 0
    for t in range(len(s) - H):
        if t >= 300:
            ivs = fc.forecast_interval(H, alpha=0.1)
            assert [iv.center for iv in ivs] == fc.forecast(H)
            for h in range(H):
                e = s[t + h] - ivs[h].center
                err[h] += [e * e, (s[t + h] - s[t - 1]) ** 2]
                inside[h] += s[t + h] in ivs[h]
            n += 1
        fc.learn_one(float(s[t]))
    assert np.all(err[:, 0] < 0.2 * err[:, 1])          # far better than the last value
    assert np.all(np.abs(inside / n - 0.9) < 0.06)        # 90 % intervals at every horizon
    assert len(fc.members(1)) < 2 * len(fc.specs_)


def test_forecaster_before_warmup_and_bad_input():
    fc = Forecaster()
    assert fc.forecast(3) == [0.0, 0.0, 0.0]
    fc.learn_one(2.5)
    assert fc.forecast(2) == [2.5, 2.5]
    assert math.isinf(fc.forecast_interval(1)[0].upper)
    for bad, msg in ((math.inf, "finite"), ("a", "number"), (True, "number")):
        with pytest.raises(ValueError, match=msg):
            fc.learn_one(bad)
    assert fc.n_ == 1  # nothing learned from a refused value
    with pytest.raises(ValueError, match="horizon"):
        fc.forecast(0)
    for kw, msg in (({"learner": "nope"}, "learner"), ({"order": 0}, "order"), ({"warmup": 2}, "warmup"),
                    ({"discount": 0.0}, "discount"), ({"drop": 1.0}, "drop")):
        with pytest.raises(ValueError, match=msg):
            Forecaster(**kw)


def test_forecaster_exog_and_named_learner():
    rng = np.random.default_rng(1)
    u = rng.standard_normal(400)
    y = np.r_[0.0, 0.5 * u[:-1]] + 0.9 * u  # y_t depends on x_t: known only through the exogenous value
    fc = Forecaster(learner="krls-t", order=2, params={"noise": 1e-3, "scale": None, "center_targets": False})
    sq = []
    for t in range(399):
        if t > 200:
            sq.append((fc.forecast(1, xs=[{"u": float(u[t])}])[0] - y[t]) ** 2)
        fc.learn_one(float(y[t]), x={"u": float(u[t])})
    assert np.mean(sq) < 0.1 * np.var(y)
    with pytest.raises(ValueError, match="xs"):
        fc.forecast(2, xs=[{"u": 0.0}])
    with pytest.raises(ValueError, match="exogenous features"):
        fc.learn_one(0.0, x={"v": 1.0})


def test_forecaster_model_file_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    s = _sine(260, rng)
    fc = Forecaster(order=6, burn=50)
    for v in s[:200]:
        fc.learn_one(float(v))
    before = fc.forecast_interval(4)
    fc.save(tmp_path / "f.zip")
    back = Forecaster.load(tmp_path / "f.zip")
    assert back.forecast_interval(4) == before
    for v in s[200:]:
        fc.learn_one(float(v))
        back.learn_one(float(v))
    assert back.forecast(4) == fc.forecast(4)
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.zip"):
        Forecaster.load(tmp_path / "bad.zip")


def test_conformal_head_tracks_coverage_under_drift():
    rng = np.random.default_rng(3)
    head = ConformalHead()
    inside, upper = 0, []
    for t in range(3000):
        sd = 1.0 + 4.0 * (t > 1500)            # the noise jumps: not exchangeable
        y = sd * rng.standard_normal()
        inside += y in head.interval(0.0, 0.1)
        upper.append(head.interval(0.0, 0.1).upper)
        head.update(0.0, y)
    assert abs(inside / 3000 - 0.9) < 0.01
    # the last 1,000 intervals about z_0.95 = 1.645 times the new sd (the tracker oscillates about it:
    # 1.78 on average here)
    assert 1.5 * 5 < np.mean(upper[-1000:]) < 2.1 * 5
    iv = head.interval(0.0, 0.1)
    back = ConformalHead.from_dict(head.to_dict())
    assert back.interval(0.0, 0.1) == iv
    with pytest.raises(ValueError, match="alpha"):
        head.interval(0.0, 1.5)


def test_conformal_head_correction_follows_its_quantile():
    """A large first score (a tiny first error sets the scale, then a model that had seen nothing
    errs) is the window quantile until the window has 19 scores, then leaves it: the correction, in
    units of the quantile, is not left behind at the old size (an absolute one gave 2-3 point
    intervals and 72-81 % coverage over the next 80 rounds of these five seeds)."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        head = ConformalHead()
        head.update(0.0, 0.1)
        head.update(0.0, 5.0)
        points = inside = 0
        for _ in range(80):
            e = float(rng.standard_normal())
            iv = head.interval(0.0, 0.1)
            points += iv.width == 0.0
            inside += e in iv
            head.update(0.0, e)
        assert points == 0 and inside >= 72, (seed, points, inside)


def test_conformal_head_reads_a_state_with_an_absolute_correction():
    """Model files and pickles written when the correction was absolute (q = quantile + c) load to
    the same intervals."""
    import pickle

    head = ConformalHead()
    for e in np.random.default_rng(1).standard_normal(60):
        head.update(0.0, float(e))
    q, c = head.half_width(0.1), head.correction[0.1]
    assert c != 0.0
    absolute = q / (1.0 + c) * c  # (the quantile times c)
    legacy = {k: v for k, v in head.to_dict().items() if k != "correction"} | {"c": [[0.1, absolute]]}
    assert ConformalHead.from_dict(legacy).half_width(0.1) == pytest.approx(q, rel=1e-12)
    state = {k: v for k, v in vars(head).items() if k != "correction"} | {"c": {0.1: absolute}}
    old = ConformalHead.__new__(ConformalHead)
    old.__setstate__(state)
    assert old.half_width(0.1) == pytest.approx(q, rel=1e-12)
    assert pickle.loads(pickle.dumps(head)).half_width(0.1) == q
    bad = head.to_dict() | {"correction": [[0.1, -1.5]]}
    with pytest.raises(ValueError, match="f.zip: head 2: each level's correction must be finite and >= -1"):
        ConformalHead.from_dict(bad, "f.zip: head 2")


def test_replay_intervals_is_what_the_river_adapter_answers_online():
    """``okl run``'s interval columns replay a head over a run's predictions: the same coverage and
    width, to the bit, as OKLRiverRegressor.predict_interval_one online (a learner without a
    predictive variance)."""
    from okl.checks import friedman_regression
    from okl.intervals import replay_intervals
    from okl.river import OKLRiverRegressor

    X, y = friedman_regression(400)
    model = OKLRiverRegressor(seed=0)
    predictions, inside, width, counted = [], 0, 0.0, 0
    for i, (row, target) in enumerate(zip(X, y)):
        x = {f"x{j}": float(v) for j, v in enumerate(row)}
        predictions.append(model.predict_one(x))
        iv = model.predict_interval_one(x, alpha=0.1)
        if i >= 1 and math.isfinite(iv.upper - iv.lower):
            inside += iv.lower <= target <= iv.upper
            width += iv.upper - iv.lower
            counted += 1
        model.learn_one(x, float(target))
    assert counted == 400 - 3 and replay_intervals(predictions, y) == (inside / counted, width / counted)
    assert 0.85 < inside / counted < 0.95
    with pytest.raises(ValueError, match="alpha"):
        replay_intervals(predictions, y, alpha=1.0)


def _airline_like(n, rng):
    """A positive series with a trend and a multiplicative season (12)."""
    t = np.arange(n)
    return 100 * np.exp(0.01 * t) * (1 + 0.25 * np.sin(2 * np.pi * t / 12)) * np.exp(0.02 * rng.standard_normal(n))


def test_forecaster_log_and_seasonal_views_on_a_multiplicative_season():
    rng = np.random.default_rng(4)
    s = _airline_like(200, rng)
    fc = Forecaster(burn=400)
    err = []
    for t, v in enumerate(s):
        if t >= 120:
            err.append(abs(fc.forecast(1)[0] - v))
        fc.learn_one(float(v))
    assert fc.scale_[2] == 12 and fc.positive_
    assert {(sp[0], sp[5]) for sp in fc.specs_} == {(0, False), (1, False), (12, False), (0, True), (1, True), (12, True)}
    assert np.mean(err) < 0.35 * np.mean(np.abs(np.diff(s[119:])))   # far better than the last value
    best = fc.members(1)[0]
    assert "season 12" in best or "season 1," in best
    # the first value <= 0 ends the log views (nothing else): forecasts go on
    fc.learn_one(-1.0)
    assert not fc.positive_ and not fc.alive_[:, [sp[5] for sp in fc.specs_]].any()
    assert all(math.isfinite(v) for v in fc.forecast(3))


def test_forecaster_replaces_an_early_divisor_season_at_a_doubling():
    # a 12-season with a strong 3-season inside: from 16 to 28 values only the lag 3 is testable and
    # significant, from 32 (a doubling of warmup 16) the 12 is; the members and the Holt-Winters bank
    # move to it (kept at 3 before: electrical equipment kept its 3 for good)
    rng = np.random.default_rng(2)
    t = np.arange(40)
    s = 10 + 0.05 * t + 2 * np.sin(2 * np.pi * t / 3) + 3.5 * np.sin(2 * np.pi * t / 12) + 0.3 * rng.standard_normal(40)
    assert [detect_period(s[:n]) for n in (16, 28, 32)] == [3, 3, 12]
    fc = Forecaster()
    seasons = []
    for v in s:
        fc.learn_one(float(v))
        seasons.append(fc.scale_[2])
    assert seasons[15:31] == [3] * 16 and seasons[31:] == [12] * 9
    assert {sp[0] for sp in fc.specs_} == {0, 1, 12} and fc.bank_.period == 12
    # the views without a season kept their widths (the scale did not move): the same members, replayed
    # to the state of a forecaster that kept the 3 (widths re-measured at 32 values differ)
    kept = Forecaster(period=3)
    for v in s:
        kept.learn_one(float(v))
    plain = [j for j, sp in enumerate(fc.specs_) if sp[0] < 2]
    assert [fc.specs_[j] for j in plain] == [sp for sp in kept.specs_ if sp[0] < 2]
    same = [j for j, sp in enumerate(kept.specs_) if sp[0] < 2]
    np.testing.assert_allclose(fc._forecasts(39, 1)[plain], kept._forecasts(39, 1)[same], rtol=1e-9)
    drawn = [sp[3] for sp in member_specs(s[:32], 12, (6, 12), series_pool(), True, True) if sp[0] == 0]
    assert drawn != [fc.specs_[j][3] for j in plain if fc.specs_[j][0] == 0]
    # a doubling without a significant season keeps the one found (no rebuild for weaker evidence)
    fc2 = Forecaster(warmup=8)
    for v in s[:16]:
        fc2.learn_one(float(v))
    assert fc2.scale_[2] == 3
    fc2.y_ = fc2.y_[:8] + [float(v) for v in rng.standard_normal(8)]  # (the 16th value's check sees noise)
    assert detect_period(np.asarray(fc2.y_)) == 0 and fc2._measure(again=True)[2] == 3


def test_a_recursive_path_ends_where_the_range_bound_would_clamp_it():
    # the one-step model iterated for the recursive candidate leaves the series at its third step:
    # the path ends there (its later steps are no forecasts), the direct members answer those horizons
    rng = np.random.default_rng(3)
    s = np.sin(np.arange(60) / 3.0) + 0.05 * rng.standard_normal(60)
    fc = Forecaster()
    for v in s[:59]:
        fc.learn_one(float(v))
    fc.forecast(5)
    t = fc.n_
    one_step = fc._predict
    fc._predict = lambda h, u=None, direct=False: 1e6 if direct and u == t + 2 else one_step(h, u, direct)
    fc.learn_one(float(s[59]))
    origin, path = fc.paths_[-1]
    assert origin == t and len(path) == 2 and all(abs(v) < 2 for v in path)
    assert fc._path(t, 2) == path[1] and fc._path(t, 3) is None
    assert all(math.isfinite(v) and abs(v) < 2 for v in fc.forecast(5))


def test_forecaster_scores_each_member_on_the_forecast_it_made_h_rounds_earlier():
    rng = np.random.default_rng(5)
    s = _sine(150, rng)
    fc = Forecaster(order=4, burn=1000)
    h = 3
    for t, v in enumerate(s[:100]):
        fc.learn_one(float(v))
        if t == 20:
            fc.forecast(h)   # (the horizons up to h from here on)
    made = fc.pending_[h - 1][fc.n_ - 1].copy()      # every member's forecast of y_{n-1+h}, made now
    for v in s[100:100 + h - 1]:
        fc.learn_one(float(v))
    loss, weight = fc.loss_[h - 1].copy(), fc.weight_[h - 1].copy()
    fc.learn_one(float(s[100 + h - 1]))              # y_{n-1+h} arrives: scored on those forecasts
    live = np.isfinite(made)
    assert live.sum() > 10
    d = fc.discount
    np.testing.assert_allclose(fc.loss_[h - 1][live], d * loss[live] + (s[100 + h - 1] - made[live]) ** 2)
    np.testing.assert_allclose(fc.weight_[h - 1][live], d * weight[live] + 1.0)


def test_forecaster_prunes_within_each_view():
    rng = np.random.default_rng(6)
    s = _airline_like(260, rng)
    fc = Forecaster(burn=60)
    for v in s:
        fc.learn_one(float(v))
    for h in range(len(fc.models_)):
        for view in {(sp[0], sp[5]) for sp in fc.specs_}:
            cols = [j for j, sp in enumerate(fc.specs_) if (sp[0], sp[5]) == view]
            assert fc.alive_[h, cols].sum() >= fc.keep   # every view keeps its best


def test_forecaster_file_with_log_views_and_pending_forecasts(tmp_path):
    import json
    import zipfile

    s = _airline_like(90, np.random.default_rng(7))
    fc = Forecaster(burn=40)
    for v in s[:70]:
        fc.learn_one(float(v))
    fc.forecast(6)
    assert any(sp[5] for sp in fc.specs_) and fc.pending_[5]
    fc.save(tmp_path / "f.zip")
    back = Forecaster.load(tmp_path / "f.zip")
    assert back.forecast_interval(6) == fc.forecast_interval(6)
    for v in s[70:]:
        fc.learn_one(float(v))
        back.learn_one(float(v))
    assert back.forecast(6) == fc.forecast(6)
    np.testing.assert_array_equal(back.loss_, fc.loss_)
    # a version-1 file (members scored after h - 1 more pairs) is refused by name, not misread
    with zipfile.ZipFile(tmp_path / "f.zip") as zf:
        meta = json.loads(zf.read("forecaster.json"))
    meta["version"] = 1
    with zipfile.ZipFile(tmp_path / "old.zip", "w") as zf:
        zf.writestr("forecaster.json", json.dumps(meta))
    with pytest.raises(ValueError, match="old.zip.*version 1"):
        Forecaster.load(tmp_path / "old.zip")


def test_a_forecaster_file_with_an_oversized_header_is_refused(tmp_path, monkeypatch):
    """load reads at most MAX_HEADER bytes of forecaster.json, and names the file and the size."""
    import zipfile

    from okl.timeseries import files
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("forecaster.json", " " * 5000)
    monkeypatch.setattr(files, "MAX_HEADER", 1000)
    with pytest.raises(ValueError, match="forecaster.json of 5000 bytes, at most 1000"):
        files.load_forecaster(path, object)


def test_conformal_head_judges_a_delayed_interval_by_the_interval_issued():
    """Feedback 10 rounds late (a Forecaster's horizon 10) on errors in bursts: judged by the
    interval issued (its snapshot) the head covers closer to 90 % than judged by its newer state."""
    rng = np.random.default_rng(0)
    n, delay = 4000, 10
    sd, state = np.ones(n), 0
    for t in range(n):
        state = 1 - state if rng.random() < 1 / 40 else state
        sd[t] = 1.0 + 4.0 * state
    e = sd * rng.standard_normal(n)
    coverage = []
    for use_snapshot in (False, True):
        head, issued, inside = ConformalHead(), {}, 0
        for t in range(n):
            if t - delay in issued:
                iv, snap = issued.pop(t - delay)
                inside += e[t] in iv
                head.update(0.0, float(e[t]), issued=snap if use_snapshot else None)
            issued[t] = (head.interval(0.0, 0.1), head.snapshot())
        coverage.append(inside / (n - delay))
    assert abs(coverage[1] - 0.9) < 0.01 and abs(coverage[0] - 0.9) > 0.02  # (measured: 90.0 and 86.9 %)
    u, q = head.snapshot()
    assert u == head.local_scale() and q == {0.1: head.half_width(0.1)}


def test_forecaster_heads_count_the_misses_of_the_intervals_answered():
    """At horizon h the head's miss count grows by one exactly when y_t left the interval
    forecast_interval answered h rounds earlier (the snapshot it was made of), and a model file
    keeps the snapshots (the same intervals after the round trip and more values)."""
    import tempfile

    rng = np.random.default_rng(4)
    s = _sine(260, rng)
    fc = Forecaster(order=6, period=0, burn=50)
    h, answered, checked = 5, {}, 0
    for t, v in enumerate(s[:250]):
        if t >= 130 and t - h in answered:
            iv = answered[t - h]
            misses = fc.heads_[h - 1].n - fc.heads_[h - 1].hits
            fc.learn_one(float(v))
            assert fc.heads_[h - 1].n - fc.heads_[h - 1].hits - misses == (float(v) not in iv)
            checked += float(v) not in iv
        else:
            fc.learn_one(float(v))
        answered[t] = fc.forecast_interval(h)[h - 1]
    assert checked >= 3   # some misses were counted
    with tempfile.TemporaryDirectory() as tmp:
        fc.save(f"{tmp}/f.zip")
        back = Forecaster.load(f"{tmp}/f.zip")
    assert back.issued_[-1][2] == fc.issued_[-1][2]
    for v in s[250:]:
        fc.learn_one(float(v))
        back.learn_one(float(v))
    assert back.forecast_interval(h) == fc.forecast_interval(h)


def test_a_holt_winters_bank_kept_through_a_rebuild_learns_every_value():
    # at 64 values (a doubling of warmup 16) the growing series' scale has moved: the members are
    # rebuilt, the bank (same season) kept; it must learn that 64th value like every other (it
    # skipped it: no forecasts from that origin, a level and trend one value late from then on)
    from okl.timeseries.smoothing import SmoothingBank

    s = _airline_like(80, np.random.default_rng(5))
    fc = Forecaster()
    banks, scales = [], []
    for v in s:
        fc.learn_one(float(v))
        banks.append(fc.bank_)
        scales.append(fc.scale_)
    assert scales[63] != scales[62] and banks[63] is banks[62]   # a rebuild at 64 that kept the bank
    P, first = fc.bank_spec_[:2]
    start = next(i for i, b in enumerate(banks) if b is fc.bank_)  # (built at start + 1 values)
    again = SmoothingBank.replayed(P, len(fc.models_), fc.discount, True, first, s[:start + 1])
    for t in range(start + 1, 80):
        again.learn_one(t, float(s[t]))
    assert fc.bank_.n_ == again.n_ == 80
    for name in ("level_", "trend_", "season_", "loss_", "weight_"):
        np.testing.assert_allclose(getattr(fc.bank_, name), getattr(again, name), rtol=1e-12, atol=0)


def test_a_local_level_is_forecast_near_simple_exponential_smoothing():
    # a random walk seen through noise (the Nile's model, 100 values, signal-to-noise 0.09, whose
    # steady-state Kalman forecast is simple exponential smoothing at alpha 0.26): the Forecaster's
    # MAE within 15 % of that forecast's at +1 and +6 over four series (measured 1.11 and 1.13;
    # before the smoothing bank without a season and the low-order autoregressions, 1.19 and 1.17)
    ratios = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        y = 1000 + np.cumsum(15 * rng.standard_normal(100)) + 50 * rng.standard_normal(100)
        fc, level, e, ses = Forecaster(), y[0], {1: [], 6: []}, {1: [], 6: []}
        for t in range(100):
            if t >= 12:
                f = fc.forecast(6)
                for h in (1, 6):
                    if t + h - 1 < 100:
                        e[h].append(abs(f[h - 1] - y[t + h - 1]))
                        ses[h].append(abs(level - y[t + h - 1]))
            fc.learn_one(float(y[t]))
            level = 0.26 * y[t] + 0.74 * level
        ratios.append([np.mean(e[h]) / np.mean(ses[h]) for h in (1, 6)])
    assert fc.level_bank_ is not None and fc.level_bank_.n_ == 100
    assert {sp[1] for sp in fc.specs_ if sp[4].get("kernel") != "affine"} == {6, 12}
    assert {sp[1] for sp in fc.specs_ if sp[4].get("kernel") == "affine"} == {1, 2, 6, 12}
    r1, r6 = np.mean(ratios, axis=0)
    assert r1 < 1.15 and r6 < 1.15


def test_forecasts_along_keeps_what_each_origin_forecast():
    """Row t holds the forecasts made once y[t] was learned, never before (a model that forecasts
    how many values it has seen names its origin); the Forecaster's rows are its own intervals."""
    from okl.timeseries import forecasts_along

    class Counter:  # (River's forecaster protocol, forecasting the count of values learned)
        n = 0

        def learn_one(self, y, x=None):
            self.n += 1

        def forecast(self, horizon, xs=None):
            return [float(self.n)] * horizon

    F = forecasts_along(Counter(), np.zeros(10), 3)
    assert F.lower is None and F.upper is None and F.center[:, 2].tolist() == list(range(1, 11))
    p = F.made_earlier(3)  # the forecast of y[j] made from y[0 .. j - 3]: j - 2 values
    assert np.isnan(p[:3]).all() and p[3:].tolist() == [j - 2.0 for j in range(3, 10)]
    with pytest.raises(ValueError, match=r"h must be in 1 \.\. 3, got 4"):
        F.made_earlier(4)
    with pytest.raises(ValueError, match="horizon must be an integer >= 1, got 0"):
        forecasts_along(Counter(), [1.0], 0)
    s = _sine(80, np.random.default_rng(2))
    G = forecasts_along(Forecaster(order=4), s, 2, alpha=0.1)
    fc = Forecaster(order=4)
    for t in range(len(s)):
        fc.learn_one(float(s[t]))
        ivs = fc.forecast_interval(2, alpha=0.1)
        assert G.center[t].tolist() == [iv.center for iv in ivs]
        assert G.lower[t].tolist() == [iv.lower for iv in ivs] and G.upper[t].tolist() == [iv.upper for iv in ivs]
    assert np.isfinite(G.lower[-1]).all()


def test_okl_forecast_command_on_a_file(capsys, tmp_path):
    """``okl forecast`` as a user types it: a table per horizon (okl far ahead of the last value on a
    sum of sines), progress on stderr unless --quiet, the figure, and a bad line named."""
    from okl.cli import main

    s = 3.0 + _sine(160, np.random.default_rng(3))
    path, png = tmp_path / "s.txt", tmp_path / "f.png"
    path.write_text("\n".join(f"{v:.6f}" for v in s) + "\n")
    assert main(["forecast", "--series", str(path), "--horizon", "3", "--png", str(png)]) == 0  # (a file: whole)
    out, err = capsys.readouterr()
    assert f"series {path}: 160 values, forecasts scored on values 53..159" in out
    rows = [line.split("|") for line in out.splitlines() if line[:3] in ("| 1", "| 2", "| 3")]
    assert [r[1].strip() for r in rows] == ["1", "2", "3"]
    for r in rows:  # okl's MSE (dB) at least 10 dB below the last value's; a coverage near 90 %
        assert float(r[2]) < float(r[8]) - 10.0 and 70.0 <= float(r[4]) <= 100.0
    assert "forecast" in err and "160/160" in err and png.stat().st_size > 10_000
    assert main(["forecast", "--series", str(path), "--horizon", "2", "--png", "", "--quiet", "--alpha", "0.5"]) == 0
    out, err = capsys.readouterr()
    assert "values/s" not in err and "; 50 % intervals" in out
    half = [line.split("|") for line in out.splitlines() if line[:3] in ("| 1", "| 2")]
    for r, r90 in zip(half, rows):  # half the misses allowed: narrower bands, fewer values inside
        assert float(r[5]) < float(r90[5]) and float(r[4]) < float(r90[4])
    assert main(["forecast", "--series", str(path), "--alpha", "1"]) == 2
    assert "--alpha must be in (0, 1) (a 1 - alpha interval), got 1.0" in capsys.readouterr().err
    assert main(["forecast", "--series", str(path), "--n", "-1"]) == 2
    assert "--n must be >= 0 (0: every value), got -1" in capsys.readouterr().err
    assert main(["forecast", "--series", str(path), "--n", "60", "--horizon", "1", "--png", "", "--quiet"]) == 0
    assert f"series {path} (its first 60 of 160 values; --n 0 for all): 60 values" in capsys.readouterr().out
    path.write_text("1.0\n2.0\nabc\n")
    assert main(["forecast", "--series", str(path), "--quiet"]) == 2
    assert f"{path}, line 3: 'abc' is not a number" in capsys.readouterr().err


def test_series_files_as_spreadsheets_export_them(capsys, tmp_path):
    """A series file: one value a line, or a column of a delimited file with or without a header (a
    date column beside the values found as the only column of numbers); several columns of numbers
    need ``column``; a missing value is named by file, line and column."""
    from okl.cli import main
    from okl.data.readers import DataFormatError
    from okl.data.series import read_series_file

    v = [112.0, 118.0, 132.0, 129.0]
    f = tmp_path / "air.csv"
    f.write_text("Month,#Passengers\n" + "".join(f"1949-0{i + 1},{x:g}\n" for i, x in enumerate(v)))
    assert read_series_file(f)[0].tolist() == v and read_series_file(f)[1] == "column 2 '#Passengers'"
    assert read_series_file(f, "#Passengers")[0].tolist() == v and read_series_file(f, "2")[0].tolist() == v
    f.write_text("".join(f"1949-0{i + 1},{x:g}\n" for i, x in enumerate(v)))  # (no header)
    assert read_series_file(f) == (pytest.approx(v), "column 2")
    f.write_text("value\n" + "".join(f"{x:g}\n" for x in v))
    assert read_series_file(f)[0].tolist() == v and read_series_file(f)[1] == ""
    f.write_text("t\tx\n" + "".join(f"{i}\t{x:g}\n" for i, x in enumerate(v)))
    with pytest.raises(DataFormatError, match=r"2 of its 2 columns hold numbers \(column 1 't', column 2 'x'\) "
                                              r"on line 2; say which is the series"):
        read_series_file(f)
    assert read_series_file(f, "x")[0].tolist() == v and read_series_file(f, 1)[0].tolist() == [0, 1, 2, 3]
    with pytest.raises(DataFormatError, match=r"no column named 'y' \(columns: t, x\)"):
        read_series_file(f, "y")
    with pytest.raises(DataFormatError, match="column 3 is out of range"):
        read_series_file(f, 3)
    f.write_text("1 112\n2 118\n3\n")
    with pytest.raises(DataFormatError, match=r"air.csv, line 3, column 2: the value is missing"):
        read_series_file(f, 2)
    # comments, and a semicolon-separated export with decimal commas (line numbers still the file's)
    f.write_text("# monthly totals\nMonth;Passengers\n" + "".join(f"1949-0{i + 1};{x:g},5\n" for i, x in enumerate(v))
                 + "# end\n1949-05;-0,25e1\n1949-06;1.5,2\n")
    with pytest.raises(DataFormatError, match=r"air.csv, line 9, column 2 'Passengers': '1.5,2' is not a number"):
        read_series_file(f)
    f.write_text("\n".join(f.read_text().splitlines()[:-1]) + "\n")
    values, read = read_series_file(f)
    assert values.tolist() == [x + 0.5 for x in v] + [-2.5] and read == "column 2 'Passengers'"
    f.write_text("# x\n  # y\n112\n118\n")
    assert read_series_file(f)[0].tolist() == [112.0, 118.0]
    f.write_text("# nothing but a comment\n")
    with pytest.raises(DataFormatError, match="no data lines"):
        read_series_file(f)
    # the command line: --column, and the column read named beside the file
    f.write_text("Month,#Passengers\n" + "".join(f"1950-{i:02d},{100 + 10 * math.sin(i / 2):.3f}\n" for i in range(40)))
    assert main(["forecast", "--series", str(f), "--horizon", "2", "--png", "", "--quiet"]) == 0
    assert f"series {f} (column 2 '#Passengers'): 40 values" in capsys.readouterr().out
    assert main(["forecast", "--series", str(f), "--column", "Month", "--quiet"]) == 2
    assert "line 2, column 1 'Month': '1950-00' is not a number" in capsys.readouterr().err


def test_forecaster_keeps_its_interval_heads_through_a_rebuild():
    """The heads calibrate the answers users got, which a rebuild of the members does not change:
    the season found at ~30 values rebuilds every member, and each head goes on, one score a value
    (new heads fed the replay's errors under-covered held-out series: docs/results/timeseries.md)."""
    rng = np.random.default_rng(1)
    t = np.arange(60)
    y = (100 + 2 * t) * (1 + 0.2 * np.sin(2 * np.pi * t / 12)) + rng.standard_normal(60)
    fc = Forecaster()
    for v in y[:20]:
        fc.forecast(3)
        fc.learn_one(float(v))
    heads, scored = list(fc.heads_), [len(hd.scores) for hd in fc.heads_]
    assert len(heads) == 3 and fc.scale_[2] == 0 and min(scored) >= 2
    specs = fc.specs_
    for v in y[20:45]:
        fc.forecast(3)
        fc.learn_one(float(v))
    assert fc.scale_[2] == 12 and fc.specs_ is not specs  # (rebuilt with the season)
    assert all(a is b for a, b in zip(fc.heads_, heads))
    assert [len(hd.scores) for hd in fc.heads_] == [s + 25 for s in scored]
