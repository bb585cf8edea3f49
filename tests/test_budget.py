"""Budgeted kernel-expansion baselines (okl.learners.budget): RBP, Forgetron, Projectron,
Projectron++, BPA-S, BOGD.

* each learner equals an independent NumPy re-implementation of its update rule (written from
  ALGORITHMS.md 6 / the LSOKL scripts, list-based, Projectron solving K d = k directly instead of
  keeping K^{-1}) round for round;
* invariants: |SV| <= B every round; the Projectron's kept inverse is the inverse of the support
  kernel matrix after runs on real data; BPA-S removes the minimal-cost SV (costs computed by hand);
  the Forgetron's shrink factor is the largest phi in (0, 1] meeting its defining inequality on
  every removal round; BOGD's coefficients stay within eta * gamma;
* mistake rates on german and svmguide3 (20 permutations, every round counted) within stated
  bands of the LSOKL toolbox run under Octave (ALGORITHMS.md 9.10), the authors' FORKS C++ code
  (9.9) and SkeGD Table 3 (9.3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import okl
from okl.data import permutation
from okl.learners.budget import (PROJECTRON_MIN_RESIDUAL, RANDOM_BLOCK, BOGD, BPAS, RBP, Forgetron,
                                 Projectron, ProjectronPlusPlus, column_kernel_row,
                                 forgetron_shrink)
from okl._compiled import kernel_value

NAMES = ["rbp", "forgetron", "projectron", "projectron++", "bpa-s", "bogd"]
RUNS = 20


@pytest.fixture(scope="module")
def svmguide3(data_dir):
    return okl.load_dataset("svmguide3", data_dir)


def _gram(sigma, A, B):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    d = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-d / (2.0 * sigma**2))


# --------------------------------------------------------------------------------------------
# independent reference implementations (Gaussian kernel, kappa(x, x) = 1)


class _Removals:
    """The documented randomness contract: blocks of RANDOM_BLOCK indices from default_rng(seed)."""

    def __init__(self, seed, budget):
        self.rng, self.budget, self.buf = np.random.default_rng(seed), budget, []

    def next(self):
        if not self.buf:
            self.buf = list(self.rng.integers(0, self.budget, size=RANDOM_BLOCK, dtype=np.int64))
        return int(self.buf.pop(0))


def ref_rbp(X, Y, B, sigma, seed):
    SV, alpha, out, rnd = [], [], [], _Removals(seed, B)
    for x, y in zip(X, Y):
        f = float(np.dot(alpha, _gram(sigma, SV, x)[:, 0])) if SV else 0.0
        out.append(f)
        if (1.0 if f >= 0 else -1.0) != y:
            if len(SV) < B:
                SV.append(x), alpha.append(y)
            else:
                r = rnd.next()
                SV[r], alpha[r] = x, y
    return np.array(out)


def ref_forgetron(X, Y, B, sigma):
    SV, alpha, labels, out, Q, M = [], [], [], [], 0.0, 0
    for x, y in zip(X, Y):
        f = float(np.dot(alpha, _gram(sigma, SV, x)[:, 0])) if SV else 0.0
        out.append(f)
        if y * f > 0:
            continue
        M += 1
        SV.append(x), alpha.append(y), labels.append(y)
        if len(SV) > B:                      # the oldest is SV[0]
            fr = float(np.dot(alpha, _gram(sigma, SV, SV[0])[:, 0]))
            mu, delta = labels[0] * fr, alpha[0] * labels[0]
            A, c = delta**2 - 2 * delta * mu, Q - 15 / 32 * M
            if A + 2 * delta + c <= 0:
                phi = 1.0
            elif A == 0:
                phi = -c / (2 * delta)
            else:                             # the root of A p^2 + 2 delta p + c in [0, 1)
                roots = np.roots([A, 2 * delta, c]).real
                phi = float(max(r for r in roots if -1e-12 <= r < 1))
            Q += (delta * phi) ** 2 + 2 * delta * phi - 2 * delta * phi**2 * mu
            alpha = [phi * a for a in alpha]
            SV, alpha, labels = SV[1:], alpha[1:], labels[1:]
    return np.array(out)


def ref_projectron(X, Y, B, sigma, plus):
    U = 0.25 * math.sqrt((B + 1) / math.log(B + 1))
    SV, alpha, out = [], np.zeros(0), []
    for x, y in zip(X, Y):
        k = _gram(sigma, SV, x)[:, 0] if SV else np.zeros(0)
        f = float(alpha @ k) if SV else 0.0
        out.append(f)
        mistake = (1.0 if f >= 0 else -1.0) != y
        loss = 1 - y * f
        if not SV:
            if mistake:
                SV, alpha = [x], np.array([y])
            continue
        if not mistake and not (plus and 0 < loss < 1):
            continue
        d = np.linalg.solve(_gram(sigma, SV, SV), k)
        proj2 = float(k @ d)
        delta2 = 1.0 - proj2
        if mistake:
            if len(SV) < B and delta2 > PROJECTRON_MIN_RESIDUAL:
                SV.append(x)
                alpha = np.append(alpha, y)
            else:
                alpha = alpha + y * d
        else:
            tau = min(loss / proj2, 1.0)
            beta = tau * (2 * loss - tau * proj2 - 2 * U * math.sqrt(max(delta2, 0.0)))
            if beta >= 0:
                alpha = alpha + y * tau * d
    return np.array(out)


def ref_bpas(X, Y, B, sigma, C=1.0):
    """LSOKL BPAs.m (k(x, x) = 1)."""
    SV, alpha, out = [], [], []
    for x, y in zip(X, Y):
        k = _gram(sigma, SV, x)[:, 0] if SV else np.zeros(0)
        f = float(np.dot(alpha, k)) if SV else 0.0
        out.append(f)
        loss = max(0.0, 1 - y * f)
        if loss <= 0:
            continue
        tau = min(C, loss)
        if len(SV) < B:
            SV.append(x), alpha.append(y * tau)
            continue
        costs, betas = [], []
        for r in range(B):
            beta = alpha[r] * k[r] + tau * y
            dist = alpha[r] ** 2 + beta**2 - 2 * alpha[r] * beta * k[r]
            fr = f - alpha[r] * k[r] + beta
            costs.append(0.5 * dist + C * max(0.0, 1 - y * fr))
            betas.append(beta)
        r = int(np.argmin(costs))
        SV[r], alpha[r] = x, betas[r]
    return np.array(out)


def ref_bogd(X, Y, B, sigma, seed, eta=0.2, lam=0.0, gamma=10.0):
    SV, alpha, out, rnd = [], np.zeros(0), [], _Removals(seed, B)
    for x, y in zip(X, Y):
        f = float(alpha @ _gram(sigma, SV, x)[:, 0]) if SV else 0.0
        out.append(f)
        if y * f < 1:
            if len(SV) < B:
                SV.append(x)
                alpha = np.append((1 - eta * lam) * alpha, eta * y)
            else:
                r = rnd.next()
                alpha = alpha * B * (1 - eta * lam) / (B - 1)
                SV[r], alpha[r] = x, eta * y
            alpha = alpha * min(1.0, eta * gamma / np.abs(alpha).max())
        else:
            alpha = (1 - eta * lam) * alpha
    return np.array(out)


@pytest.mark.parametrize("name", NAMES)
def test_matches_reference_implementation(german, name):
    X, y = german
    p = permutation(len(y), 3)[:400]
    X, y = X[p], y[p]
    B, sigma, seed = 25, 2.0, 7
    params = dict(budget=B, kernel=okl.RBF(sigma=sigma), random_state=seed)
    if name == "bogd":
        params.update(decay="horizon", horizon=len(y), gamma=1.5)   # LSOKL's lambda = 1/T^2
    ours = okl.make(name, **params).run(X, y).decisions
    ref = {
        "rbp": lambda: ref_rbp(X, y, B, sigma, seed),
        "forgetron": lambda: ref_forgetron(X, y, B, sigma),
        "projectron": lambda: ref_projectron(X, y, B, sigma, False),
        "projectron++": lambda: ref_projectron(X, y, B, sigma, True),
        "bpa-s": lambda: ref_bpas(X, y, B, sigma),
        "bogd": lambda: ref_bogd(X, y, B, sigma, seed, lam=1 / len(y) ** 2, gamma=1.5),
    }[name]()
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("kernel", [okl.RBF(sigma=0.7), okl.Laplacian(sigma=2.0),
                                    okl.Polynomial(degree=3), okl.Linear()])
def test_column_kernel_row_equals_kernel_value(kernel):
    rng = np.random.default_rng(0)
    S, x = rng.random((9, 5)), rng.random(5)
    out = np.empty(9)
    column_kernel_row(*kernel.spec(), np.ascontiguousarray(S.T), 7, x, out)
    expect = [kernel_value(*kernel.spec(), S[j], x) for j in range(7)]
    np.testing.assert_allclose(out[:7], expect, rtol=1e-14, atol=0)
    np.testing.assert_allclose(out[:7], kernel(S[:7], x[None, :])[:, 0], rtol=1e-12)


# --------------------------------------------------------------------------------------------
# invariants


@pytest.mark.parametrize("name", NAMES)
def test_support_set_never_exceeds_budget(german, name):
    X, y = german
    B = 15
    m = okl.make(name, budget=B, kernel=okl.RBF(sigma=1.0), random_state=0)
    sizes = []
    for t in range(300):
        m.learn_one(X[t], y[t])
        sizes.append(m.m_)
    assert max(sizes) == B and np.all(np.diff(sizes) >= 0)
    assert m.support_vectors_.shape == (B, X.shape[1])


@pytest.mark.parametrize("dataset,sigma,budget", [("german", 2.0, 100), ("svmguide3", 1.0, 100),
                                                  ("german", 8.0, 30)])
@pytest.mark.parametrize("cls", [Projectron, ProjectronPlusPlus])
def test_projectron_kept_inverse_is_inverse_of_support_kernel(data_dir, cls, dataset, sigma, budget):
    X, y = okl.load_dataset(dataset, data_dir)
    p = permutation(len(y), 1)
    m = cls(budget=budget, kernel=okl.RBF(sigma=sigma))
    m.run(X[p], y[p])
    assert m.m_ == budget
    K = okl.RBF(sigma=sigma)(m.support_vectors_, m.support_vectors_)
    Kinv = m.Kinv_[: m.m_, : m.m_]
    np.testing.assert_allclose(Kinv, Kinv.T, rtol=0, atol=1e-9 * np.abs(Kinv).max())
    # relative to the conditioning: ||K^-1 K - I|| <= 1e-13 cond(K) (2e-13 at german/sigma 2)
    err = np.abs(Kinv @ K - np.eye(m.m_)).max()
    assert err <= max(1e-13 * np.linalg.cond(K), 1e-10), err
    np.testing.assert_allclose(Kinv, np.linalg.inv(K), rtol=0,
                               atol=1e-13 * np.linalg.cond(K) * np.abs(Kinv).max())


def test_projectron_projects_duplicates_instead_of_growing():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    m = Projectron(budget=10, kernel=okl.RBF(sigma=1.0))
    for x, y in zip(X, [-1.0, 1.0, -1.0]):  # all three are mistakes; the third duplicates x_2
        m.learn_one(x, y)
    assert m.m_ == 2 and m.counts_.tolist() == [2, 1, 0]
    assert np.isfinite(m.Kinv_).all()


def test_bpas_removes_the_minimal_cost_support_vector():
    """B = 2, Gaussian kernel gamma = 1/2 on the line; costs computed by hand."""
    m = BPAS(budget=2, C=1.0, kernel=okl.RBF(sigma=1.0))
    k = lambda a, b: math.exp(-0.5 * (a - b) ** 2)
    m.learn_one([0.0], 1.0)     # f = 0, l = 1, tau = 1: alpha_1 = 1
    m.learn_one([1.0], -1.0)    # f = k(0,1) = .6065, l = 1.6065, tau = min(1, l) = 1: alpha_2 = -1
    np.testing.assert_allclose(m.alpha_, [1.0, -1.0])
    # x_3 = 0.9, y = +1: f = k(0,.9) - k(1,.9) = .6670 - .9950 = -.3280, l = 1.3280, tau = 1
    f = k(0, 0.9) - k(1, 0.9)
    tau = min(1.0, 1 - f)
    # r = 1: beta = 1 k(0,.9) + tau = 1.6670,
    #        ||alpha_1 phi_1 - beta phi_3||^2 = 1 + beta^2 - 2 beta k(0,.9)
    b1 = k(0, 0.9) + tau
    q1 = 0.5 * (1 + b1**2 - 2 * b1 * k(0, 0.9)) + max(0.0, 1 - (f - k(0, 0.9) + b1))
    # r = 2: beta = -k(1,.9) + tau = .0050, distance 1 + beta^2 + 2 beta k(1,.9)
    b2 = -k(1, 0.9) + tau
    q2 = 0.5 * (1 + b2**2 + 2 * b2 * k(1, 0.9)) + max(0.0, 1 - (f + k(1, 0.9) + b2))
    assert q2 < q1 and abs(q1 - 1.1056) < 1e-3 and abs(q2 - 0.8330) < 1e-3
    m.learn_one([0.9], 1.0)
    np.testing.assert_allclose(m.support_vectors_[:, 0], [0.0, 0.9])
    np.testing.assert_allclose(m.alpha_, [1.0, b2], rtol=1e-12)
    assert m.last_removal_[0] == 1 and abs(m.last_removal_[1] - q2) < 1e-12
    # x_4 = 0.1, y = -1: a close call, Q_1 = 1.5036 > Q_2 = 1.4986, so the second goes again
    f4 = 1.0 * k(0, 0.1) + b2 * k(0.9, 0.1)
    tau4 = min(1.0, 1 + f4)
    c = []
    for a, s in ((1.0, 0.0), (b2, 0.9)):
        beta = a * k(s, 0.1) - tau4
        dist = a**2 + beta**2 - 2 * a * beta * k(s, 0.1)
        c.append(0.5 * dist + max(0.0, 1 + (f4 - a * k(s, 0.1) + beta)))
    m.learn_one([0.1], -1.0)
    assert abs(c[0] - 1.5036) < 1e-4 and abs(c[1] - 1.4986) < 1e-4
    assert int(m.last_removal_[0]) == 1 and abs(m.last_removal_[1] - c[1]) < 1e-12
    np.testing.assert_allclose(m.support_vectors_[:, 0], [0.0, 0.1])


def test_forgetron_shrink_is_the_largest_feasible_factor():
    grid = np.linspace(1e-9, 1.0, 200001)
    rng = np.random.default_rng(0)
    cases = [(0.5, 2.0, 0.0, 3.0), (0.5, 0.25, 0.0, 3.0), (2.0, -1.0, 1.0, 3.0), (1.0, 0.9, 10.0, 25.0)]
    cases += [(rng.uniform(0.05, 3), rng.uniform(-3, 3), q, q / (15 / 32) + rng.uniform(1, 5))
              for q in rng.uniform(0, 20, 30)]
    for delta, mu, Q, M in cases:
        g = Q + (delta * grid) ** 2 + 2 * delta * grid - 2 * delta * grid**2 * mu - 15 / 32 * M
        best = grid[g <= 0].max()
        phi = forgetron_shrink(delta, mu, Q, M)
        assert 0 < phi <= 1 and abs(phi - best) <= 1e-5, (delta, mu, Q, M, phi, best)


def test_forgetron_shrink_meets_its_inequality_every_round(german):
    X, y = german
    p = permutation(len(y), 2)
    m = Forgetron(budget=20, kernel=okl.RBF(sigma=8.0))
    removals = concave = 0
    for t in p:
        before = getattr(m, "removals_", 0)
        m.learn_one(X[t], y[t])
        if m.removals_ == before:
            continue
        removals += 1
        phi, delta, mu, Q_before, M = m.last_shrink_
        psi = (delta * phi) ** 2 + 2 * delta * phi - 2 * delta * phi**2 * mu
        assert 0 < phi <= 1
        assert M == m.M_ and abs(m.Q_ - (Q_before + psi)) <= 1e-9 * max(1.0, m.Q_)
        assert m.Q_ <= 15 / 32 * M + 1e-9 * M                      # the defining inequality
        if phi < 1:                                                 # and phi is the largest such
            assert abs(m.Q_ - 15 / 32 * M) <= 1e-9 * M
        if delta * delta - 2 * delta * mu < 0 and phi < 1:
            concave += 1      # the case LSOKL gets wrong (it returns the larger root, phi > 1)
    assert removals > 100 and concave > 0
    assert m.M_ == m.removals_ + 20


@pytest.mark.parametrize("gamma", [10.0, 1.2])
def test_bogd_coefficients_respect_the_clip(german, gamma):
    X, y = german
    p = permutation(len(y), 0)
    m = BOGD(budget=20, gamma=gamma, decay="horizon", horizon=len(y), kernel=okl.RBF(sigma=2.0),
             random_state=0)
    cap = m.eta * gamma
    hits = 0
    for t in p:
        m.learn_one(X[t], y[t])
        top = np.abs(m.alpha_[: m.m_]).max()
        assert top <= cap * (1 + 1e-12)
        hits += top >= cap * (1 - 1e-12)
    assert hits > 0          # the clip was active (not a vacuous check)


def test_bogd_decay_defaults():
    # default: lambda = 1 / (eta B), so the removal rescale B (1 - eta lambda) / (B - 1) is 1
    assert BOGD().decay_ == pytest.approx(1 / (0.2 * 100), rel=1e-15)
    assert BOGD(budget=40, eta=0.5).decay_ == pytest.approx(0.05, rel=1e-15)
    assert BOGD(decay="budget", budget=40, eta=0.5).decay_ == BOGD(budget=40, eta=0.5).decay_
    m = BOGD(budget=37, eta=0.3)
    assert m.budget * (1 - m.eta * m.decay_) / (m.budget - 1) == pytest.approx(1.0, abs=1e-15)
    assert BOGD(horizon=1000).decay_ == BOGD().decay_          # horizon only feeds "horizon"
    # the published (LSOKL / FORKS code) setting stays available
    assert BOGD(decay="horizon").decay_ == 0.0
    assert BOGD(decay="horizon", horizon=1000).decay_ == 1e-6
    assert BOGD(horizon=1000, decay=0.01).decay_ == 0.01
    assert BOGD(decay="horizon", horizon=1000).clone().decay_ == 1e-6
    with pytest.raises(ValueError, match="decay"):
        BOGD(decay="lsokl")
    with pytest.raises(ValueError, match="budget"):
        BOGD(budget=1)


def ref_bogd_squared(X, Y, B, sigma, seed, eta, lam, gamma=10.0):
    """BOGD with the squared loss (g = 2 (f - y), an update every round with g != 0: under target
    centring the first round's residual is 0), list-based."""
    SV, alpha, out, rnd = [], np.zeros(0), [], _Removals(seed, B)
    for x, y in zip(X, Y):
        f = float(alpha @ _gram(sigma, SV, x)[:, 0]) if SV else 0.0
        out.append(f)
        g = 2 * (f - y)
        if g == 0.0:
            continue
        if len(SV) < B:
            SV.append(x)
            alpha = np.append((1 - eta * lam) * alpha, -eta * g)
        else:
            r = rnd.next()
            alpha = alpha * B * (1 - eta * lam) / (B - 1)
            SV[r], alpha[r] = x, -eta * g
        alpha = alpha * min(1.0, eta * gamma / np.abs(alpha).max())
    return np.array(out)


@pytest.mark.parametrize("loss", ["hinge", "squared"])
def test_bogd_default_decay_matches_reference(german, cpusmall, loss):
    """The default (lambda = 1 / (eta B)) against the list-based rules, both losses."""
    X, y = german if loss == "hinge" else cpusmall
    p = permutation(len(y), 5)[:400]
    X, y = X[p], y[p]
    B, sigma, seed, eta = 25, 2.0, 3, 0.2
    ours = okl.make("bogd", budget=B, loss=loss, kernel=okl.RBF(sigma=sigma),
                    random_state=seed).run(X, y).decisions
    lam = 1 / (eta * B)
    if loss == "hinge":
        ref = ref_bogd(X, y, B, sigma, seed, eta=eta, lam=lam)
    else:  # the default center_targets: the expansion learns y_t - mu_t (the mean including y_t)
        # and mu_{t-1} is added to its prediction
        means = np.add.accumulate(y) / np.arange(1, len(y) + 1)
        mu = np.concatenate(([0.0], means[:-1]))
        ref = ref_bogd_squared(X, y - means, B, sigma, seed, eta, lam) + mu
        plain = okl.make("bogd", budget=B, loss=loss, kernel=okl.RBF(sigma=sigma), center_targets=False,
                         random_state=seed).run(X, y).decisions
        np.testing.assert_allclose(plain, ref_bogd_squared(X, y, B, sigma, seed, eta, lam), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("decay", [None, "horizon"])
def test_bogd_removal_rescale(cpusmall, decay):
    """On a full-budget update round every surviving coefficient is multiplied by
    rho = B (1 - eta lambda) / (B - 1): exactly 1 with the default decay (a support vector keeps
    the coefficient it was added with), B / (B - 1) with the published lambda = 1/T^2."""
    X, y = cpusmall
    B = 20
    m = BOGD(budget=B, loss="squared", decay=decay, horizon=len(y), kernel=okl.RBF(sigma=1.0),
             random_state=0)
    m.run(X[:100], y[:100])
    rho = B * (1 - m.eta * m.decay_) / (B - 1)
    assert rho == (pytest.approx(1.0, abs=1e-15) if decay is None
                   else pytest.approx(B / (B - 1), rel=1e-8))
    checked = 0
    for t in range(100, 400):
        before = m.alpha_.copy()
        m.learn_one(X[t], y[t])
        if np.abs(m.alpha_).max() >= m.eta * m.gamma * (1 - 1e-12):
            continue                                      # clipped round: skip
        kept = np.flatnonzero(~np.isclose(m.SVT_, X[t][:, None]).all(axis=0))
        assert len(kept) == B - 1
        np.testing.assert_allclose(m.alpha_[kept], rho * before[kept], rtol=1e-12, atol=0)
        checked += 1
    assert checked > 100


def test_bogd_default_beats_running_mean_where_published_decay_does_not(cpusmall):
    """cpusmall, permutation 0, library defaults otherwise (width from the stream, B = 100,
    eta = 0.2, squared loss), seeds 0-2: the running mean's loss is 0.0347. The default decay
    measures 0.0273 / 0.0259 / 0.0265 on the plain expansion (``center_targets=False``) and
    0.0140 / 0.0153 / 0.0143 on the residual from the running mean (the default); the published
    lambda = 1/T^2 gives 0.147 (plain; the rescaled survivors grow until the clip, ALGORITHMS.md
    6 / BOGD docstring). These are on the loader's [0, 1] features as given (``scale=None``); with
    the default input scale learned from the first 50 rows the centred default makes 0.0203 /
    0.0213 / 0.0204, at most 0.61 x the running mean."""
    X, y = cpusmall
    mean_so_far = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))])
    baseline = float(np.mean((mean_so_far - y) ** 2))
    assert baseline == pytest.approx(0.03465, abs=1e-5)
    plain = [okl.make("bogd", loss="squared", center_targets=False, scale=None, random_state=s).run(X, y)
             .mean_squared_loss for s in range(3)]
    ours = [okl.make("bogd", loss="squared", scale=None, random_state=s).run(X, y).mean_squared_loss
            for s in range(3)]
    published = okl.make("bogd", loss="squared", decay="horizon", horizon=len(y), center_targets=False,
                         scale=None, random_state=0).run(X, y).mean_squared_loss
    defaults = [okl.make("bogd", loss="squared", random_state=s).run(X, y).mean_squared_loss for s in range(3)]
    np.testing.assert_allclose(defaults, [0.02032, 0.02126, 0.02036], atol=2e-4)
    np.testing.assert_allclose(plain, [0.02727, 0.02586, 0.02652], atol=2e-4)
    np.testing.assert_allclose(ours, [0.01397, 0.01529, 0.01429], atol=2e-4)
    assert max(plain) < 0.8 * baseline and max(ours) < 0.6 * max(plain)
    assert published == pytest.approx(0.1474, abs=1e-3) and published > 4 * baseline


