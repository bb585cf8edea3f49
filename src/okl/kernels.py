"""Kernel functions.

Every kernel gives the Gram matrix between two sets (``kernel(X, Y)``), its diagonal
(``kernel.diag(X)``), a plain-dict description for model files (``to_dict``/``from_dict``)
and a numeric *spec* ``(kind, a, b, c)`` that the compiled per-round loops
(:mod:`okl._compiled`) evaluate without Python objects.

Shift-invariant kernels can also draw random Fourier frequencies (Rahimi & Recht 2007;
ALGORITHMS.md 1.5): ``kernel.sample_frequencies(n, dim, rng)``.

>>> import numpy as np
>>> k = RBF(sigma=2.0)
>>> k.gamma
0.125
>>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
>>> np.round(k(X, X), 4)
array([[1.    , 0.7788],
       [0.7788, 1.    ]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from okl._validation import check_positive, check_nonnegative

# Numeric kind codes used by the compiled loops (okl._compiled.kernel_value).
RBF_KIND = 0
LAPLACIAN_KIND = 1
POLYNOMIAL_KIND = 2
LINEAR_KIND = 3


def squared_distances(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Pairwise squared Euclidean distances ||x_i - y_j||^2, clipped at 0 against rounding."""
    X = np.atleast_2d(X)
    Y = np.atleast_2d(Y)
    d = (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2.0 * (X @ Y.T)
    np.maximum(d, 0.0, out=d)
    return d


class Kernel:
    """Base class: a positive-definite kernel kappa(x, x')."""

    name = "kernel"

    def __call__(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def diag(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(X)
        return np.array([self(x[None, :], x[None, :])[0, 0] for x in X])

    def spec(self) -> tuple[int, float, float, float]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def sample_frequencies(self, n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
        raise ValueError(f"kernel {self.name!r} is not shift-invariant: no random Fourier features")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kernel) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "name")
        return f"{type(self).__name__}({args})"


class RBF(Kernel):
    """Gaussian kernel kappa(x, x') = exp(-||x - x'||^2 / (2 sigma^2)) (SkeGD 6.1).

    ``gamma = 1 / (2 sigma^2)``; kappa(x, x) = 1. Random Fourier frequencies are
    u ~ N(0, sigma^-2 I) (ALGORITHMS.md 1.5).
    """

    name = "rbf"

    def __init__(self, sigma: float = 1.0):
        self.sigma = check_positive("sigma", sigma)

    @property
    def gamma(self) -> float:
        return 1.0 / (2.0 * self.sigma**2)

    def __call__(self, X, Y):
        return np.exp(-self.gamma * squared_distances(X, Y))

    def diag(self, X):
        return np.ones(np.atleast_2d(X).shape[0])

    def spec(self):
        return (RBF_KIND, self.gamma, 0.0, 0.0)

    def to_dict(self):
        return {"name": self.name, "sigma": self.sigma}

    def sample_frequencies(self, n, dim, rng):
        return rng.standard_normal((n, dim)) / self.sigma


class Laplacian(Kernel):
    """Laplacian kernel kappa(x, x') = exp(-||x - x'||_1 / sigma).

    Random Fourier frequencies: independent Cauchy coordinates with scale 1/sigma.
    """

    name = "laplacian"

    def __init__(self, sigma: float = 1.0):
        self.sigma = check_positive("sigma", sigma)

    def __call__(self, X, Y):
        X = np.atleast_2d(X)
        Y = np.atleast_2d(Y)
        d = np.abs(X[:, None, :] - Y[None, :, :]).sum(-1)
        return np.exp(-d / self.sigma)

    def diag(self, X):
        return np.ones(np.atleast_2d(X).shape[0])

    def spec(self):
        return (LAPLACIAN_KIND, 1.0 / self.sigma, 0.0, 0.0)

    def to_dict(self):
        return {"name": self.name, "sigma": self.sigma}

    def sample_frequencies(self, n, dim, rng):
        return rng.standard_cauchy((n, dim)) / self.sigma


class Polynomial(Kernel):
    """Polynomial kernel kappa(x, x') = (scale <x, x'> + offset)^degree."""

    name = "polynomial"

    def __init__(self, degree: int = 2, scale: float = 1.0, offset: float = 1.0):
        if int(degree) != degree or degree < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        self.degree = int(degree)
        self.scale = check_positive("scale", scale)
        self.offset = check_nonnegative("offset", offset)

    def __call__(self, X, Y):
        return (self.scale * (np.atleast_2d(X) @ np.atleast_2d(Y).T) + self.offset) ** self.degree

    def diag(self, X):
        X = np.atleast_2d(X)
        return (self.scale * (X * X).sum(1) + self.offset) ** self.degree

    def spec(self):
        return (POLYNOMIAL_KIND, self.scale, self.offset, float(self.degree))

    def to_dict(self):
        return {"name": self.name, "degree": self.degree, "scale": self.scale, "offset": self.offset}


class Linear(Kernel):
    """Linear kernel kappa(x, x') = <x, x'>."""

    name = "linear"

    def __call__(self, X, Y):
        return np.atleast_2d(X) @ np.atleast_2d(Y).T

    def diag(self, X):
        X = np.atleast_2d(X)
        return (X * X).sum(1)

    def spec(self):
        return (LINEAR_KIND, 0.0, 0.0, 0.0)

    def to_dict(self):
        return {"name": self.name}


KERNELS = {cls.name: cls for cls in (RBF, Laplacian, Polynomial, Linear)}


def kernel_from_dict(d: dict[str, Any]) -> Kernel:
    """Rebuild a kernel from :meth:`Kernel.to_dict` output (model files)."""
    d = dict(d)
    name = d.pop("name", None)
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; known: {sorted(KERNELS)}")
    return KERNELS[name](**d)


def as_kernel(kernel: Kernel | str | None, sigma: float | None = None) -> Kernel:
    """Accept a kernel object, a kernel name, or None (Gaussian with ``sigma``, default 1)."""
    if kernel is None:
        return RBF(sigma=1.0 if sigma is None else sigma)
    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str):
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}; known: {sorted(KERNELS)}")
        cls = KERNELS[kernel]
        return cls(sigma=sigma) if sigma is not None and cls in (RBF, Laplacian) else cls()
    if isinstance(kernel, dict):
        return kernel_from_dict(kernel)
    raise TypeError(f"kernel must be a Kernel, a name or None, got {type(kernel).__name__}")


