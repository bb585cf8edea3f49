"""``auto``: the pool, the online aggregation (against a plain-Python reference), tracking a
changing best member, dropping a diverging member, transparency and model files.

The generic suite (tests/test_learner_checks.py, ``-k auto``) covers run == per-instance loop,
save/load mid-stream, seeds and bad input.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import okl
from okl.data import permutation
from okl.engine.aggregation import AGG_HEAD, CUM_MIX, CUM_STACK, LAMBDA, STACK_HEAD, stack_rows
from okl.ensemble.auto import WIDTHS, WINDOW_WIDTH, Auto, aggregate_rounds, default_pool, new_agg


# ---- plain-Python reference of the aggregation (module docstring of okl.ensemble.auto) -------


class ReferenceHedge:
    """AdaHedge with fixed share alpha_t = 1 / (t + 1) over N experts (plain Python)."""

    def __init__(self, N):
        self.L, self.alive, self.delta, self.t = np.zeros(N), np.ones(N, dtype=bool), 0.0, 0

    def rate(self):
        n = int(self.alive.sum())
        return math.log(n) / self.delta if self.delta > 0 and n > 1 else math.inf

    def weights(self, eta=None):
        eta = self.rate() if eta is None else eta
        idx = np.flatnonzero(self.alive)
        w = np.zeros(len(self.L))
        lmin = self.L[idx].min()
        if eta == math.inf:
            w[idx] = (self.L[idx] == lmin).astype(float)
        else:
            w[idx] = np.exp(-eta * (self.L[idx] - lmin))
        return w / w.sum()

    def update(self, loss):
        alive, n, eta = self.alive, int(self.alive.sum()), self.rate()
        w = self.weights(eta)
        h = float(np.sum(w[alive] * loss[alive]))
        if eta == math.inf:
            m = loss[alive & (w > 0)].min()
        else:
            lm = loss[alive].min()
            m = lm - math.log(np.sum(w[alive] * np.exp(-eta * (loss[alive] - lm)))) / eta
        self.delta += max(h - m, 0.0)
        self.L[alive] += loss[alive]
        self.t += 1
        if n > 1 and self.delta > 0:
            eta2 = math.log(n) / self.delta
            w = self.weights(eta2)
            self.L[alive] = -np.log((1 - 1.0 / (self.t + 1)) * w[alive] + 1.0 / (self.t + 1) / n) / eta2
        self.L[alive] -= self.L[alive].min()


def reference_aggregate(D, Y, classification):
    """The mixture; in regression also the stacking layer, its weights v solved from scratch as
    the ridge regression (lambda I + sum r r^T) v = sum r (y - f) over the rounds after lambda is
    fixed (lambda = the population variance of the first 50 targets)."""
    n_rows, N = D.shape
    members, top = ReferenceHedge(N), ReferenceHedge(2)
    lo, hi = math.inf, -math.inf
    out = np.empty(n_rows)
    lam, A, b, v, cum = None, np.zeros((N, N)), np.zeros(N), np.zeros(N), np.zeros(2)
    for r in range(n_rows):
        alive = members.alive
        alive &= np.isfinite(D[r])
        c = np.clip(D[r], -1, 1) if classification else (np.clip(D[r], lo, hi) if lo <= hi else D[r].copy())
        w = members.weights()
        f = float(np.sum(w[alive] * c[alive]))
        out[r] = f
        if not classification:
            dev = np.where(alive, c - f, 0.0)
            s = f + float(np.sum(v * dev))
            s = min(max(s, lo), hi) if lo <= hi else s
            u = top.weights()[1] if cum[1] < cum[0] else 0.0  # the gate: the stack leads on the record
            out[r] = f if u == 0 else (1 - u) * f + u * s
        # classification: half the clipped hinge, half the 0-1 loss of sign(c) (+1 at c = 0)
        loss = (0.25 * (1 - Y[r] * c) + 0.5 * (np.where(c >= 0, 1.0, -1.0) != Y[r])) if classification \
            else (c - Y[r]) ** 2
        members.update(loss)
        if not classification:
            top.update(np.array([(f - Y[r]) ** 2, (s - Y[r]) ** 2]))
            cum += np.array([(f - Y[r]) ** 2, (s - Y[r]) ** 2])
            if lam is not None:
                A += np.outer(dev, dev)
                b += dev * (Y[r] - f)
                v = np.linalg.solve(lam * np.eye(N) + A, b)
            elif r + 1 >= 50 and np.var(Y[:r + 1]) > 0:
                lam = float(np.var(Y[:r + 1]))
            lo, hi = min(lo, Y[r]), max(hi, Y[r])
    return out, members.L


def compiled_aggregate(D, Y, classification):
    """The engine's aggregation, then (regression) the stacking layer on the mixture it gave, as
    auto's block path runs them."""
    N = D.shape[1]
    L, alive, agg = np.zeros(N), np.ones(N), new_agg(N, classification)
    out = np.empty(D.shape[0])
    aggregate_rounds(D, Y, L, alive, agg, classification, out)
    if len(agg) > AGG_HEAD:
        stack_rows(D, Y, np.ones(N), agg[AGG_HEAD:], out)
    return out, L, alive