def test_bogd_hinge_default_coefficients_stay_below_eta(german):
    """With the hinge loss (|g| <= 1) and the default decay no coefficient exceeds eta, so the
    clip eta gamma never acts; with the published decay the survivors grow past eta."""
    X, y = german
    p = permutation(len(y), 0)
    m = BOGD(budget=20, kernel=okl.RBF(sigma=2.0), random_state=0)
    old = BOGD(budget=20, decay="horizon", horizon=len(y), kernel=okl.RBF(sigma=2.0),
               random_state=0)
    top = top_old = 0.0
    for t in p:
        m.learn_one(X[t], y[t])
        old.learn_one(X[t], y[t])
        top = max(top, np.abs(m.alpha_[: m.m_]).max())
        top_old = max(top_old, np.abs(old.alpha_[: old.m_]).max())
    assert top <= m.eta * (1 + 1e-12) and top == pytest.approx(m.eta, rel=1e-12)
    assert top_old > 2 * old.eta


@pytest.mark.parametrize("decay", [None, "horizon"])
def test_bogd_save_load_and_split_runs_agree(tmp_path, german, decay):
    X, y = german
    p = permutation(len(y), 1)[:300]
    X, y = X[p], y[p]
    params = dict(budget=30, decay=decay, horizon=300, random_state=4)   # width from the stream
    whole = BOGD(**params).run(X, y).decisions
    m = BOGD(**params)
    first = m.run(X[:120], y[:120]).decisions
    m.save(tmp_path / "bogd.npz")
    m2 = BOGD.load(tmp_path / "bogd.npz")
    assert m2.decay == decay and m2.decay_ == m.decay_
    rest = []
    for x, t in zip(X[120:], y[120:]):
        rest.append(m2.predict_one(x))
        m2.learn_one(x, t)
    np.testing.assert_allclose(np.concatenate([first, rest]), whole, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_inconsistent_state_is_refused_not_indexed(german, name):
    """The compiled loops do not bounds-check; a state that does not fit (an edited model file)
    must raise instead of reading or writing outside the arrays."""
    X, y = german
    m = okl.make(name, budget=10, kernel=okl.RBF(sigma=1.0), random_state=0)
    m.run(X[:50], y[:50])
    m.SVT_ = m.SVT_[:, :5].copy()
    with pytest.raises(ValueError, match="SVT_"):
        m.learn_one(X[50], y[50])
    m = okl.make(name, budget=10, kernel=okl.RBF(sigma=1.0), random_state=0)
    m.run(X[:50], y[:50])
    m.m_ = 11
    with pytest.raises(ValueError, match="m_"):
        m.predict_one(X[50])


@pytest.mark.parametrize("name", NAMES)
def test_state_edited_between_events_is_refused(german, name):
    """Per event, a learner's own round from a checked layout counts as checked (the next call's
    check is a lookup), and a state edited by hand between events is still checked and refused."""
    from okl.runtime.events import event_state
    from okl.runtime.state import layout_key

    X, y = german
    m = okl.make(name, budget=10, kernel=okl.RBF(sigma=1.0), random_state=0)
    for t in range(40):
        m.predict_one(X[t])
        m.learn_one(X[t], y[t])
        assert event_state(m).layout == layout_key(m) or t == 0  # (the first round starts the state)
    m.m_ = 11
    assert event_state(m).layout != layout_key(m)
    with pytest.raises(ValueError, match="m_"):
        m.predict_one(X[40])
    with pytest.raises(ValueError, match="m_"):
        m.learn_one(X[40], y[40])
    m = okl.make(name, budget=10, kernel=okl.RBF(sigma=1.0), random_state=0)
    for t in range(40):
        m.learn_one(X[t], y[t])
    m.SVT_ = m.SVT_[:, :5].copy()
    with pytest.raises(ValueError, match="SVT_"):
        m.learn_one(X[40], y[40])


def test_defaults():
    assert ProjectronPlusPlus(budget=100).U_ == pytest.approx(0.25 * math.sqrt(101 / math.log(101)))
    assert BPAS().C == 1.0 and BOGD().eta == 0.2 and BOGD().gamma == 10.0
    assert {RBP().budget, Forgetron().budget, Projectron().budget} == {100}
    assert okl.make("projectron++").name == "projectron++" and ProjectronPlusPlus.name == "projectron++"


# --------------------------------------------------------------------------------------------
# mistake rates on real data (20 permutations, every round counted, B = 100)

#: LSOKL under Octave (ALGORITHMS.md 9.10): mean mistake % over 20 permutations.
LSOKL = {
    ("german", 8): {"rbp": 36.16, "forgetron": 39.33, "projectron": 34.91, "projectron++": 34.37,
                    "bpa-s": 35.11, "bogd": 35.73},
    ("german", 2): {"projectron++": 30.54, "bpa-s": 30.94},
    ("german", 1): {"projectron++": 31.91, "bpa-s": 31.12},
    ("svmguide3", 8): {"rbp": 35.41, "forgetron": 37.80, "projectron": 33.25, "projectron++": 32.67,
                       "bpa-s": 32.73, "bogd": 31.69},
    ("svmguide3", 2): {"projectron++": 27.84, "bpa-s": 28.43},
    ("svmguide3", 1): {"projectron++": 25.78, "bpa-s": 26.34},
}

#: Allowed |ours - LSOKL| for the deterministic learners. BPA-S and (on german) the Projectrons are
#: the same algorithm in exact arithmetic: ours agree to the table's rounding. svmguide3 has 41
#: duplicate rows: LSOKL adds a duplicate (dividing by delta^2 ~ 1e-16, Octave carrying complex
#: numbers), ours projects it (PROJECTRON_MIN_RESIDUAL), measured at most 0.05 points apart. The
#: Forgetron differs by design: LSOKL takes the wrong root when the quadratic is concave and
#: counts M by sign mistakes; a port of LSOKL with those two quirks reproduces 39.33 / 37.80
#: exactly, ours measures 39.47 / 37.74.
DETERMINISTIC_TOL = {"bpa-s": 0.02, "projectron": 0.02, "projectron++": 0.02, "forgetron": 0.3}
DUPLICATE_TOL = 0.1


def _rates(X, y, name, sigma, runs=RUNS):
    out = []
    for seed in range(runs):
        p = permutation(len(y), seed)
        params = dict(budget=100, kernel=okl.RBF(sigma=sigma), random_state=seed)
        if name == "bogd":
            params.update(decay="horizon", horizon=len(y))   # the published lambda = 1/T^2
        out.append(okl.make(name, **params).run(X[p], y[p]).mistake_rate)
    return np.array(out)


@pytest.fixture(scope="module")
def measured(german, svmguide3):
    data = {"german": german, "svmguide3": svmguide3}
    res = {}
    for (ds, sigma), cells in LSOKL.items():
        for name in cells:
            res[ds, sigma, name] = _rates(*data[ds], name, float(sigma))
    for name in NAMES:                                  # SkeGD Table 3 comparison for svmguide3
        if ("svmguide3", 2, name) not in res:
            res["svmguide3", 2, name] = _rates(*data["svmguide3"], name, 2.0)
    return res


@pytest.mark.parametrize("cell", [(ds, s, n) for (ds, s), cells in LSOKL.items() for n in cells],
                         ids=lambda c: f"{c[0]}-sigma{c[1]}-{c[2]}")
def test_mistake_rate_matches_lsokl(measured, cell):
    ds, sigma, name = cell
    r = measured[cell]
    if name in ("rbp", "bogd"):
        # different random draws than Octave's: two independent 20-run means differ by less than
        # 2.5 standard errors of their difference
        tol = 2.5 * r.std(ddof=1) * math.sqrt(2 / RUNS)
    elif ds == "svmguide3" and name.startswith("projectron"):
        tol = DUPLICATE_TOL
    else:
        tol = DETERMINISTIC_TOL[name]
    assert abs(r.mean() - LSOKL[ds, sigma][name]) <= tol, (r.mean(), LSOKL[ds, sigma][name], tol)


#: SkeGD Table 3 (ALGORITHMS.md 9.3): mean, std. Kernel width chosen by the authors' kernel
#: alignment and not reported; german matches at sigma = 8, svmguide3 at sigma = 2.
SKEGD = {
    "german": {"rbp": (38.924, 1.754), "forgetron": (38.387, 1.345), "projectron": (37.008, 1.232),
               "projectron++": (35.396, 1.262), "bpa-s": (35.345, 1.119), "bogd": (33.985, 2.013)},
    "svmguide3": {"rbp": (34.091, 1.230), "forgetron": (35.023, 1.161), "projectron": (34.172, 0.989),
                  "projectron++": (28.902, 0.650), "bpa-s": (28.948, 0.765), "bogd": (30.013, 1.109)},
}


@pytest.mark.parametrize("ds,sigma", [("german", 8), ("svmguide3", 2)])
@pytest.mark.parametrize("name", NAMES)
def test_mistake_rate_near_skegd_table3(measured, ds, sigma, name):
    mean, std = SKEGD[ds][name]
    # within 2 paper standard deviations, except svmguide3's Projectron, 2.1 std below the table
    # (the table's Projectron may be LIBOL's; LSOKL's gives 32.1 at this width as ours)
    k = 2.5 if (ds, name) == ("svmguide3", "projectron") else 2.0
    assert abs(measured[ds, sigma, name].mean() - mean) <= k * std


#: The authors' FORKS C++ code rerun at sigma = 8 (ALGORITHMS.md 9.9): mean, std.
FORKS_CODE = {
    "german": {"rbp": (37.56, 2.55), "bpa-s": (35.09, 1.05), "bogd": (36.27, 2.66)},
    "svmguide3": {"rbp": (36.08, 2.68), "bpa-s": (32.70, 0.86), "bogd": (32.04, 1.56)},
}


@pytest.mark.parametrize("ds", ["german", "svmguide3"])
@pytest.mark.parametrize("name", ["rbp", "bpa-s", "bogd"])
def test_mistake_rate_near_forks_code(measured, ds, name):
    """BPA-S is the same algorithm (float32 there); RBP and BOGD within one std of the code's
    runs. The code's Projectron (31.89 / 28.40) is not compared: it runs in float32, where at
    sigma = 8 (cond K_SV ~ 1e7) delta^2 turns negative, sqrt gives NaN, and from then on every
    prediction is -1 (the majority rate); a float32 NumPy port of that behaviour gives 31.89 +- 0.58
    and 28.40 +- 0.45."""
    mean, std = FORKS_CODE[ds][name]
    tol = 0.1 if name == "bpa-s" else std
    assert abs(measured[ds, 8, name].mean() - mean) <= tol
