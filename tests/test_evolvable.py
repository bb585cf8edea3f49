"""Feature-evolvable streams and learners (OPFES and the FESL baselines).

Small configurations keep this file fast: d1 = d2 = 20-200 random features instead of the paper's
1000, T_M <= 100 mirror-descent iterations, 4,000-row prefixes of the real datasets.
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.evolvable import (EvolvableStream, OPFES, evolvable_class, evolvable_learners, make_evolvable,
                           make_evolvable_stream, stage_lengths)
from okl.evolvable.opfes import fourier_map

ALL = ("opfes", "align-fesl", "rff-fesl", "rff-rogd", "ker-fesl", "ker-rogd", "lin-fesl", "lin-rogd", "ocds")

SMALL = {"n_old_features": 20, "n_new_features": 20, "kom_iterations": 15, "budget": 12}


def small_params(name: str, **extra) -> dict:
    import inspect

    accepted = inspect.signature(evolvable_class(name).__init__).parameters
    params = {k: v for k, v in SMALL.items() if k in accepted}
    if "sigma" in accepted:
        params["sigma"] = 0.5
    params["step_size"] = 3.0
    params.update(extra)
    return params


@pytest.fixture(scope="module")
def german_stream():
    X, y = okl.load_dataset("german")  # bundled
    X, y = X[:160], y[:160]
    return make_evolvable_stream(X, y, seed=1, evolving_length=16)


def test_registry_lists_every_learner():
    assert set(ALL) <= set(evolvable_learners())
    # one registry: okl.learners() lists them, as the "evolvable" kind (their protocol differs)
    assert set(ALL) <= set(okl.learners()) and set(evolvable_learners()) == set(okl.learners(kind="evolvable"))
    assert not set(ALL) & set(okl.learners(kind="streaming"))
    assert isinstance(okl.make("opfes", sigma=2.0), OPFES)
    with pytest.raises(ValueError, match="kind 'evolvable', not 'streaming'"):
        from okl.runtime.base import learner_class
        learner_class("opfes")


# ---- streams --------------------------------------------------------------------------------

def test_stage_lengths_follow_the_opfes_rule():
    assert stage_lengths(15000) == (7000, 1000, 7000)   # n > 10,000: Te = 1000
    assert stage_lengths(10000) == (4500, 1000, 4500)   # n <= 10,000: Te = 0.1 n
    assert stage_lengths(7089) == (3190, 709, 3190)
    t1, te, t2 = stage_lengths(3175)
    assert te == 318 and t1 + te + t2 == 3175 and abs(t1 - t2) <= 1


def test_stream_split_and_order_are_seeded_and_fresh():
    rng = np.random.default_rng(0)
    X = rng.random((300, 7))
    y = np.where(rng.random(300) > 0.5, 1.0, -1.0)
    a = make_evolvable_stream(X, y, seed=4)
    b = make_evolvable_stream(X, y, seed=4)
    c = make_evolvable_stream(X, y, seed=5)
    assert np.array_equal(a.order, okl.data.permutation(300, 4))   # the package's run order
    assert np.array_equal(a.X1, b.X1) and np.array_equal(a.old_columns, b.old_columns)
    assert not np.array_equal(a.order, c.order)
    assert sorted(np.concatenate([a.old_columns, a.new_columns]).tolist()) == list(range(7))
    assert len(a.old_columns) == 3 and len(a.new_columns) == 4
    # the rows are the dataset's rows in the run's order, split by columns
    assert np.array_equal(a.X1, X[a.order][: a.T1 + a.Te][:, a.old_columns])
    assert np.array_equal(a.X2, X[a.order][a.T1:][:, a.new_columns])
    assert np.array_equal(a.y, y[a.order])


def test_stream_rejects_bad_input():
    X = np.random.default_rng(0).random((50, 4))
    y = np.ones(50)
    with pytest.raises(ValueError, match="larger than the stream"):
        stage_lengths(50, 60)
    with pytest.raises(ValueError, match="larger than the stream"):
        make_evolvable_stream(X, y, seed=0, evolving_length=51)
    with pytest.raises(ValueError, match="at least 2 features"):
        make_evolvable_stream(X[:, :1], y, seed=0)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        make_evolvable_stream(bad, y, seed=0)
    with pytest.raises(ValueError, match="-1 or \\+1"):
        make_evolvable_stream(X, np.zeros(50), seed=0)
    # declared stage lengths that do not match the arrays
    with pytest.raises(ValueError, match="T1 \\+ Te"):
        EvolvableStream(X[:20, :2], X[:30, 2:], y, 10, 5, 35)


def test_stream_from_rows_checks_the_declared_stages():
    rng = np.random.default_rng(1)
    rows = ([(rng.random(3), None, 1.0)] * 4 + [(rng.random(3), rng.random(2), -1.0)] * 2
            + [(None, rng.random(2), 1.0)] * 3)
    s = EvolvableStream.from_rows(rows, 4, 2, 3)
    assert s.X1.shape == (6, 3) and s.X2.shape == (5, 2)
    assert [st for st, *_ in s.rows()] == ["previous"] * 4 + ["evolving"] * 2 + ["current"] * 3
    with pytest.raises(ValueError, match="changed outside the declared stages"):   # x1 arrives too late
        EvolvableStream.from_rows(rows[:7] + [(rng.random(3), None, 1.0)] + rows[8:], 4, 2, 3)
    with pytest.raises(ValueError, match="changed outside the declared stages"):   # x2 too early
        EvolvableStream.from_rows([(rng.random(3), rng.random(2), 1.0)] + rows[1:], 4, 2, 3)
    with pytest.raises(ValueError, match="old feature dimension changed"):
        EvolvableStream.from_rows(rows[:2] + [(rng.random(4), None, 1.0)] + rows[3:], 4, 2, 3)
    with pytest.raises(ValueError, match="new feature dimension changed"):
        EvolvableStream.from_rows(rows[:7] + [(None, rng.random(5), 1.0)] + rows[8:], 4, 2, 3)
    with pytest.raises(ValueError, match="more rounds"):
        EvolvableStream.from_rows(rows + rows[-1:], 4, 2, 3)


# ---- protocol -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_run_equals_per_instance_loop(name, german_stream):
    s = german_stream
    ref = make_evolvable(name, random_state=3, **small_params(name)).run(s)
    loop = make_evolvable(name, random_state=3, **small_params(name))
    decisions = []
    for stage, x1, x2, y in s.rows():
        f = loop.predict_one(x1=x1, x2=x2)
        assert loop.predict_one(x1=x1, x2=x2) == f       # predicting changes nothing
        decisions.append(f)
        loop.learn_one(x1=x1, x2=x2, y=y)
    np.testing.assert_allclose(decisions, ref.decisions, rtol=0, atol=1e-9)
    assert np.unique(np.sign(ref.decisions[s.T1 + s.Te:])).size > 1   # the current stage is exercised
    again = make_evolvable(name, random_state=3, **small_params(name)).run(s)
    assert np.array_equal(again.decisions, ref.decisions)              # same random_state, same numbers


@pytest.mark.parametrize("name", ALL)
def test_invalid_hyperparameters_raise(name):
    cls = evolvable_class(name)
    with pytest.raises(ValueError, match="step_size"):
        cls(step_size=-1.0)
    with pytest.raises(ValueError, match="reg"):
        cls(reg=float("nan"))
    with pytest.raises(ValueError, match="random_state"):
        cls(random_state=-3)


def test_opfes_hyperparameter_messages():
    with pytest.raises(ValueError, match="kom_row_weight must be one of"):
        OPFES(kom_row_weight="p2")
    with pytest.raises(ValueError, match="n_new_features must be an integer in \\[1, inf\\]"):
        OPFES(n_new_features=0)
    with pytest.raises(ValueError, match="omega_init must be in \\(0.0, 1.0\\)"):
        OPFES(omega_init=1.0)
    with pytest.raises(ValueError, match="use_kom must be True or False"):
        OPFES(use_kom="yes")


def test_learner_rejects_bad_rounds_and_keeps_its_state(german_stream):
    s = german_stream
    m = OPFES(random_state=0, **small_params("opfes"))
    rows = list(s.rows())
    for _, x1, x2, y in rows[: s.T1 + 3]:
        m.learn_one(x1=x1, x2=x2, y=y)
    before = (m.w1_.copy(), m.stats2_.M.copy(), m.n_seen_)
    x1, x2 = rows[0][1], rows[s.T1][2]
    with pytest.raises(ValueError, match="went back"):
        m.learn_one(x1=x1, y=1.0)                               # previous stage after evolving
    with pytest.raises(ValueError, match="dimension may change only when the stage changes"):
        m.learn_one(x1=x1, x2=np.append(x2, 0.5), y=1.0)
    with pytest.raises(ValueError, match="non-finite"):
        m.learn_one(x1=np.where(np.arange(x1.size) == 0, np.inf, x1), x2=x2, y=1.0)
    with pytest.raises(ValueError, match="-1 or \\+1"):
        m.learn_one(x1=x1, x2=x2, y=0.0)
    with pytest.raises(ValueError, match="needs x1"):
        m.learn_one(y=1.0)
    assert np.array_equal(before[0], m.w1_) and np.array_equal(before[1], m.stats2_.M) and before[2] == m.n_seen_
    for _, x1, x2, y in rows[s.T1 + 3:]:
        m.learn_one(x1=x1, x2=x2, y=y)
    with pytest.raises(ValueError, match="went back"):
        m.learn_one(x1=rows[0][1], x2=rows[s.T1][2], y=1.0)      # evolving after current
    with pytest.raises(ValueError, match="went back"):
        m.run(s)                                                # a whole stream from the start


def test_non_finite_spectral_density_is_rejected():
    from okl.evolvable.kom import check_spectral_density, kom_objective, mirror_descent

    M = np.random.default_rng(0).random((3, 4))
    v = np.ones(4)
    for p in ([np.nan, 0.5, 0.25, 0.25], [np.inf, 0.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match="non-finite"):
            check_spectral_density(p)
        with pytest.raises(ValueError, match="non-finite"):
            kom_objective(M, v, p)
        with pytest.raises(ValueError, match="non-finite"):
            mirror_descent(M, v, iterations=3, step=0.1, p0=p)
    with pytest.raises(ValueError, match="sum to 1"):
        check_spectral_density([0.5, 0.6])
    with pytest.raises(ValueError, match="finite"):
        mirror_descent(M, v, iterations=3, step=np.inf)
    with pytest.raises(ValueError, match="finite"):
        mirror_descent(np.where(M > 0.5, np.nan, M), v, iterations=3, step=0.1)
    # a huge but finite step stays on the simplex (the exponent is shifted by min g)
    p = mirror_descent(M, v, iterations=3, step=1e300).p
    assert np.isfinite(p).all() and abs(p.sum() - 1) < 1e-12


# ---- model reuse ----------------------------------------------------------------------------

def test_reuse_preserves_predictions_when_the_new_space_is_a_rotation(german_stream):
    """x2 = R x1 with R orthogonal and new frequencies u2 = R u1, b2 = b1: phi2(x2) = phi1(x1), so
    the KOM discrepancy is 0 and the reused w2 = U*^T w1 must reproduce w1's predictions on the
    evolving sample (Lemma 4.2 with E = 0)."""
    rng = np.random.default_rng(5)
    X1 = german_stream.X1[:, :6]
    n1, te = german_stream.T1, german_stream.Te
    R, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    X2 = X1[n1:] @ R.T
    y = german_stream.y[: n1 + te + 1]
    m = OPFES(n_old_features=30, n_new_features=30, kom_iterations=0, use_ideal_kernel=False, sigma=1.0,
              step_size=3.0, random_state=0)
    m.run(EvolvableStream(X1[:n1], np.zeros((0, 6)), y[:n1], n1, 0, 0))
    # start the new space by hand and align its frequencies with the old ones (test-only surgery)
    m._start_new(6)
    m.dim_new_ = 6
    m.u2_, m.b2_ = m.u1_ @ R.T, m.b1_.copy()
    res = m.run(EvolvableStream(X1[n1:], np.vstack([X2, X2[-1:]]), y[n1:], 0, te, 1))
    assert m.transition_["reused_rank"] >= 1
    old = (fourier_map(X1[n1:], m.u1_, m.b1_) / np.sqrt(30)) @ m.w1_
    z2 = fourier_map(X2, m.u2_, m.b2_) * np.sqrt(m.p2_)
    np.testing.assert_allclose(z2 @ m.w2_initial_, old, atol=1e-8)
    assert np.abs(old).max() > 0.1
    # the first current-stage decision is the reused model's (before it learns)
    np.testing.assert_allclose(res.decisions[-1], z2[-1] @ m.w2_initial_, atol=1e-12)


# ---- real data ------------------------------------------------------------------------------

@pytest.mark.parametrize("dataset", ["pol", "house16h"])
def test_opfes_beats_rff_rogd_and_lin_rogd(dataset, data_dir):
    """10 paired runs (same split and order per seed) on a 4,000-row prefix with d = 200 features and
    T_M = 100 (paper: full data, d = 1000, T_M = 1000). Measured: pol OPFES 0.220 vs rff-ROGD 0.291
    (OPFES lower in 10/10 runs) and lin-ROGD 0.338 (10/10); house16h 0.207 vs 0.237 (8/10) and 0.293
    (10/10)."""
    X, y = okl.load_dataset(dataset, data_dir)
    order = okl.data.permutation(len(y), 123)[:4000]
    X, y = X[order], y[order]
    cer = {k: [] for k in ("opfes", "rff-rogd", "lin-rogd")}
    for seed in range(10):
        s = make_evolvable_stream(X, y, seed=seed)
        for name in cer:
            params = {"step_size": 3.0 if name == "lin-rogd" else 10.0, "horizon": s.n_rounds}
            if name != "lin-rogd":
                params.update(sigma=0.25, n_old_features=200, n_new_features=200)
            if name == "opfes":
                params["kom_iterations"] = 100
            cer[name].append(make_evolvable(name, random_state=seed, **params).run(s).current_error_rate)
    ours = np.array(cer["opfes"])
    for other in ("rff-rogd", "lin-rogd"):
        theirs = np.array(cer[other])
        assert ours.mean() < theirs.mean() - 0.015, (dataset, other, ours.mean(), theirs.mean())
        assert (ours < theirs).sum() >= 7, (dataset, other, ours, theirs)
    assert 0.15 < ours.mean() < 0.26


# ---- command line and experiments ------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n"


def test_okl_evolve_prints_cer_and_writes_the_figure(tmp_path, data_dir, capsys):
    import argparse

    from okl.cli.evolve import add_parser, main_evolve

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["evolve", "--dataset", "splice", "--learners", "opfes,lin-rogd", "--runs", "2",
                              "--features", "30", "--data-dir", data_dir, "--out", str(tmp_path)])
    assert main_evolve(args) == 0
    out, err = capsys.readouterr()
    assert "T1=1428 Te=318 T2=1429" in out and "2 runs (seeds 0..1)" in out
    cer = {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.startswith(("opfes", "lin-"))}
    assert set(cer) == {"opfes", "lin-rogd"} and all(0.05 < v < 0.55 for v in cer.values())
    assert "run 2/2" in err                                     # progress on stderr
    assert (tmp_path / "evolve-splice.png").read_bytes()[:8] == PNG
    bad = parser.parse_args(["evolve", "--dataset", "splice", "--learners", "nope", "--data-dir", data_dir])
    assert main_evolve(bad) == 2


def test_quick_experiments(tmp_path, data_dir):
    from okl.experiments import ExperimentContext, experiments

    ctx = ExperimentContext(data_dir=data_dir, runs=2, out_dir=tmp_path, progress=False, quick=True)
    table = experiments()["opfes-table2"].func(ctx)
    assert "/ .3070±.0079" in table.markdown and "/ .4307" in table.markdown   # splice, paper numbers
    assert "OPFES win/tie/loss" in table.markdown
    csv_rows = (tmp_path / "opfes-table2.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 2 * 9                                        # 2 runs x 9 learners (OCDS included)
    assert (tmp_path / "opfes-table2-cer.png").read_bytes()[:8] == PNG
    ablation = experiments()["opfes-ablation"].func(ctx)
    assert "no KOM" in ablation.markdown and len((tmp_path / "opfes-ablation.csv").read_text().splitlines()) == 9


# ---- OCDS --------------------------------------------------------------------------------------

def _ocds_reference(stream, c, lam, alpha, beta, map_step, intercept, gamma, ensemble, omega0=0.5):
    """Plain-Python OCDS (okl.evolvable.ocds docstring), written independently of the compiled loop."""
    D1, D2 = stream.dims
    D = D1 + D2
    G = [[0.0] * (D + 1) for _ in range(D)]
    wr = [0.0] * (D + 1)
    wo = [0.0] * (D + 1)
    a = np.log((1 - omega0) / omega0)
    out = []
    for t, (stage, x1, x2, y) in enumerate(stream.rows()):
        u = [0.0] * D
        if x1 is not None:
            u[:D1] = list(x1)
        if x2 is not None:
            u[D1:] = list(x2)
        lo = 0 if x1 is not None else D1
        hi = D if x2 is not None else D1
        O = range(lo, hi)
        comp = [u[j] if j in O else G[j][D] + sum(G[j][k] * u[k] for k in O) for j in range(D)] + [intercept]
        obs = [u[j] if j in O else 0.0 for j in range(D)] + [intercept]
        fr = sum(p * q for p, q in zip(wr, comp))
        fo = sum(p * q for p, q in zip(wo, obs))
        if ensemble:
            om = 1.0 / (1.0 + np.exp(a))
            out.append(om * fo + (1 - om) * fr)
            lr = max(0.0, 1 - y * fr) + 0.5 * lam * sum(v * v for v in wr)
            lo_ = max(0.0, 1 - y * fo) + 0.5 * lam * sum(v * v for v in wo)
            a += gamma * (lo_ - lr)
        else:
            out.append(fr)
        tau = c / np.sqrt(t + 1)

        def step(w, z, f):
            new = []
            for j, (wj, zj) in enumerate(zip(w, z)):
                v = (1 - tau * lam) * wj + (tau * y * zj if y * f < 1 else 0.0)
                if j < len(w) - 1:
                    v = np.sign(v) * max(abs(v) - tau * beta, 0.0)
                new.append(v)
            return new

        wr = step(wr, comp, fr)
        if ensemble:
            wo = step(wo, obs, fo)
        if hi - lo >= 2:
            eta = map_step / (1 + sum(u[k] ** 2 for k in O))
            for j in O:
                r = G[j][D] + sum(G[j][k] * u[k] for k in O if k != j) - u[j]
                for k in O:
                    if k != j:
                        G[j][k] -= eta * (r * u[k] + alpha * G[j][k])
                G[j][D] -= eta * r
    return np.array(out)


def _tiny_stream():
    return EvolvableStream(np.array([[1.0], [1.0]]), np.array([[2.0], [2.0]]), np.array([1.0, 1.0, 1.0]), 1, 1, 1)


def test_ocds_matches_a_hand_computation():
    # round 1: f = 0, w = (1, 0); round 2: f = 1 (no step); graph (eta = 1/(1 + 1 + 4)):
    # r_1 = -1: G_12 = 2/6, g_1 = 1/6; r_2 = -2: G_21 = 2/6, g_2 = 2/6;
    # round 3 (x2 only): x1 recovered as g_1 + G_12 x2 = 1/6 + 2/3 = 5/6, f = 1 * 5/6
    m = make_evolvable("ocds", step_size=1.0, reg=0.0, beta=0.0, alpha=0.0, map_step=1.0, ensemble=False,
                       fit_intercept=False)
    d = m.run(_tiny_stream()).decisions
    assert np.allclose(d, [0.0, 1.0, 5.0 / 6.0], atol=1e-12)
    assert np.allclose(m.G_, [[0.0, 1 / 3, 1 / 6], [1 / 3, 0.0, 1 / 3]])
    # with the l1 penalty beta = 0.5: w1 = 1 - 0.5 after round 1; round 2 is a margin error at f = 0.5:
    # w = (0.5 + (1 - 0.5)/sqrt 2, (2 - 0.5)/sqrt 2); round 3: f = w1 * 5/6 + w2 * 2
    m = make_evolvable("ocds", step_size=1.0, reg=0.0, beta=0.5, alpha=0.0, map_step=1.0, ensemble=False,
                       fit_intercept=False)
    d = m.run(_tiny_stream()).decisions
    w1, w2 = 0.5 + 0.5 / np.sqrt(2), 1.5 / np.sqrt(2)
    assert np.allclose(d, [0.0, 0.5, w1 * 5 / 6 + w2 * 2], atol=1e-12)
    assert abs(d[2] - 2.832614) < 1e-6


@pytest.mark.parametrize("ensemble", [True, False])
def test_ocds_matches_the_plain_reference(ensemble):
    rng = np.random.default_rng(3)
    X = rng.random((90, 5))
    y = np.where(X[:, 0] + X[:, 3] > 1.0, 1.0, -1.0)
    s = make_evolvable_stream(X, y, seed=2, evolving_length=20)
    params = dict(step_size=0.7, reg=0.01, alpha=0.05, beta=0.002, map_step=0.8, gamma=0.3, ensemble=ensemble)
    got = make_evolvable("ocds", **params).run(s).decisions
    want = _ocds_reference(s, 0.7, 0.01, 0.05, 0.002, 0.8, 1.0, 0.3, ensemble)
    assert np.allclose(got, want, atol=1e-10)
    # per-round protocol gives the same decisions, and no label is used before its prediction
    m = make_evolvable("ocds", **params)
    per = []
    for stage, x1, x2, yy in s.rows():
        per.append(m.predict_one(x1=x1, x2=x2))
        m.learn_one(x1=x1, x2=x2, y=yy)
    assert np.allclose(per, got, atol=1e-10)
    y2 = s.y.copy()
    y2[60] = -y2[60]
    s2 = EvolvableStream(s.X1, s.X2, y2, s.T1, s.Te, s.T2)
    got2 = make_evolvable("ocds", **params).run(s2).decisions
    assert np.allclose(got2[:61], got[:61]) and not np.allclose(got2[61:], got[61:])


def test_ocds_recovers_a_linear_relation_across_spaces():
    # x2 = 1 - x1 exactly: after the evolving stage the graph recovers x1 from x2 closely
    rng = np.random.default_rng(0)
    a = rng.random(600)
    X = np.column_stack([a, 1.0 - a])
    y = np.where(a > 0.5, 1.0, -1.0)
    s = EvolvableStream(X[:400, :1], X[200:, 1:], y, 200, 200, 200)
    m = make_evolvable("ocds", alpha=0.0, map_step=1.0, step_size=1.0)
    r = m.run(s)
    rec = m.G_[0, 2] + m.G_[0, 1] * X[400:, 1]
    # the affine link x1 = 1 - x2 is learned from the 200 evolving rounds (NLMS, not exactly)
    assert m.G_[0, 1] < -0.5 and m.G_[0, 2] > 0.5
    assert np.abs(rec - X[400:, 0]).mean() < 0.1
    # the old model keeps working on the recovered x1: far below chance in the current stage
    assert r.current_error_rate < 0.15


def test_a_fixed_split_keeps_its_columns_for_every_seed():
    """opfes --protocol published's fixed-split variant: new space = the given columns, old = the rest;
    the row order still follows the seed (okl.data.permutation)."""
    from okl.data import permutation
    from okl.evolvable.stream import make_evolvable_stream

    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(300, 6)), np.where(rng.normal(size=300) > 0, 1.0, -1.0)
    for seed in (0, 1):
        s = make_evolvable_stream(X, y, seed=seed, new_columns=range(3))
        assert list(s.new_columns) == [0, 1, 2] and list(s.old_columns) == [3, 4, 5]
        assert np.array_equal(s.order, permutation(300, seed))
    with pytest.raises(ValueError):
        make_evolvable_stream(X, y, seed=0, new_columns=range(6))