@pytest.mark.parametrize("classification", [True, False])
def test_aggregation_matches_reference(classification):
    rng = np.random.default_rng(3)
    n, N = 400, 5
    Y = np.where(rng.random(n) < 0.6, 1.0, -1.0) if classification else rng.random(n)
    D = Y[:, None] * rng.uniform(-0.5, 2.0, (n, N)) + rng.normal(0, 0.5, (n, N))
    D[200:, 3] = np.nan  # member 3 diverges at round 200
    ref, L_ref = reference_aggregate(D, Y, classification)
    out, L, alive = compiled_aggregate(D, Y, classification)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(L[alive > 0], L_ref[alive > 0], rtol=0, atol=1e-9)
    assert alive.tolist() == [1.0, 1.0, 1.0, 0.0, 1.0]


def test_weights_concentrate_on_the_best_member():
    rng = np.random.default_rng(0)
    n = 3000
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    right = np.where(rng.random(n) < 0.9, Y, -Y)  # 10 % mistakes
    noise = [np.where(rng.random(n) < p, Y, -Y) for p in (0.5, 0.6, 0.7)]
    D = np.column_stack([right, *noise])
    out, L, _ = compiled_aggregate(D, Y, True)
    mistakes = np.mean(np.where(out >= 0, 1.0, -1.0) != Y)
    assert mistakes < 0.11  # the best member's 10 % plus a small aggregation regret
    assert np.argmin(L) == 0


def test_a_right_low_margin_member_carries_against_a_confident_one_that_errs():
    """Member A is always right with margin 0.3; member B says +-1 and is wrong 20 % of the time.
    Under the clipped hinge alone A pays 0.35 a round against B's 0.2 and the mixture follows B
    (about 20 % mistakes); the 0-1 half of the loss (A 0.175, B 0.2) gives A the weight."""
    rng = np.random.default_rng(4)
    n = 3000
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    a = 0.3 * Y
    b = np.where(rng.random(n) < 0.8, Y, -Y)
    out, L, _ = compiled_aggregate(np.column_stack([a, b]), Y, True)
    assert np.argmin(L) == 0
    assert np.mean(np.where(out[500:] >= 0, 1.0, -1.0) != Y[500:]) < 0.05  # B alone: 0.2


