"""FORKS (ALGORITHMS.md 4): invariants of the ONS / TISVD machinery and mistake rates on real data.

The generic protocol checks (run vs loop, save/load, seeds, bad input) run over the default
configuration in tests/test_learner_checks.py; here the non-default variants get a run-vs-loop
check, and the numbers are checked against direct computations and published bands.
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.checks import per_instance_decisions
from okl.data import permutation
from okl.learners.forks import FORKS


def paper_sizes(B):
    """The paper's / code's sizes and the code's reset at update rounds (library defaults differ)."""
    sp = 3 * B // 4
    return dict(s_p=sp, s_m=max(1, sp // 5), k=max(1, B // 10), d=1, update_weights="reset", alpha=0.01)


def _perm(X, y, seed, n=None):
    p = permutation(len(y), seed)[:n]
    return X[p], y[p]


# ---- the inverse Hessian -------------------------------------------------------------------------

@pytest.mark.parametrize("ons", ["code", "paper"])
def test_sherman_morrison_inverse_equals_direct_inverse_throughout_a_run(german, ons):
    """A_t = alpha I + sum of g~ g~^T since the last reset (transition / update round), with
    g~ = eta l'(f, y) phi; FORKS's A^{-1} must equal inv(A_t) after every round (1e-8 relative)."""
    X, y = _perm(*german, 0, 500)
    eta, alpha = 0.2, 0.01
    m = FORKS(budget=50, rho=25, eta=eta, ons=ons, kernel=okl.RBF(sigma=2.0),
              random_state=0, **{**paper_sizes(50), "alpha": alpha})
    loss = m.loss_
    A = None
    checked = resets = 0
    for t in range(len(y)):
        x = X[t]
        stage_before = 2 if m.dim_ is not None and m.Q_ is not None else 1
        updates_before = m.update_rounds_ if m.dim_ is not None else 0
        phi_before = m._features(x[None, :])[0] if stage_before == 2 else None
        f = m.predict_one(x)
        m.learn_one(x, y[t])
        if m.Q_ is None:
            continue
        if stage_before == 1 or m.update_rounds_ > updates_before:
            phi = m._features(x[None, :])[0]
            if stage_before == 1:      # transition: w = f phi / ||phi||^2, so phi^T w = f
                f0 = f if ons == "code" else float(np.clip(f, -m.C, m.C))
            else:                      # update round: w reset to 0
                f0 = 0.0
            g = eta * loss.derivative(f0, y[t])
            A = alpha * np.eye(len(phi)) + g * g * np.outer(phi, phi)
            resets += 1
        else:
            g = eta * loss.derivative(f, y[t])
            A = A + g * g * np.outer(phi_before, phi_before)
        direct = np.linalg.inv(A)
        assert np.linalg.norm(m.Ainv_ - direct) <= 1e-8 * np.linalg.norm(direct), t
        checked += 1
    assert resets >= 5 and checked > 400


# ---- update rounds -------------------------------------------------------------------------------

def test_update_rounds_follow_the_codes_margin_error_counter(german):
    """The code's counter: rounds with l' != 0 counted from round 1; an update fires on a stage-2
    such round (after the transition) when count mod rho == 1."""
    X, y = _perm(*german, 1)
    rho = 37
    m = FORKS(budget=40, rho=rho, kernel=okl.RBF(sigma=2.0), random_state=1)
    trace = m.run(X, y)
    active = np.array([m.loss_.derivative(f, yy) != 0.0 for f, yy in zip(trace.decisions, y)])
    count = np.cumsum(active)
    t0 = m.transition_round_
    expected = int(np.sum(active[t0 + 1:] & (count[t0 + 1:] % rho == 1)))
    assert count[t0] == m.m_ + 1 and m.update_rounds_ == expected and expected >= 5


def test_update_rounds_every_rho_rounds():
    rng = np.random.default_rng(0)
    X = rng.random((600, 5))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(600) > 0.5, 1.0, -1.0)
    m = FORKS(budget=30, rho=50, update_counter="rounds", kernel=okl.RBF(sigma=1.0), random_state=0)
    m.run(X, y)
    t0 = m.transition_round_
    assert m.update_rounds_ == sum(1 for t in range(t0 + 1, 600) if t % 50 == 0)


# ---- decompositions ------------------------------------------------------------------------------

def test_tisvd_without_truncation_gives_the_full_svd_learner(german):
    """With k = s_p nothing is truncated, so FORKS with TISVD equals FORKS recomputing the SVD of
    Phi_pp at every update round (features agree up to column signs, which ONS is blind to)."""
    X, y = _perm(*german, 2, 600)
    params = dict(budget=20, s_p=10, s_m=10, k=10, rho=20, kernel=okl.RBF(sigma=2.0), random_state=3)
    a = FORKS(decomposition="tisvd", **params)
    b = FORKS(decomposition="svd", **params)
    da, db = a.run(X, y).decisions, b.run(X, y).decisions
    assert a.update_rounds_ >= 10
    np.testing.assert_allclose(da, db, rtol=0, atol=1e-6 * np.abs(db).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_truncated_tisvd_tracks_the_full_svd_on_codrna(data_dir, seed):
    """codrna-train, 20,000 rows, B = 200, sigma = 2, an update every 1000 margin errors (7 update
    rounds): exact TISVD and a fresh SVD per update round give mistake rates within 0.5 points
    (measured differences 0.19 and 0.30 points at 8.2-8.8 %). With 50+ update rounds (rho = 200)
    the truncation drift shows (TISVD 19.6 / 18.3 % vs SVD 19.1 / 15.3 %), as in ALGORITHMS.md
    9.9's TISVD study."""
    X, y = _perm(*okl.load_dataset("codrna-train", data_dir), seed, 20000)
    rates = {}
    for dec in ("tisvd", "svd"):
        m = FORKS(budget=200, rho=1000, decomposition=dec, kernel=okl.RBF(sigma=2.0), random_state=seed)
        rates[dec] = m.run(X, y).mistake_rate
        assert m.update_rounds_ >= 5
    assert abs(rates["tisvd"] - rates["svd"]) < 0.5, rates
    assert max(rates.values()) < 10.0


# ---- variants follow the protocol ----------------------------------------------------------------

@pytest.mark.parametrize("options", [
    dict(ons="paper"),
    dict(update_counter="rounds", grow_sketch=True, d=4),
    dict(decomposition="tisvd-code", s_p=15, s_m=3, k=2, d=1),  # the code variant at the code sizes
    dict(decomposition="svd", ons="paper", loss="squared_hinge"),
])
def test_variants_run_equals_loop(german, options):
    X, y = _perm(*german, 0, 300)
    params = dict(budget=20, rho=15, kernel=okl.RBF(sigma=1.0), random_state=0, **options)
    m = FORKS(**params)
    whole = m.run(X, y).decisions
    assert m.update_rounds_ >= 3
    np.testing.assert_allclose(per_instance_decisions(FORKS(**params), X, y), whole, rtol=0, atol=1e-9 * max(1, np.abs(whole).max()))


def test_paper_form_predictions_are_bounded_by_C(german):
    X, y = _perm(*german, 0)
    m = FORKS(budget=50, ons="paper", C=0.5, rho=40, kernel=okl.RBF(sigma=2.0), random_state=0)
    d = m.run(X, y).decisions
    assert np.abs(d[m.transition_round_ + 1:]).max() <= 0.5 + 1e-12


def test_regression_with_squared_loss(data_dir):
    """cpusmall (8,192 rows, targets in [0, 1], variance 0.0345), B = 100, sigma = 1, squared
    loss, permutations 0-2: measured average squared loss 0.0203 / 0.0294 / 0.0181 (NOGD 0.0096;
    each of the 3 update rounds resets w). The mean must stay below 0.03."""
    X, y = okl.load_dataset("cpusmall", data_dir)
    losses = []
    for seed in range(3):
        Xp, yp = _perm(X, y, seed)
        m = FORKS(budget=100, loss="squared", horizon=len(yp), kernel=okl.RBF(sigma=1.0), random_state=seed)
        losses.append(m.run(Xp, yp).mean_squared_loss)
        assert m.update_rounds_ >= 2
    assert np.mean(losses) < 0.03


# ---- mistake rates on real data ------------------------------------------------------------------

def test_german_mistake_rate_band(german):
    """german, B = 100, paper sizes and reset (code ONS, s_p 75, s_m 15, k 10, d 1, rho = 0.3T), sigma = 2,
    20 permutations. Measured: 31.28 +- 1.44 % every round counted, 26.59 +- 1.39 % with the
    authors' count. References: FORKS Table 2 26.43 +- 0.56 (authors' count); the authors' C++
    31.57 / 26.62 (9.9, sigma 50); majority class 30 %. Bands: [29, 33] and [24.5, 28.5]."""
    X, y = german
    runs = []
    for seed in range(20):
        Xp, yp = _perm(X, y, seed)
        trace = FORKS(budget=100, horizon=len(yp), kernel=okl.RBF(sigma=2.0), random_state=seed,
                      **paper_sizes(100)).run(Xp, yp)
        runs.append((trace.mistake_rate, trace.authors_mistake_rate))
    every, authors = np.mean(runs, axis=0)
    assert 29.0 <= every <= 33.0
    assert 24.5 <= authors <= 28.5
    assert authors < every


def test_codrna_mistake_rate(data_dir):
    """codrna (271,617 rows, the full stream of permutation 0), B = 200, sigma = 2, paper sizes:
    measured 5.01 % every round counted. Must be at or below 7 % (ALGORITHMS.md 4: exact numerics
    at sigma 2 give ~5.3 %) and not below the batch SVM's 3.6 % (PNK Table 2), which would
    signal a counting bug."""
    X, y = _perm(*okl.load_dataset("codrna", data_dir), 0)
    m = FORKS(budget=200, horizon=len(y), kernel=okl.RBF(sigma=2.0), random_state=0, **paper_sizes(200))
    trace = m.run(X, y)
    assert 3.6 <= trace.mistake_rate <= 7.0
    assert m.diagnostics()["features"] == 20


# ---- library defaults (issue 13) ---------------------------------------------------------------

def test_default_map_is_full_rank_and_accurate_while_a_narrow_sketch_is_not(german):
    """The default sizes (s_p = s_m = k = B, d = 4) give an accurate kernel map; the papers' s_p =
    3B/4 with many landmarks (s_m = 50) makes pinv(Phi_pm) ill-conditioned (on ijcnn1 the relative
    error reaches 1.7-12), which is why raising s_m alone never helped FORKS."""
    X, y = _perm(*german, 0, 400)
    kernel = okl.RBF(sigma=2.0)
    K = kernel(X[300:400], X[300:400])
    errs = {}
    for name, kw in {"default": {}, "narrow": dict(s_p=75, s_m=50, k=15, d=1)}.items():
        m = FORKS(budget=100, rho=10**6, kernel=kernel, random_state=0, **kw)
        m.run(X[:300], y[:300])
        Z = m._features(X[300:400])
        errs[name] = np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)
    assert FORKS(budget=100).k_ == 100 and FORKS(budget=100).d_ == 4
    assert errs["default"] < 0.05, errs
    assert errs["narrow"] > 3 * errs["default"], errs  # german, sigma 2: 0.095 vs 0.025


def test_transport_keeps_predictions_on_the_landmarks_and_reset_does_not(german):
    X, y = _perm(*german, 1, 400)
    out = {}
    for mode in ("transport", "reset"):
        m = FORKS(budget=40, rho=20, kernel=okl.RBF(sigma=2.0), random_state=0, update_weights=mode,
                  update_counter="rounds")
        m.run(X[:199], y[:199])          # 0-based round 200 is an update round (200 % 20 == 0)
        before = np.array([m.predict_one(x) for x in m.landmarks_])
        m.eta = 1e-12                    # isolate the map change from the ONS step
        m.learn_one(X[199], y[199])
        m.learn_one(X[200], y[200])
        assert m.update_rounds_ >= 1
        out[mode] = np.abs(np.array([m.predict_one(x) for x in m.landmarks_]) - before).max()
    assert out["transport"] <= 1e-6 * max(1.0, out["reset"]), out
    assert out["reset"] > 1e-3, out


def test_default_forks_learns_ijcnn1_subset(data_dir):
    """The reported failure (FORKS at the majority rate, 9.6-9.8 %, on ijcnn1): the library
    defaults give 5.7 % on the full stream; on 30,000 rows well below the 9.6 % majority rate."""
    X, y = okl.load_dataset("ijcnn1", data_dir)
    p = np.random.default_rng(0).permutation(len(y))[:30000]
    rate = FORKS(random_state=0).run(np.asarray(X, float)[p], np.asarray(y, float)[p]).mistake_rate
    assert rate < 8.5, rate


def test_ons_linear_algebra_is_exact_and_keeps_symmetry():
    """matvec (a row-by-row axpy, M^T v) equals the row-wise M v bit for bit on an exactly symmetric
    matrix; the rank-one update keeps the inverse exactly symmetric and equal to the inverse of
    A + g g^T within 1e-12 relative."""
    from okl.linalg.inverse import matvec, sherman_morrison_symmetric

    rng = np.random.default_rng(3)
    k = 37
    G = rng.standard_normal((k, k))
    A = G @ G.T / k + np.eye(k)
    Ainv = np.linalg.inv(A)
    Ainv = 0.5 * (Ainv + Ainv.T)
    v = rng.standard_normal(k)
    out = np.empty(k)
    matvec(Ainv, v, out)
    rowwise = np.array([sum(Ainv[i, j] * v[j] for j in range(k)) for i in range(k)])
    np.testing.assert_array_equal(out, rowwise)
    for _ in range(20):
        g = rng.standard_normal(k)
        A += np.outer(g, g)
        sherman_morrison_symmetric(Ainv, g, np.empty(k))
        np.testing.assert_array_equal(Ainv, Ainv.T)
    np.testing.assert_allclose(Ainv, np.linalg.inv(A), rtol=1e-12, atol=1e-12 * np.abs(Ainv).max())


@pytest.mark.parametrize("k", [5, 37, 100])
def test_deferred_ons_steps_are_the_immediate_steps_bit_for_bit(k):
    """auto's engine defers each ONS update of A^{-1} to the next step's product with it
    (matvec_after_update: one pass over the matrix): A^{-1}, w and u after any number of steps, the
    last update applied by apply_pending, equal ons_code_step's bit for bit, steps of zero (no
    update) and k not a multiple of four included."""
    from okl.components.steps.ons import CODE_PROJECTION_EPS, apply_pending, ons_code_step, ons_code_step_deferred, pending_size
    from okl.linalg.inverse import matvec, matvec_after_update, symmetric_rank_one_apply

    rng = np.random.default_rng(k)
    G = rng.standard_normal((k, k))
    A0 = np.linalg.inv(G @ G.T / k + np.eye(k))
    A0 = 0.5 * (A0 + A0.T)
    a, v = 0.1 * rng.standard_normal(k), rng.standard_normal(k)
    M1, M2, out1, out2 = A0.copy(), A0.copy(), np.empty(k), np.empty(k)
    symmetric_rank_one_apply(M1, a, 1.7)
    matvec(M1, v, out1)
    matvec_after_update(M2, v, out2, a, 1.7)
    np.testing.assert_array_equal(M1, M2)
    np.testing.assert_array_equal(out1, out2)
    now, later = A0.copy(), A0.copy()
    w_now, w_later = np.zeros(k), np.zeros(k)
    u_now, u_later, pending = np.empty(k), np.empty(k), np.zeros(pending_size(k))
    for t in range(31):  # (the last step updates)
        z = rng.standard_normal(k) / np.sqrt(k)
        step = 0.0 if t % 5 == 4 else float(rng.choice([-1.0, 1.0]))
        ons_code_step(z, w_now, now, step, CODE_PROJECTION_EPS, 2.0, u_now)
        ons_code_step_deferred(z, w_later, later, step, CODE_PROJECTION_EPS, 2.0, u_later, pending)
        np.testing.assert_array_equal(w_now, w_later)
    assert pending[k + 1] == 1.0 and not np.array_equal(now, later)  # the last update still pending
    apply_pending(later, pending)
    np.testing.assert_array_equal(now, later)
    assert pending[k + 1] == 0.0
    apply_pending(later, pending)  # nothing pending: no change
    np.testing.assert_array_equal(now, later)


def test_autos_forks_members_hold_their_inverse_whenever_python_reads_it(data_dir):
    """The engine leaves a FORKS member's last A^{-1} update pending; every read from Python
    (pool_, a model file, a copy) applies it first, so reading at any time changes no decision and
    each member's A^{-1} is then that of a pool never read mid-stream."""
    import pickle

    X, y = okl.load_dataset("svmguide1", data_dir)
    order = permutation(len(y), 0)[:700]
    X, y = np.ascontiguousarray(X[order], dtype=float), np.asarray(y[order], dtype=float)
    quiet, read = okl.make("auto", budget=30, random_state=0), okl.make("auto", budget=30, random_state=0)
    assert read.pool_ == []  # (no pool while the width window fills)
    fq, fr = [], []
    for t in range(700):
        fq.append(quiet.predict_one(X[t]))
        quiet.learn_one(X[t], y[t])
        fr.append(read.predict_one(X[t]))
        read.learn_one(X[t], y[t])
        if t % 50 == 25:  # Python reads the members mid-stream
            forks = [m for m in read.pool_ if m.name == "forks"]
            assert all(np.array_equal(m.Ainv_, m.Ainv_.T) for m in forks if m.Ainv_ is not None)
        if t == 400:
            copy = pickle.loads(pickle.dumps(read))
    assert fq == fr
    forks = [j for j, m in enumerate(quiet.pool_) if m.name == "forks"]
    assert forks and all(quiet.pool_[j].Ainv_ is not None for j in forks)
    for j in forks:
        np.testing.assert_array_equal(quiet.pool_[j].Ainv_, read.pool_[j].Ainv_)
    for t in range(401, 700):
        copy.predict_one(X[t])
        copy.learn_one(X[t], y[t])
    for j in forks:
        np.testing.assert_array_equal(copy.pool_[j].Ainv_, quiet.pool_[j].Ainv_)
