"""PROS-N-KONS / CON-KONS / B-KONS (PNK Alg. 1, Sec. 5; ALGORITHMS.md 5.2-5.4).

* a direct per-round implementation of Algorithm 1 (KORS by solving the temporary dictionary's
  system, eigendecomposition of K_j at every addition, ONS with A itself and linear solves)
  gives the same decisions and dictionary as the fast learner (1e-8), for every variant/option;
* the embedding reproduces the kernel on the dictionary points (both maps), and the Cholesky map
  gives the eigen map's predictions;
* the O(j^2) inverse updates (KORS bordered inverse, Sherman-Morrison A^{-1}) equal direct
  inverses along a run;
* B-KONS never exceeds J_max and equals PNK until PNK's (J_max + 1)-th addition;
* the average squared loss on cpusmall lies in a stated band (see the test for the paper gap);
* bad targets give clear errors (NaN; real targets to a classification loss) or a warning
  (-1/+1 labels to the squared loss).
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.data import permutation
from okl.losses import get_loss


@pytest.fixture(scope="module")
def german():
    X, y = okl.load_dataset("german")  # bundled
    p = permutation(len(y), 1)
    return X[p], y[p]


def reference_kons(X, y, *, variant="pnk", budget=None, alpha=1.0, gamma=1.0, eps=0.5, beta=1.0, C=1.0,
                   loss="hinge", kernel=None, seed=0, reset_round_learns=True, gradient_step="updated",
                   hessian_map="complete", reset="zero"):
    """PNK Algorithm 1 written directly, O(j^3) per round (no incremental anything).

    ``reset="warm"`` (variant "pnk"): at an addition the new epoch starts from R v (v = w_{t-1} -
    A^{-1} g_{t-1}, the point after the growth round's step, as the same function in the new
    space) with A = alpha I, and its first round projects like every other round.
    """
    warm = variant == "pnk" and reset == "warm"
    kernel = kernel or okl.RBF(sigma=1.0)
    lossf = get_loss(loss)
    sigma = lossf.curvature(C) or 1.0 / (8 * C * C)
    U = np.random.default_rng(seed).random(len(y))
    D, p = [], []
    E = np.zeros((0, 0))
    v = w = np.zeros(0)
    A = A_store = np.zeros((0, 0))
    start = False
    out = np.empty(len(y))
    for t in range(len(y)):
        phi = E @ kernel(X[t][None, :], X[D])[0] if D else np.zeros(0)
        z = phi @ v
        if start and not warm:
            w, f = v.copy(), z
        else:
            h = np.sign(z) * max(abs(z) - C, 0.0)
            if h != 0.0:
                Ainv_phi = np.linalg.solve(A, phi)
                w = v - h / (phi @ Ainv_phi) * Ainv_phi
            else:
                w = v.copy()
            # phi^T w = z - h(z) exactly; evaluating phi @ w instead leaves a rounding error that
            # flips the hinge's kink when |f| = C (y f = 1 - 1e-16 counts as a margin error)
            f = z - h
        out[t] = f
        gd = lossf.derivative(f, y[t])
        if (start and not reset_round_learns) or gd == 0.0 or phi.size == 0:
            v = w.copy()
        else:
            G = sigma / 2 * gd * gd * np.outer(phi, phi)
            v = w - np.linalg.solve(A + G if gradient_step == "updated" else A, gd * phi)
            A, A_store = A + G, A_store + G
        start = False
        if budget is None or len(D) < budget:  # KORS, Eq. 6 on the temporary dictionary
            Db = D + [t]
            s = 1.0 / np.sqrt(np.append(p, 1.0))
            Kb = kernel(X[Db], X[Db])
            kb = s * Kb[:, -1]
            M = np.outer(s, s) * Kb + gamma * np.eye(len(Db))
            tau = (1 + eps) / gamma * (Kb[-1, -1] - kb @ np.linalg.solve(M, kb))
            pt = min(beta * tau, 1.0)
            if U[t] < pt:
                D.append(t)
                p.append(pt)
                K = kernel(X[D], X[D])
                lam, V = np.linalg.eigh(K)
                E_new = V.T / np.sqrt(lam)[:, None]
                m = len(D)
                if variant == "con" and E.size:
                    R = E_new @ K[:, :-1] @ E.T
                    v = R @ w
                    A_store = R @ A_store @ R.T
                    if hessian_map == "complete":
                        A = R @ A @ R.T + alpha * (np.eye(m) - R @ R.T)
                    elif hessian_map == "regularized":
                        A = R @ A @ R.T + alpha * np.eye(m)
                    else:
                        A = A_store + alpha * np.eye(m)
                elif warm and E.size:
                    v = E_new @ K[:, :-1] @ E.T @ v  # the post-step point: round t-1 keeps its step
                    A = A_store = alpha * np.eye(m)
                else:
                    v, A, A_store = np.zeros(m), alpha * np.eye(m), alpha * np.eye(m)
                E, w, start = E_new, v.copy(), True
    return out, D


CASES = [
    ("pros-n-kons", "german", {}),
    ("pros-n-kons", "german", {"gradient_step": "previous", "reset_round_learns": False}),
    ("pros-n-kons", "german", {"reset": "zero"}),
    pytest.param("pros-n-kons", "cpusmall", {"loss": "squared", "reset": "zero", "alpha": 1.0},
                 marks=pytest.mark.data),
    pytest.param("pros-n-kons", "cpusmall", {"loss": "squared", "gamma": 0.5}, marks=pytest.mark.data),
    ("pros-n-kons", "german", {"loss": "logistic", "alpha": 0.5, "C": 2.0}),
    ("con-kons", "german", {}),
    ("con-kons", "german", {"hessian_map": "regularized"}),
    pytest.param("con-kons", "cpusmall", {"loss": "squared", "hessian_map": "r-code"}, marks=pytest.mark.data),
    ("b-kons", "german", {"budget": 8, "loss": "squared_hinge"}),
    ("b-kons", "german", {"budget": 8, "reset": "zero"}),
]


@pytest.mark.parametrize("name, data, params", CASES)
@pytest.mark.parametrize("embedding", ["eigen", "cholesky"])
def test_matches_direct_implementation_of_algorithm_1(name, data, params, embedding, request):
    X, y = request.getfixturevalue(data)
    X, y = X[:250], y[:250]
    kernel = okl.RBF(sigma=1.0)
    m = okl.make(name, kernel=kernel, random_state=5, embedding=embedding, **params)
    fast = m.run(X, y).decisions
    ref_params = {k: v for k, v in params.items() if k != "budget"}
    ref_params["alpha"] = m.alpha_  # default: max(1, L) by the loss (squared: 2)
    variant = "con" if name == "con-kons" else "pnk"
    if variant == "pnk":
        ref_params.setdefault("reset", "warm")  # the library default
    # regression (the library default center_targets=True): the model learns y_t - mu_t, the
    # residual from the running mean including y_t, and predicts mu_{t-1} plus its own decision
    mu, means = np.zeros(len(y)), np.zeros(len(y))
    if m.task == "regression":
        means = np.add.accumulate(y) / np.arange(1, len(y) + 1)
        mu[1:] = means[:-1]
    ref, D = reference_kons(X, y - means, variant=variant, budget=params.get("budget"), kernel=kernel, seed=5,
                            **ref_params)
    ref = ref + mu
    assert m.growth_rounds_ == D and len(D) >= 8
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("embedding", ["eigen", "cholesky"])
def test_embedding_reproduces_the_kernel_on_dictionary_points(cpusmall, embedding):
    X, y = cpusmall
    kernel = okl.RBF(sigma=2.0)
    m = okl.make("pros-n-kons", loss="squared", kernel=kernel, gamma=0.1, embedding=embedding, random_state=0)
    m.run(X[:1500], y[:1500])
    j = m.diagnostics()["dictionary_size"]
    assert j >= 30 and m.diagnostics()["embedding_dim"] == j
    Phi = m.embed(m.dict_X_)
    K = kernel(m.dict_X_, m.dict_X_)
    np.testing.assert_allclose(Phi @ Phi.T, K, rtol=0, atol=1e-8)
    # off the dictionary: phi~(x)^T phi~(x') = k_I(x)^T K^{-1} k_I(x') (the Nystrom kernel)
    Kx = kernel(X[2000:2050], m.dict_X_)
    Z = m.embed(X[2000:2050])
    np.testing.assert_allclose(Z @ Z.T, Kx @ np.linalg.solve(K, Kx.T), rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", ["pros-n-kons", "con-kons"])
def test_cholesky_and_eigen_maps_give_the_same_predictions(cpusmall, name):
    X, y = cpusmall
    runs = [okl.make(name, loss="squared", kernel=okl.RBF(sigma=8.0), embedding=e, random_state=2).run(X, y)
            for e in ("eigen", "cholesky")]
    np.testing.assert_allclose(runs[0].decisions, runs[1].decisions, rtol=0, atol=1e-8)


@pytest.mark.parametrize("name, params", [("pros-n-kons", {}), ("b-kons", {"budget": 12}),
                                          ("con-kons", {"hessian_map": "regularized"})])
def test_incremental_inverses_equal_direct_inverses_along_a_run(german, name, params):
    X, y = german
    kernel, alpha, gamma = okl.RBF(sigma=2.0), 0.5, 0.2
    m = okl.make(name, kernel=kernel, alpha=alpha, gamma=gamma, random_state=1, **params)
    decisions = []
    half_sigma = 0.5 * m.curvature_
    for a, b in ((0, 50), (50, 180), (180, 400), (400, 1000)):
        decisions.append(m.run(X[a:b], y[a:b]).decisions)
        f = np.concatenate(decisions)
        # KORS: (S K S + gamma I)^{-1} kept by bordered updates
        S = np.diag(1.0 / np.sqrt(m.dict_p_))
        direct = np.linalg.inv(S @ kernel(m.dict_X_, m.dict_X_) @ S + gamma * np.eye(m.dict_X_.shape[0]))
        assert np.linalg.norm(m.kors_inv_ - direct) <= 1e-9 * np.linalg.norm(direct)
        # ONS: A^{-1} kept by Sherman-Morrison
        if m.A_ is not None:
            A = m.A_
        else:  # rebuild A = alpha I + sum over the current epoch of (sigma/2) g g^T
            first = m.growth_rounds_[-1] + 1
            Phi = m.embed(X[first:b])
            gd = np.array([m.loss_.derivative(fi, yi) for fi, yi in zip(f[first:b], y[first:b])])
            A = alpha * np.eye(Phi.shape[1]) + (Phi * (half_sigma * gd**2)[:, None]).T @ Phi
        direct = np.linalg.inv(A)
        assert np.linalg.norm(m.Ainv_ - direct) <= 1e-9 * np.linalg.norm(direct)


def test_b_kons_stops_at_budget_and_equals_pnk_until_then(german):
    X, y = german
    kw = dict(kernel=okl.RBF(sigma=2.0), alpha=0.1, gamma=0.1, random_state=4)
    pnk = okl.make("pros-n-kons", **kw)
    pnk_dec = pnk.run(X, y).decisions
    assert len(pnk.growth_rounds_) > 30
    for budget in (1, 10, 30):
        b = okl.make("b-kons", budget=budget, **kw)
        sizes = [b.run(X[a:a + 100], y[a:a + 100]).diagnostics["dictionary_size"] for a in range(0, 1000, 100)]
        assert max(sizes) == budget and b.dict_X_.shape[0] == budget
        assert b.growth_rounds_ == pnk.growth_rounds_[:budget]
        cut = pnk.growth_rounds_[budget]  # PNK grows at the end of this round, B-KONS does not
        dec = okl.make("b-kons", budget=budget, **kw).run(X, y).decisions
        # equal up to rounding (blocks of rows differ once B-KONS stops scoring KORS)
        np.testing.assert_allclose(dec[: cut + 1], pnk_dec[: cut + 1], rtol=0, atol=1e-12)
        assert not np.array_equal(dec[cut + 1:], pnk_dec[cut + 1:])


def test_diagnostics_record_the_dictionary_over_time(german):
    X, y = german
    m = okl.make("pros-n-kons", kernel=okl.RBF(sigma=2.0), random_state=0)
    d = m.run(X, y).diagnostics
    assert d["dictionary_size"] == len(d["growth_rounds"]) == d["resets"] > 0
    sizes = m.dictionary_size_trace(len(y))
    assert sizes[-1] == d["dictionary_size"] and np.all(np.diff(sizes) >= 0)
    assert [int(np.argmax(sizes >= k)) for k in range(1, sizes[-1] + 1)] == d["growth_rounds"]
    con = okl.make("con-kons", kernel=okl.RBF(sigma=2.0), random_state=0)
    assert con.run(X, y).diagnostics["resets"] == 1  # only the first epoch starts from zero


def test_cpusmall_average_squared_loss_band(cpusmall, data_dir):
    """PNK Table 1, cpusmall, sigma = 8, alpha = gamma = 1, eps = 0.5, beta = 1; 3 permutations
    (the paper: 15 runs). Paper: PNK 0.02494 +- 0.00141 (20 SV), CON-KONS 0.02269 +- 0.00164.

    Ours (``okl reproduce pnk-table1``, 15 permutations): PNK 0.0401 +- 0.0025 with 29 SV,
    CON-KONS ("complete") 0.0166 +- 0.0004; FOGD 0.0252 and NOGD 0.0256 reproduce Lu et al.'s
    0.0258 / 0.0256, so the data match. Our KORS keeps 1.5-2.3x the paper's dictionary (also on
    parkinson, cadata, ijcnn1, codrna), so PNK resets more often, and each reset costs several units of squared loss
    (prediction 0, then ONS from A = alpha I). Even with beta = 1/1.5 (21 SV) PNK gives 0.036, so
    the gap is not only the dictionary size; we did not find the cause (ALGORITHMS.md 5.2 choices
    gradient_step / reset_round_learns move it by < 0.003). The bands are ours, stated here.
    """
    X, y = okl.load_dataset("cpusmall", data_dir)
    pnk, con = [], []
    for seed in range(3):
        p = permutation(len(y), seed)
        kw = dict(alpha=1.0, gamma=1.0, loss="squared", kernel=okl.RBF(sigma=8.0), random_state=seed)
        m = okl.make("pros-n-kons", reset="zero", **kw)  # the paper's literal reset (Alg. 1 l. 8-9)
        pnk.append(m.run(X[p], y[p]).mean_squared_loss)
        assert 20 <= m.diagnostics()["dictionary_size"] <= 40
        con.append(okl.make("con-kons", **kw).run(X[p], y[p]).mean_squared_loss)
    assert 0.037 <= np.mean(pnk) <= 0.045, pnk
    assert 0.014 <= np.mean(con) <= 0.019, con


def test_bad_targets_give_clear_messages(cpusmall, german):
    X, y = cpusmall
    m = okl.make("pros-n-kons", loss="squared", kernel=okl.RBF(sigma=8.0))
    y_bad = y[:50].copy()
    y_bad[7] = np.nan
    with pytest.raises(ValueError, match=r"y has a non-finite value .*nan.* at row 7"):
        m.run(X[:50], y_bad)
    with pytest.raises(ValueError, match="non-finite"):
        m.learn_one(X[0], float("nan"))
    # real-valued targets given to a classification loss
    c = okl.make("pros-n-kons", kernel=okl.RBF(sigma=8.0))
    with pytest.raises(ValueError, match=r"labels must be -1 or \+1.*use a regression loss such as loss='squared'"):
        c.run(X[:50], y[:50])
    # -1/+1 labels given to the squared loss: legitimate (PNK Sec. 3 example) but flagged
    Xg, yg = german
    with pytest.warns(UserWarning, match=r"every target is -1 or \+1 but loss='squared'.*loss='hinge'"):
        okl.make("pros-n-kons", loss="squared").run(Xg[:50], yg[:50])


def test_invalid_hyperparameters_name_the_parameter():
    bad = [("pros-n-kons", {"gamma": 0}), ("pros-n-kons", {"eps": 1.0}), ("pros-n-kons", {"beta": 0}),
           ("pros-n-kons", {"curvature": -1.0}), ("pros-n-kons", {"gradient_step": "old"}),
           ("pros-n-kons", {"embedding": "svd"}), ("pros-n-kons", {"reset_round_learns": "yes"}),
           ("con-kons", {"hessian_map": "nope"}), ("b-kons", {"budget": 0})]
    for name, kw in bad:
        with pytest.raises(ValueError, match=list(kw)[0]):
            okl.make(name, **kw)


def test_learner_dictionary_is_the_standalone_kors_dictionary(cpusmall):
    from okl.features.kors import KORS

    X, y = cpusmall
    kw = dict(kernel=okl.RBF(sigma=4.0), gamma=0.1, eps=0.5, beta=1.0, random_state=9)
    kors = KORS(**kw)
    added = kors.update(X[:3000])
    m = okl.make("pros-n-kons", loss="squared", alpha=0.1, **kw)
    m.run(X[:3000], y[:3000])
    assert m.growth_rounds_ == added and len(added) > 20
    np.testing.assert_allclose(m.dict_p_, kors.p_, rtol=1e-7)  # other blocks: rounding in delta = k - quad
    assert np.linalg.norm(m.kors_inv_ - kors.inverse_) <= 1e-9 * np.linalg.norm(kors.inverse_)


# ---- issue 13: library defaults (data-driven width, no alpha/gamma given) --------------------------


def test_warm_reset_removes_the_zero_decisions_of_the_literal_reset(german):
    """PNK Alg. 1 lines 8-9 (``reset="zero"``) predict exactly 0 on the first round of every epoch,
    which f >= 0 -> +1 counts as the minority class on german (30 % are +1). With the default
    width (sigma ~ 1.1 from the first 50 rows) KORS adds ~420 points in 1000 rounds, so measured:
    38.9 % exactly-zero decisions and 49.5 % mistakes (seed 0). ``reset="warm"`` (default) starts
    each epoch from the previous function mapped into the new space: no exact zero is left after
    the base class's width window, and the mistake rate drops to ~29-30 %."""
    X, y = german
    zero = okl.make("pros-n-kons", reset="zero", random_state=0).run(X, y)
    warm = okl.make("pros-n-kons", random_state=0).run(X, y)
    assert warm.diagnostics["resets"] == zero.diagnostics["resets"] > 200  # same dictionary
    frac_zero = np.mean(zero.decisions == 0.0)
    assert 0.25 <= frac_zero <= 0.5, frac_zero
    # rounds < 50 are the base class's width window (running label mean, which can be exactly 0)
    assert np.sum(warm.decisions[50:] == 0.0) == 0
    assert zero.mistake_rate > 40.0 and warm.mistake_rate < 32.0, (zero.mistake_rate, warm.mistake_rate)
    # the mapped start is the same function: at a growth round the prediction of the new epoch
    # equals the old epoch's post-step function (checked through the eigen map, R != [I; 0])
    m = okl.make("pros-n-kons", embedding="eigen", random_state=0).run(X, y)
    np.testing.assert_allclose(m.decisions, warm.decisions, rtol=0, atol=1e-7)