#: rows a learner with ``kernel=None`` buffers before it fixes its width (:func:`scale_sigma`)
WIDTH_WINDOW = 50


def scale_sigma(X: np.ndarray) -> float:
    """The data-driven default width: sigma = sqrt(tr(Cov(X)) / 2) over the rows of ``X``.

    For independent x, x' from the stream E||x - x'||^2 = 2 tr(Cov), so this sigma is half the
    root-mean-square pairwise distance, and gamma = 1 / (2 sigma^2) = 1 / tr(Cov) is
    scikit-learn's ``gamma="scale"`` (SVC's default, 1 / (d Var(X))) with per-feature variances.
    It uses no labels, costs O(n d), is equivariant to a rescaling of the features (x -> c x gives
    sigma -> c sigma and the same kernel values), and on [0, 1]-scaled data lands between a half
    and two thirds of the median pairwise distance (docs/results/defaults.md measures it against
    width sweeps). On sparse binary rows with about s active features it gives about
    sqrt(s / 2), so the kernel still separates rows that differ in a few features.
    When every row is identical (tr = 0) it falls back to the root-mean-square norm / sqrt(2),
    and to 1.0 when that is 0 too.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    total = float(X.var(axis=0).sum()) if X.shape[0] > 1 else 0.0
    if not total > 0.0:
        total = float((X * X).sum(axis=1).mean()) if X.size else 0.0
    sigma = math.sqrt(total / 2.0) if total > 0.0 else 1.0
    return sigma if math.isfinite(sigma) and sigma > 0.0 else 1.0


def scale_sigma_l1(X: np.ndarray) -> float:
    """The data-driven width of a Laplacian (L1) kernel: sigma = E||x - x'||_1 / 2 over the rows of ``X``.

    The L1 analogue of :func:`scale_sigma`: that rule gives the Gaussian kernel exp(-2) at the
    root-mean-square pairwise distance (sigma^2 = E||x - x'||^2 / 4); this one gives the Laplacian
    kernel exp(-||x - x'||_1 / sigma) the same value exp(-2) at the mean pairwise L1 distance.
    E||x - x'||_1 = sum_j E|x_j - x'_j| over independent rows (all n^2 ordered pairs of the window,
    as ``X.var`` averages over n), each feature's mean absolute difference from its sorted values,
    sum_i x_(i) (2 i - n + 1) * 2 / n^2 (i = 0..n-1): O(n log n d), no labels, equivariant to a
    rescaling of the features. When every row is identical it falls back to the mean L1 norm / 2,
    and to 1.0 when that is 0 too.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    n = X.shape[0]
    total = 0.0
    if n > 1:
        S = np.sort(X, axis=0)
        ranks = 2.0 * np.arange(n) - n + 1.0
        total = float((ranks @ S).sum()) * 2.0 / (n * n)
    if not total > 0.0:
        total = float(np.abs(X).sum(axis=1).mean()) if X.size else 0.0
    sigma = total / 2.0 if total > 0.0 else 1.0
    return sigma if math.isfinite(sigma) and sigma > 0.0 else 1.0


def check_kernel(kernel) -> Kernel | None:
    """A learner's ``kernel`` hyperparameter: None (a Gaussian whose width the learner chooses
    from its first :data:`WIDTH_WINDOW` rows, :func:`scale_sigma`) or a kernel (object, name or
    dict, see :func:`as_kernel`)."""
    return None if kernel is None else as_kernel(kernel)


def median_sigma(X: np.ndarray, n: int = 1000) -> float:
    """Median heuristic: sigma = median pairwise distance among the first ``n`` rows."""
    X = np.asarray(X, dtype=float)[:n]
    d = np.sqrt(squared_distances(X, X)[np.triu_indices(len(X), 1)])
    d = d[d > 0]
    return float(np.median(d)) if d.size else 1.0


__all__ = ["Kernel", "RBF", "Laplacian", "Polynomial", "Linear", "as_kernel", "kernel_from_dict",
           "squared_distances", "median_sigma", "scale_sigma", "scale_sigma_l1", "check_kernel", "WIDTH_WINDOW"]
