"""The KOM discrepancy (OPFES Def. 3.1, Lemma 3.2), its random-feature objective (Eq. 6-8), the
subgradient (Lemma B.1), mirror descent (Algorithm 1) and the Procrustes rotation (Prop. 4.1)."""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.evolvable import make_evolvable_stream
from okl.evolvable.kom import (KOMProblem, KOMStatistics, default_kom_step, kom_discrepancy,
                               kom_discrepancy_factors, kom_objective, kom_subgradient, mirror_descent,
                               procrustes_rotation, psd_sqrt)
from okl.evolvable.opfes import draw_fourier, fourier_map


def random_psd(rng, n, rank):
    F = rng.normal(size=(n, rank))
    return F @ F.T, F


def direct_procrustes(K1, K2):
    """min over orthogonal U of ||U sqrt(K1) - sqrt(K2)||_F / sqrt(n), by the SVD solution
    U = W V^T of sqrt(K2) sqrt(K1)^T = W S V^T (orthogonal Procrustes)."""
    A, B = psd_sqrt(K1), psd_sqrt(K2)
    W, _, Vt = np.linalg.svd(B @ A.T)
    U = W @ Vt
    assert np.allclose(U @ U.T, np.eye(len(U)), atol=1e-10)
    return np.linalg.norm(U @ A - B) / np.sqrt(len(U))


@pytest.mark.parametrize("n,r1,r2", [(6, 6, 6), (9, 3, 5), (12, 12, 2), (7, 1, 7)])
def test_exact_kom_equals_the_procrustes_distance(n, r1, r2):
    rng = np.random.default_rng(n * 100 + r1 * 10 + r2)
    K1, F1 = random_psd(rng, n, r1)
    K2, F2 = random_psd(rng, n, r2)
    e = kom_discrepancy(K1, K2)
    assert e > 0.1
    assert abs(e - direct_procrustes(K1, K2)) < 1e-8
    # the same value from any factorisations K_i = F_i F_i^T
    assert abs(e - kom_discrepancy_factors(F1, F2)) < 1e-8
    Q, _ = np.linalg.qr(rng.normal(size=(r2, r2)))
    assert abs(e - kom_discrepancy_factors(F1, F2 @ Q)) < 1e-8
    # no rotation does better than the minimiser (a few random ones)
    A, B = psd_sqrt(K1), psd_sqrt(K2)
    for _ in range(5):
        U, _ = np.linalg.qr(rng.normal(size=(n, n)))
        assert np.linalg.norm(U @ A - B) / np.sqrt(n) >= e - 1e-12


def test_exact_kom_is_zero_for_identical_kernels_and_symmetric():
    rng = np.random.default_rng(3)
    K1, _ = random_psd(rng, 10, 4)
    K2, _ = random_psd(rng, 10, 7)
    assert kom_discrepancy(K1, K1) < 1e-6           # sqrt of a rounding-level quantity
    assert kom_discrepancy(K2, K2) < 1e-6
    assert abs(kom_discrepancy(K1, K2) - kom_discrepancy(K2, K1)) < 1e-10
    # Gaussian kernels on real features: identical kernels 0, different widths > 0
    X = rng.random((15, 3))
    G1 = okl.RBF(sigma=0.5)(X, X)
    assert kom_discrepancy(G1, G1) < 1e-6
    assert kom_discrepancy(G1, okl.RBF(sigma=2.0)(X, X)) > 0.1


def test_exact_kom_rejects_bad_gram_matrices():
    with pytest.raises(ValueError, match="square"):
        kom_discrepancy(np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="same sample"):
        kom_discrepancy(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="not positive semidefinite"):
        kom_discrepancy(np.diag([1.0, -1.0]), np.eye(2))
    with pytest.raises(ValueError, match="non-finite"):
        kom_discrepancy(np.diag([1.0, np.nan]), np.eye(2))


def test_objective_is_the_squared_discrepancy_up_to_constants():
    """With M from sqrt(p1)-weighted features (the exact reading), f(p) = (Te E^2 - tr K1)/2 where E
    is the exact KOM discrepancy between K1 = Phi1 diag(p1) Phi1^T and K2 = Phi2 diag(p) Phi2^T."""
    rng = np.random.default_rng(7)
    te, d1, d2 = 12, 9, 6
    P1, P2 = rng.normal(size=(te, d1)), rng.normal(size=(te, d2))
    p1 = rng.dirichlet(np.ones(d1))
    p = rng.dirichlet(np.ones(d2))
    stats = KOMStatistics(np.sqrt(p1), d2)
    stats.update(P1[:5], P2[:5])
    stats.update(P1[5:], P2[5:])            # streaming = batch
    np.testing.assert_allclose(stats.M, (P1 * np.sqrt(p1)).T @ P2, atol=1e-12)
    K1 = (P1 * p1) @ P1.T
    K2 = (P2 * p) @ P2.T
    f = kom_objective(stats.M, stats.v, p)
    assert abs(f - (te * kom_discrepancy(K1, K2) ** 2 - np.trace(K1)) / 2) < 1e-8
    # the reduced problem gives the same objective, also for a rank-deficient M
    assert abs(KOMProblem(stats.M, stats.v).objective(p) - f) < 1e-9
    stats3 = KOMStatistics(np.sqrt(p1), d2)
    stats3.update(P1[:3], P2[:3])           # rank(M) <= 3
    assert abs(KOMProblem(stats3.M, stats3.v).objective(p) - kom_objective(stats3.M, stats3.v, p)) < 1e-9