def test_default_alpha_is_the_loss_smoothness_floor():
    """alpha = max(1, L) with L = sup l'': hinge / logistic keep PNK's 1, squared (hinge) gets 2,
    so a fresh A = alpha I never steps past the minimiser along phi (step 2/alpha <= 1)."""
    assert okl.make("pros-n-kons").alpha_ == 1.0
    assert okl.make("pros-n-kons", loss="logistic").alpha_ == 1.0
    assert okl.make("b-kons", loss="squared").alpha_ == 2.0
    assert okl.make("con-kons", loss="squared_hinge").alpha_ == 2.0
    assert okl.make("pros-n-kons", loss="squared", alpha=1.0).alpha_ == 1.0  # the paper's value


def test_alpha_one_oscillates_on_squared_loss_after_restarts(data_dir):
    """With the squared loss (l'' = 2) and A = alpha I = I after each restart, the ONS step moves
    f - y to about (1 - 2 |phi|^2)(f - y): no progress for |phi| ~ 1. With the default width PNK
    restarts ~750 times on cadata (sigma ~ 0.3); measured on 4000 rows (permutation 0, seed 0):
    alpha = 1 ~0.1 (worse than predicting the mean, var(y) ~ 0.055), default alpha = 2 ~0.03."""
    X, y = okl.load_dataset("cadata", data_dir)
    p = permutation(len(y), 0)[:4000]
    X, y = X[p], y[p]
    lit = okl.make("pros-n-kons", loss="squared", alpha=1.0, random_state=0).run(X, y).mean_squared_loss
    dflt = okl.make("pros-n-kons", loss="squared", random_state=0).run(X, y).mean_squared_loss
    assert lit > 0.06 and dflt < 0.04, (lit, dflt)


def test_no_label_is_seen_before_its_round(data_dir):
    """CON-KONS on parkinson (0.042 < the paper's BATCH 0.0454, which is the best predictor in the
    18-point sigma = 8 space H_J, not a bound for a ~1000-point narrow-kernel model) sees no label
    early: changing every target from round t on leaves decisions[:t+1] unchanged, for rounds
    inside the width window (t < 50), at its end, and later; and the width is label-free."""
    X, y = okl.load_dataset("parkinson", data_dir)
    p = permutation(len(y), 0)[:1500]
    X, y = X[p], y[p]
    rng = np.random.default_rng(0)
    for name in ("con-kons", "pros-n-kons", "b-kons"):
        base = okl.make(name, loss="squared", random_state=0).run(X, y)
        for t in (0, 10, 49, 50, 51, 400, 1200):
            y2 = y.copy()
            y2[t:] = rng.random(len(y) - t)
            other = okl.make(name, loss="squared", random_state=0).run(X, y2)
            np.testing.assert_array_equal(other.decisions[: t + 1], base.decisions[: t + 1])
            assert not np.array_equal(other.decisions[t + 1:], base.decisions[t + 1:])
            assert other.diagnostics["sigma"] == base.diagnostics["sigma"]