def test_follows_a_change_of_best_member():
    rng = np.random.default_rng(1)
    n = 4000
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    a = np.where(rng.random(n) < 0.95, Y, -Y)
    b = np.where(rng.random(n) < 0.95, Y, -Y)
    a[n // 2:] *= -1  # member a turns adversarial half-way; b stays right
    b[: n // 2] *= -1  # b is wrong in the first half
    out, _, _ = compiled_aggregate(np.column_stack([a, b]), Y, True)
    late = np.mean(np.where(out[n // 2 + 200:] >= 0, 1.0, -1.0) != Y[n // 2 + 200:])
    assert late < 0.07


def test_the_stack_carries_where_a_linear_combination_beats_every_convex_mixture():
    """Two members that both shrink the target (0.5 y and 0.25 y plus noise): every convex
    mixture keeps at least a quarter of E y^2 as squared loss; the stacking layer finds y from
    their deviations and the top level moves to it."""
    rng = np.random.default_rng(5)
    n = 1500
    Y = rng.normal(0.0, 1.0, n)
    D = np.column_stack([0.5 * Y + rng.normal(0, 0.01, n), 0.25 * Y + rng.normal(0, 0.01, n)])
    out, _, _ = compiled_aggregate(D, Y, False)
    best_member = np.mean((D[500:, 0] - Y[500:]) ** 2)
    assert np.mean((out[500:] - Y[500:]) ** 2) < 0.02 * best_member
    # classification keeps the plain mixture: no stacking state
    assert new_agg(2, True).shape == (4,) and new_agg(1, False).shape == (4,)


def test_regression_predictions_stay_in_the_observed_range():
    rng = np.random.default_rng(2)
    Y = rng.random(500)
    D = np.column_stack([Y + rng.normal(0, 0.1, 500), 10.0 * np.ones(500), -5.0 * np.ones(500)])
    out, _, _ = compiled_aggregate(D, Y, False)
    assert out[1:].min() >= Y.min() - 1e-12 and out[1:].max() <= Y.max() + 1e-12


# ---- the learner -----------------------------------------------------------------------


def test_registered_and_default_pool():
    m = okl.make("auto")
    assert isinstance(m, Auto) and m.name == "auto" and "auto" in okl.learners()
    for task in ("classification", "regression"):
        pool = default_pool(task)
        families = {name for name, _, _ in pool}
        assert families == {"nogd", "forks", "fogd", "linear", "window"}
        assert {w for n, w, _ in pool if w is not None and n != "window"} == set(WIDTHS)
        assert [(n, w) for n, w, _ in pool if n == "window"] == [("window", WINDOW_WIDTH)]  # sigma_0 / 4
        l1 = [(n, w) for n, w, p in pool if p.get("kernel") == "laplacian"]
        assert l1 == [("fogd", w) for w in WIDTHS]  # the L1 geometry: three Laplacian FOGD widths
        name, width, params = pool[-1]  # the affine family, appended (model files index the pool)
        assert (name, width, params["scale"]) == ("linear", None, "affine")
        assert params.get("loss") == ("logistic" if task == "classification" else None)
        assert params.get("degree", 1) == (1 if task == "classification" else 2)
    assert len(m.member_labels()) == 19


def test_l1_members_take_the_window_mean_l1_distance(german):
    """The Laplacian members' centre width is half the window's mean pairwise L1 distance (on the
    scaled rows), their directions Cauchy draws shared across the three widths (4U, 2U, U); with a
    kernel given they leave the pool."""
    X, y = german
    m = okl.make("auto", random_state=0)
    m.run(X[:60], y[:60])
    W = m.inputs.scaled_rows(m, np.ascontiguousarray(X[:50], dtype=float), commit=False)
    mean_l1 = np.abs(W[:, None, :] - W[None, :, :]).sum(-1).mean()
    lap = [mb for mb in m.pool_ if type(mb.kernel_).__name__ == "Laplacian"]
    assert [mb.kernel_.sigma for mb in lap] == pytest.approx([mean_l1 / 2 * w for w in WIDTHS], rel=1e-12)
    np.testing.assert_array_equal(lap[0].U_, 4.0 * lap[2].U_)
    np.testing.assert_array_equal(lap[1].U_, 2.0 * lap[2].U_)
    assert np.abs(lap[2].U_).max() > 20 * np.median(np.abs(lap[2].U_))  # Cauchy tails, not Gaussian
    given = okl.make("auto", kernel=okl.RBF(sigma=1.0), random_state=0)
    given.run(X[:60], y[:60])
    assert len(given.pool_) == 15 and all(type(mb.kernel_).__name__ == "RBF" for mb in given.pool_
                                          if getattr(mb, "kernel_", None) is not None)


@pytest.fixture(scope="module")
def german():
    X, y = okl.load_dataset("german")  # bundled
    p = permutation(len(y), 0)
    return X[p], y[p]


def test_diagnostics_show_the_weights_and_width(german):
    X, y = german
    m = okl.make("auto", random_state=0)
    trace = m.run(X[:400], y[:400])
    diag = trace.diagnostics
    weights = {k: v for k, v in diag.items() if k.startswith("weight[")}
    assert len(weights) == 19 and abs(sum(weights.values()) - 1.0) < 1e-9
    assert diag["carried_by"] in {k[len("weight["):-1] for k in weights}
    assert weights[f"weight[{diag['carried_by']}]"] == max(weights.values())
    assert diag["width_rule"].startswith("scale") and diag["sigma"] > 0
    assert diag["members_alive"] == 19
    # the members' kernels follow the chosen width
    sigmas = sorted({mem.kernel_.sigma for mem in m.pool_ if type(mem.kernel_) is okl.RBF and mem.name != "window"})
    np.testing.assert_allclose(sigmas, [diag["sigma"] * w for w in WIDTHS])
    window = next(mem for mem in m.pool_ if mem.name == "window")
    assert window.kernel_.sigma == pytest.approx(diag["sigma"] / 4, rel=1e-12) and window.budget == 200
    l1 = sorted({mem.kernel_.sigma for mem in m.pool_ if type(mem.kernel_) is okl.Laplacian})
    np.testing.assert_allclose(l1, [diag["sigma_l1"] * w for w in WIDTHS])


def test_given_kernel_sets_the_centre_width(german):
    X, y = german
    m = okl.make("auto", kernel=okl.RBF(sigma=3.0), random_state=0)
    m.run(X[:60], y[:60])
    assert sorted({mem.kernel_.sigma for mem in m.pool_ if mem.kernel_ is not None}) == [0.75, 1.5, 3.0, 6.0]


def test_a_diverging_member_is_dropped(data_dir):
    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)[:600]
    members = [("nogd", 1.0, {}), ("linear", None, {"eta": 50.0})]
    m = okl.make("auto", loss="squared", members=members, budget=20, random_state=0)
    trace = m.run(X[p], y[p])
    assert np.isfinite(trace.decisions).all()
    assert trace.diagnostics["members_alive"] == 1
    assert trace.diagnostics["carried_by"].startswith("nogd")
    # the mixture is no worse than the surviving member on the rows after the warm-up
    alone = okl.make("nogd", loss="squared", budget=20, kernel=m.pool_[0].kernel_,
                     random_state=int(np.random.default_rng(0).integers(2 ** 31 - 1)))
    assert trace.mean_squared_loss < 2 * np.mean((alone.run(X[p], y[p]).decisions - y[p]) ** 2) + 0.05
    # per event (the fast plan's compiled calls): the same rounds, the same member dropped
    ev = okl.make("auto", loss="squared", members=members, budget=20, random_state=0)
    f = np.array([(ev.predict_one(x), ev.learn_one(x, t))[0] for x, t in zip(X[p], y[p])])
    np.testing.assert_array_equal(f, trace.decisions)
    assert ev.diagnostics()["members_alive"] == 1
    # and when the last member diverges, learn_one says so
    gone = okl.make("auto", loss="squared", members=[("linear", None, {"eta": 50.0})], random_state=0)
    with pytest.raises(okl.NonFiniteError, match="not finite"):
        for x, t in zip(X[p], y[p] * 1e12):
            gone.predict_one(x)
            gone.learn_one(x, float(t))


def test_custom_members_and_validation():
    m = okl.make("auto", members=[("fogd", 0.5, {"eta": 1.0}), ("linear", None, {})])
    assert m.member_labels() == ["fogd(sigma x0.5, eta=1)", "linear()"]
    for bad in ([("auto", None, {})], [("nope", None, {})], [("nogd", -1.0, {})], [("nogd", 1.0)], [],
                "nogd"):
        with pytest.raises(ValueError, match="members"):
            okl.make("auto", members=bad)
    with pytest.raises(ValueError, match="budget"):
        okl.make("auto", budget=0)


def test_model_file_round_trip_and_damaged_members(german, tmp_path):
    X, y = german
    m = okl.make("auto", budget=20, random_state=1)
    m.run(X[:300], y[:300])
    path = tmp_path / "auto.npz"
    m.save(path)
    loaded = okl.Learner.load(path)
    np.testing.assert_array_equal(loaded.run(X[300:], y[300:]).decisions, m.run(X[300:], y[300:]).decisions)
    # a model file whose member bytes are damaged is refused with ModelFileError
    import zipfile

    bad = tmp_path / "bad.npz"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(bad, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "state__members_blob_.npy":
                data = data[:-200] + bytes(200)
            zout.writestr(info, data)
    with pytest.raises(okl.ModelFileError):
        okl.Learner.load(bad)


def test_regression_model_files_hold_the_stacking_state_or_run_the_mixture_alone(data_dir, tmp_path):
    """The stacking layer's state is in agg_ and survives a model file; a file with a four-entry
    agg_ (written before the layer existed) loads and runs the mixture alone; another length is
    refused, naming agg_."""
    import io
    import zipfile

    X, y = okl.load_dataset("cpusmall", data_dir)
    p = permutation(len(y), 0)[:400]
    X, y = X[p], y[p]
    m = okl.make("auto", loss="squared", budget=20, random_state=0)
    m.run(X[:300], y[:300])
    n = len(m.L_)
    st = m.agg_[AGG_HEAD:]
    assert m.agg_.shape == (AGG_HEAD + STACK_HEAD + n + n * n,) and st[LAMBDA] > 0.0  # lambda fixed
    share, mixture_loss, stack_loss = m.diagnostics()["stack_share"], st[CUM_MIX], st[CUM_STACK]
    assert mixture_loss > 0.0 and stack_loss > 0.0
    assert (share > 0.0) == (stack_loss < mixture_loss) and share < 1.0  # the gate
    path = tmp_path / "auto.npz"
    m.save(path)

    def rewrite(agg, name):
        out = tmp_path / name
        with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w") as zout:
            for info in zin.infolist():
                data = zin.read(info)
                if info.filename == "state__agg_.npy":
                    buf = io.BytesIO()
                    np.save(buf, agg)
                    data = buf.getvalue()
                zout.writestr(info, data)
        return out

    loaded = okl.Learner.load(path)
    np.testing.assert_array_equal(loaded.run(X[300:], y[300:]).decisions, m.run(X[300:], y[300:]).decisions)
    old = okl.Learner.load(rewrite(loaded.agg_[:4].copy(), "old.npz"))
    f = old.run(X[300:], y[300:]).decisions
    assert np.isfinite(f).all() and old.agg_.shape == (4,) and "stack_share" not in old.diagnostics()
    with pytest.raises(okl.ModelFileError, match="agg_"):
        okl.Learner.load(rewrite(loaded.agg_[:7].copy(), "bad.npz"))
    nan = loaded.agg_.copy()
    nan[AGG_HEAD + STACK_HEAD + 1] = np.nan  # a stack weight
    with pytest.raises(okl.ModelFileError, match="agg_"):
        okl.Learner.load(rewrite(nan, "nan.npz"))


def test_classification_never_runs_or_compiles_the_stacking_layer(data_dir, tmp_path):
    """The layer runs beside the engine (okl.engine.aggregation.stack_*), so a classification
    cold start (an empty Numba cache: every function the engine calls is typed, and so listed in
    its signatures) compiles none of it; regression calls it. Each in a fresh process."""
    import os
    import subprocess
    import sys

    code = ("import sys, okl; from okl.engine import aggregation as a; "
            "X, y = okl.load_dataset(sys.argv[1], sys.argv[2]); "
            "okl.make('auto', random_state=0, **({} if sys.argv[1] == 'german' else {'loss': 'squared'}))"
            ".run(X[:120], y[:120]); "
            "print(sum(len(f.signatures) for f in (a._stack_round, a.stack_rows, a.stack_learn, a.stack_predict)))")
    cold = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), OKL_COMPILE_PROCESSES="1")
    used = [subprocess.run([sys.executable, "-c", code, name, str(data_dir)], capture_output=True, text=True,
                           check=True, env=env).stdout.split()[-1]
            for name, env in (("german", cold), ("cpusmall", None))]
    assert used[0] == "0"  # classification, cold: none of it typed
    assert used[1] != "0"  # regression's run(): the block path's stack_rows


def test_the_stacking_layer_takes_chickweights_past_the_mixture():
    """River's ChickWeights (578 rows in time order; what predicts a chick is its own earlier
    weight): the convex mixture of auto's members reached an MAE of 21.41 (the window member
    alone 21.28); with the stacking layer 19.84, River's best (AMF) 19.86."""
    datasets = pytest.importorskip("river.datasets")
    from okl.river import OKLRiverRegressor

    model, err = OKLRiverRegressor(seed=0), []
    for x, y in datasets.ChickWeights():
        err.append(abs(model.predict_one(x) - y))
        model.learn_one(x, y)
    assert np.mean(err) < 20.2
    assert model.model.diagnostics()["stack_share"] > 0.5


def test_okl_run_prints_the_members_final_weights(data_dir, capsys):
    from okl.cli import main

    assert main(["run", "--learners", "auto", "--runs", "1", "--max-rows", "300", "--data-dir", data_dir,
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("auto: final member weights"))
    import re

    weights = [float(w) for w in re.findall(r"\) (\d+\.\d+)", line)]
    assert weights
    assert weights == sorted(weights, reverse=True) and 0.0 < sum(weights) <= 1.0 + 1e-9


def test_engine_members_learn_as_alone_and_share_features(data_dir):
    """Inside the engine every member learns exactly what it would alone on the rows auto scaled;
    NOGD's two steps at one width read one map's features, and a member whose feature source left
    the pool computes its own."""
    X, y = okl.load_dataset("svmguide1", data_dir)
    order = okl.data.permutation(len(y), 0)[:900]
    X, y = np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    m = okl.make("auto", budget=30, random_state=0)
    m.run(X[:400], y[:400])
    eng = m._engine()
    from okl.components.columns import SRC
    shared = [j for j in range(len(m.pool_)) if eng.I[j, SRC] != j and m.pool_[j].name != "fogd"]
    assert shared and all(m.pool_[j].name == "nogd" and m.pool_[j].lr == 3.0 for j in shared)
    fogd = [j for j in range(len(m.pool_)) if m.pool_[j].name == "fogd"]  # one draw a family: 4U, 2U, U
    assert [int(eng.I[j, SRC]) for j in fogd] == [fogd[1], fogd[2], fogd[2], fogd[4], fogd[5], fogd[5]]
    np.testing.assert_array_equal(m.pool_[fogd[0]].U_, 4.0 * m.pool_[fogd[2]].U_)
    np.testing.assert_array_equal(m.pool_[fogd[3]].U_, 4.0 * m.pool_[fogd[5]].U_)
    src = int(eng.I[shared[0], SRC])
    m.alive_[src] = 0.0  # the source leaves: the member reading its features must go on alone
    for t in range(400, 900):
        m.predict_one(X[t])
        m.learn_one(X[t], y[t])
    Xs = m.inputs.scaled_rows(m, X, commit=False)
    for j in (shared[0], shared[-1], *fogd):  # FOGD: the double angle is within a few ulp
        member = m.pool_[j]
        alone = okl.make(member.name, **member.get_params())
        alone.inputs.ensure_started(alone, X.shape[1])
        if member.name == "fogd":
            alone.U_ = member.U_.copy()
        for t in range(900):
            alone.learn_one(Xs[t], y[t])
        np.testing.assert_allclose(member.w_, alone.w_, rtol=0, atol=1e-9)
        assert member.n_seen_ == 900


def test_the_nogd_pair_at_one_width_computes_its_transition_map_once(data_dir, monkeypatch):
    """NOGD's two steps at one width keep the same support vectors in stage 1, so their transition
    takes one eigen-decomposition (three for the six members), and each member ends as it would
    alone: the same map and output weights as a pool whose every member computes its own."""
    from okl.learners.nogd import NOGD

    X, y = okl.load_dataset("svmguide1", data_dir)
    order = okl.data.permutation(len(y), 0)[:500]
    X, y = np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    calls = []
    own = NOGD._eigen_map
    monkeypatch.setattr(NOGD, "_eigen_map", lambda self: calls.append(self.lr) or own(self))
    shared = okl.make("auto", budget=30, random_state=0)
    for t in range(500):
        shared.predict_one(X[t])
        shared.learn_one(X[t], y[t])
    assert sorted(calls) == [1.0, 1.0, 1.0]  # the first of each pair computes it
    alone = okl.make("auto", budget=30, random_state=0)
    original = NOGD._transition
    monkeypatch.setattr(NOGD, "_transition", lambda self, x, y, f, n, work=None: original(self, x, y, f, n))
    for t in range(500):
        alone.predict_one(X[t])
        alone.learn_one(X[t], y[t])
    assert len(calls) == 3 + 3 + 6  # (auto's three, which this pool ignores, and each member's own)
    nogd = [j for j, m in enumerate(shared.pool_) if m.name == "nogd"]
    for j in nogd:
        a, b = shared.pool_[j], alone.pool_[j]
        assert a.M_ is not None
        np.testing.assert_array_equal(a.M_, b.M_)
        np.testing.assert_array_equal(a.w_, b.w_)
    assert shared.pool_[nogd[0]].M_ is not shared.pool_[nogd[1]].M_


def test_members_outside_the_engine_keep_every_path_consistent(data_dir):
    """A pool with members the engine does not run (SkeGD, PROS-N-KONS: their own Python path, the
    engine aggregates their decisions) beside engine members: per-event decisions equal run()'s
    to 1e-9 and okl stream's blocks equal a learn_one loop exactly."""
    from okl.checks import assert_close, per_instance_decisions
    X, y = okl.load_dataset("svmguide1", data_dir)
    order = okl.data.permutation(len(y), 0)[:500]
    X, y = np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    members = [["skegd", 1.0, {"rho": 40}], ["pros-n-kons", 1.0, {}], ["nogd", 0.5, {}], ["linear", None, {}]]
    kw = dict(budget=30, members=members, random_state=0)
    m = okl.make("auto", **kw)
    ref = m.run(X, y).decisions
    assert m._engine().py == [0, 1] and m.diagnostics()["members_alive"] == 4
    assert m.diagnostics()["members_outside_engine"] == 2
    assert_close(ref, per_instance_decisions(okl.make("auto", **kw), X, y), "auto with Python members")
    loop = okl.make("auto", **kw)
    expected = np.array([loop.events.learn_event(loop, X[t], y[t]) for t in range(500)])
    blocks = okl.make("auto", **kw)
    got = np.concatenate([blocks.events.learn_events(blocks, X[a:b], y[a:b]) for a, b in ((0, 60), (60, 61), (61, 500))])
    np.testing.assert_array_equal(got, expected)


def test_the_affine_member_is_the_linear_learner_on_affine_inputs(german):
    """auto's affine member undoes the symlog map auto applied (a few ulp) and learns as
    okl.make("linear", scale="affine", ...) alone; with a kernel given (no symlog map) it is left
    out, and asked for by name it is refused."""
    X, y = german
    m = okl.make("auto", random_state=0, budget=10)
    m.run(X[:400], y[:400])
    member = m.pool_[-1]
    assert member._unmap and member.scale is None
    alone = okl.make("linear", scale="affine", loss="logistic", eta=0.05)
    alone.run(X[:400], y[:400])
    np.testing.assert_allclose(member.w_, alone.w_, rtol=0, atol=1e-10)
    assert np.abs(member.w_).max() > 0.1
    given = okl.make("auto", kernel=okl.RBF(sigma=1.0), budget=10, random_state=0)
    given.run(X[:60], y[:60])
    assert [mb.name for mb in given.pool_].count("linear") == 2  # the two plain linear members only
    with pytest.raises(ValueError, match="affine member needs auto's input map"):
        okl.make("auto", scale=None, members=[("linear", None, {"scale": "affine"})]).run(X[:60], y[:60])
    with pytest.raises(ValueError, match="scale='affine' is a linear member's input"):
        okl.make("auto", members=[("fogd", 1.0, {"scale": "affine"})]).run(X[:60], y[:60])


@pytest.mark.parametrize("dim, degree", [(39, 2), (40, 1)])
def test_the_regression_affine_member_takes_products_while_they_cost_at_most_a_fogd_member(dim, degree):
    """Degree 2 while d (d + 1) / 2 <= 8 B (one FOGD member's 2D = 8B features; B = 100 by
    default): 39 -> 780 products, 40 -> 820 (degree 1 then)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, dim))
    m = okl.make("auto", loss="squared", random_state=0)
    m.run(X, X[:, 0] * X[:, 1])
    member = m.pool_[-1]
    assert member.name == "linear" and member.degree == degree and member._unmap


def test_the_l1_family_draws_twelve_budgets_of_directions(german):
    """L1 members: budget 3 B (D = 4 x 3 B = 12 B directions), the Gaussian FOGD members 4 B; a
    member's budget_scale is checked (and may be fractional: the budget is rounded)."""
    X, y = german
    m = okl.make("auto", random_state=0, budget=8)
    m.run(X[:60], y[:60])
    fogd = [mb for mb in m.pool_ if mb.name == "fogd"]
    assert [mb.U_.shape[0] for mb in fogd] == [32] * 3 + [96] * 3
    assert [type(mb.kernel_).__name__ for mb in fogd] == ["RBF"] * 3 + ["Laplacian"] * 3
    with pytest.raises(ValueError, match="budget_scale must be a positive number"):
        okl.make("auto", members=[("fogd", 1.0, {"budget_scale": 0})])
    half = okl.make("auto", random_state=0, budget=8, members=[("fogd", 1.0, {"budget_scale": 1.3})])
    half.run(X[:60], y[:60])
    assert half.pool_[0].budget == 10 and half.pool_[0].U_.shape[0] == 40


def test_inside_the_width_window_auto_smooths_the_rows_buffered_so_far(data_dir, monkeypatch):
    """Before its pool exists, auto predicts row t by the window member's rule over rows 0..t-1:
    the Gaussian kernel-weighted label mean under the symlog map and width (sigma / 4) of the
    first m rows, m the largest power of two <= t (computed here from scratch); the same in run()
    and per event, computed once an event; a one-member pool standing in for one learner keeps
    its running mean."""
    from okl.kernels import WIDTH_WINDOW, scale_sigma
    from okl.ensemble.auto import Auto
    from okl.scaling import window_scale

    X, y = okl.load_dataset("svmguide1", data_dir)
    order = okl.data.permutation(len(y), 0)[:WIDTH_WINDOW]
    X, y = np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    f = okl.make("auto", random_state=0).run(X, y).decisions
    for t in (2, 3, 17, 32, 49):
        m = 1 << (t.bit_length() - 1)
        center, spread = window_scale(X[:m], "symlog")
        lin = okl.make("linear", scale="symlog")  # the symlog map with this centre and spread
        lin.inputs.ensure_started(lin, X.shape[1])
        lin.scale_center_, lin.scale_spread_ = center, spread.copy()
        rows, row = lin.inputs.scaled_rows(lin, X[:t], commit=False), lin.inputs.scaled_rows(lin, X[t:t + 1], commit=False)[0]
        sigma = scale_sigma(rows[:m]) / 4.0
        d2 = ((rows - row) ** 2).sum(axis=1)
        w = np.exp(-(d2 - d2.min()) / (2.0 * sigma * sigma))
        assert f[t] == pytest.approx(float(w @ y[:t] / w.sum()), abs=1e-12)
    assert f[0] == 0.0 and f[1] == y[0]  # (the running mean before two rows)
    calls = []
    own = Auto._window_map
    monkeypatch.setattr(Auto, "_window_map", staticmethod(lambda rows, cache: calls.append(len(rows)) or own(rows, cache)))
    event = okl.make("auto", random_state=0)
    per_event = []
    for t in range(WIDTH_WINDOW):
        per_event.append(event.predict_one(X[t]))
        event.learn_one(X[t], y[t])
    np.testing.assert_array_equal(per_event, f)
    assert len(calls) == 2 * (WIDTH_WINDOW - 2)  # predict_one's new rows and x; learn_one reuses its value
    mean = np.concatenate(([0.0], np.cumsum(y)[:-1] / np.arange(1, WIDTH_WINDOW)))  # the running mean
    # on this stream the smoother makes 10 mistakes in the window, the running mean's sign 23
    assert (np.where(f >= 0, 1, -1) != y).sum() == 10 and (np.where(mean >= 0, 1, -1) != y).sum() == 23
    one = okl.make("auto", random_state=0, members=[("nogd", 1.0, {})])
    one._raw_member = True
    np.testing.assert_allclose(one.run(X, y).decisions, mean, rtol=0, atol=1e-15)
