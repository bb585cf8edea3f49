"""Kernels and losses against direct formulas and finite differences."""

import numpy as np
import pytest

import okl
from okl import _compiled
from okl.kernels import RBF, Laplacian, Linear, Polynomial, as_kernel, kernel_from_dict
from okl.losses import LOSSES, get_loss, loss_values

RNG = np.random.default_rng(0)
X = RNG.random((7, 5))
Y = RNG.random((4, 5))


@pytest.mark.parametrize("kernel", [RBF(0.7), Laplacian(1.3), Polynomial(3, 0.5, 1.0), Linear()])
def test_kernel_matrix_matches_pairwise_definition_and_compiled_value(kernel):
    direct = {
        "rbf": lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * kernel.sigma**2)) if kernel.name == "rbf" else 0,
        "laplacian": lambda a, b: np.exp(-np.sum(np.abs(a - b)) / kernel.sigma) if kernel.name == "laplacian" else 0,
        "polynomial": lambda a, b: (0.5 * a @ b + 1.0) ** 3,
        "linear": lambda a, b: a @ b,
    }[kernel.name]
    K = kernel(X, Y)
    expected = np.array([[direct(a, b) for b in Y] for a in X])
    np.testing.assert_allclose(K, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X, X)), rtol=1e-12)
    spec = kernel.spec()
    compiled = np.array([[_compiled.kernel_value(*spec, a, b) for b in Y] for a in X])
    np.testing.assert_allclose(compiled, expected, rtol=1e-12, atol=1e-14)
    assert kernel_from_dict(kernel.to_dict()) == kernel


def test_rbf_gamma_and_random_fourier_features_approximate_the_kernel():
    k = RBF(sigma=0.8)
    assert k.gamma == pytest.approx(1 / (2 * 0.8**2))
    U = k.sample_frequencies(20000, X.shape[1], np.random.default_rng(1))
    from okl.learners.fogd import fourier_features

    Z = fourier_features(X, U)
    # Monte-Carlo error of each entry ~ 1/sqrt(2D) = 0.005; 5 standard errors
    np.testing.assert_allclose(Z @ Z.T, k(X, X), atol=0.025)
    np.testing.assert_allclose((Z * Z).sum(1), 1.0, atol=1e-12)


def test_laplacian_frequencies_approximate_the_kernel():
    k = Laplacian(sigma=1.5)
    from okl.learners.fogd import fourier_features

    Z = fourier_features(X, k.sample_frequencies(40000, X.shape[1], np.random.default_rng(2)))
    np.testing.assert_allclose(Z @ Z.T, k(X, X), atol=0.025)


def test_kernel_parameter_validation():
    with pytest.raises(ValueError, match="sigma must be in"):
        RBF(sigma=0)
    with pytest.raises(ValueError, match="degree"):
        Polynomial(degree=0)
    with pytest.raises(ValueError, match="unknown kernel"):
        as_kernel("cosine")
    with pytest.raises(ValueError, match="not shift-invariant"):
        okl.FOGD(kernel=Linear())


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_derivative_matches_finite_differences(name):
    loss = get_loss(name)
    ys = [1.0, -1.0] if loss.task == "classification" else [0.3, 0.9]
    h = 1e-6
    for y in ys:
        for z in np.linspace(-2.3, 2.3, 17):
            if loss.name in ("hinge", "squared_hinge") and abs(1 - y * z) < 1e-3:
                continue  # kink of the hinge
            fd = (loss.value(z + h, y) - loss.value(z - h, y)) / (2 * h)
            assert loss.derivative(z, y) == pytest.approx(fd, abs=1e-6)
            assert _compiled.loss_derivative(loss.kind, z, y) == pytest.approx(loss.derivative(z, y), abs=1e-15)
            assert _compiled.loss_value(loss.kind, z, y) == pytest.approx(loss.value(z, y), abs=1e-15)
        zs = np.linspace(-2, 2, 9)
        np.testing.assert_allclose(loss_values(loss, zs, np.full(9, y)), [loss.value(z, y) for z in zs])


def test_loss_curvature_constants():
    assert get_loss("squared").curvature(1.0) == pytest.approx(1 / 8)
    assert get_loss("hinge").curvature() == 0.0
    # squared hinge: 0.5 * min(1/(4 G D), beta) with G = 2(1+C), D = 2C, beta = 1/(2(1+C)^2)
    assert get_loss("squared_hinge").curvature(1.0) == pytest.approx(0.5 * min(1 / 32, 1 / 8))
    assert get_loss("logistic").curvature(1.0) == pytest.approx(0.5 * min(1 / 8, np.exp(-1)))
    with pytest.raises(ValueError, match="loss must be one of"):
        get_loss("absolute")