@pytest.mark.parametrize("d1,d2", [(4, 6), (7, 5), (1, 8)])
def test_subgradient_matches_finite_differences(d1, d2):
    rng = np.random.default_rng(d1 * 10 + d2)
    M = rng.normal(size=(d1, d2))
    v = rng.random(d2) + 0.5
    p = rng.dirichlet(2 * np.ones(d2))                    # interior point
    exact = kom_subgradient(M, v, p, gradient="exact")
    h = 1e-6
    fd = np.empty(d2)
    for l in range(d2):                                   # f is defined on all of p >= 0
        e = np.zeros(d2)
        e[l] = h
        fd[l] = (_f(M, v, p + e) - _f(M, v, p - e)) / (2 * h)
    np.testing.assert_allclose(exact, fd, rtol=1e-5, atol=1e-6)
    # Lemma B.1 as printed is twice the derivative
    np.testing.assert_allclose(kom_subgradient(M, v, p, gradient="paper"), 2 * exact, rtol=1e-12)
    # the printed form v - diag(M^T U W^T)/sqrt(p)
    U, _, Wt = np.linalg.svd(M * np.sqrt(p), full_matrices=False)
    printed = v - np.diag(M.T @ U @ Wt) / np.sqrt(p)
    np.testing.assert_allclose(kom_subgradient(M, v, p), printed, rtol=1e-9, atol=1e-9)


def _f(M, v, p):
    return 0.5 * p @ v - np.linalg.svd(M * np.sqrt(p), compute_uv=False).sum()


@pytest.fixture(scope="module")
def evolving_sample(data_dir):
    """KOM statistics of a real evolving stage: svmguide1, Te = 300, d1 = d2 = 80, sigma = 0.25."""
    X, y = okl.load_dataset("svmguide1", data_dir)
    s = make_evolvable_stream(X[:3000], y[:3000], seed=0, evolving_length=300)
    X1, X2, ye = s.evolving()
    rng = np.random.default_rng(0)
    P1 = fourier_map(X1, *draw_fourier(rng, 80, X1.shape[1], 0.25))
    P2 = fourier_map(X2, *draw_fourier(rng, 80, X2.shape[1], 0.25))
    return P1, P2, ye


@pytest.mark.parametrize("weight", ["p1", "sqrt_p1"])
def test_mirror_descent_lowers_f_on_a_real_evolving_sample(evolving_sample, weight):
    P1, P2, _ = evolving_sample
    d1 = P1.shape[1]
    stats = KOMStatistics(np.full(d1, 1.0 / d1 if weight == "p1" else d1 ** -0.5), P2.shape[1])
    stats.update(P1, P2)
    problem = KOMProblem(stats.M, stats.v)
    uniform = np.full(P2.shape[1], 1.0 / P2.shape[1])
    res = mirror_descent(problem=problem, iterations=60, step=2e-4, track_objective=True)
    f0, f_end = res.objective[0], res.objective[-1]
    assert abs(f0 - kom_objective(stats.M, stats.v, uniform)) < 1e-8
    assert f_end < f0 - 1e-3 * abs(f0)
    assert abs(f_end - kom_objective(stats.M, stats.v, res.p)) < 1e-8
    assert np.all(np.diff(res.objective) <= 1e-9 * abs(f0))   # small steps: monotone on this sample
    assert abs(res.p.sum() - 1) < 1e-12 and res.p.min() > 0


def test_ideal_kernel_statistics_have_a_closed_form(evolving_sample):
    _, P2, y = evolving_sample
    stats = KOMStatistics(np.ones(1), P2.shape[1])
    stats.update(y[:, None], P2)
    p = np.random.default_rng(1).dirichlet(np.ones(P2.shape[1]))
    m = y @ P2
    assert abs(kom_objective(stats.M, stats.v, p) - (0.5 * p @ stats.v - np.sqrt(p @ m ** 2))) < 1e-8
    res = mirror_descent(stats.M, stats.v, iterations=50, step=1e-4, track_objective=True)
    assert res.objective[-1] < res.objective[0]


def test_default_step_follows_the_theorem():
    eta = default_kom_step(1000, 1000, 1000, 1e-4)
    assert abs(eta - np.sqrt(2 * np.log(1000) / (1000 * 1000 * (1 + np.sqrt(1000) / 1e-4)))) < 1e-18
    assert default_kom_step(1, 1000, 1000, 1e-4) == 0.0


@pytest.mark.parametrize("te,d", [(5, 8), (8, 8), (12, 8)])
def test_rotation_transports_a_rotated_feature_space(te, d):
    """Z2 = Z1 Q^T (each z2 = Q z1, Q orthogonal): w2 = U*^T w1 reproduces w1's predictions on the
    sample (Prop. 4.1 + Lemma 4.2 with E = 0), whether Te < d, = d or > d."""
    rng = np.random.default_rng(te)
    Z1 = rng.normal(size=(te, d))
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    Z2 = Z1 @ Q.T
    w1 = rng.normal(size=d)
    V, W = procrustes_rotation(Z1.T @ Z2)          # M = sum z1 z2^T, p uniform
    w2 = W @ (V.T @ w1)
    np.testing.assert_allclose(Z2 @ w2, Z1 @ w1, atol=1e-9)
    if te >= d:
        np.testing.assert_allclose(W @ V.T, Q, atol=1e-9)   # the full rotation is recovered
    assert np.linalg.norm(w2) <= np.linalg.norm(w1) + 1e-12   # U* is a partial isometry
