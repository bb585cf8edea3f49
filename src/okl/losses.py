"""Loss functions on the decision value z = f(x) (ALGORITHMS.md section 0).

Each loss gives its value l(z, y), its derivative l'(z, y) = dl/dz, the curvature constant that
second-order methods plug in on |z| <= C (PROS-N-KONS Asm. 2), its task, and a numeric kind code
for the compiled loops (:func:`okl._compiled.loss_derivative`).

| loss          | l(z, y)          | l'(z, y)              | task           |
|---------------|------------------|-----------------------|----------------|
| hinge         | max(0, 1 - yz)   | -y if yz < 1 else 0   | classification |
| squared_hinge | max(0, 1 - yz)^2 | -2y max(0, 1 - yz)    | classification |
| logistic      | log(1 + e^-yz)   | -y / (1 + e^yz)       | classification |
| squared       | (z - y)^2        | 2 (z - y)             | regression     |

>>> get_loss("hinge").derivative(0.5, 1.0)
-1.0
>>> get_loss("squared").value(0.5, 1.0)
0.25
"""

from __future__ import annotations

import math

import numpy as np

HINGE, SQUARED_HINGE, SQUARED, LOGISTIC = 0, 1, 2, 3


class Loss:
    name = "loss"
    kind = -1
    task = "classification"

    def value(self, z: float, y: float) -> float:
        raise NotImplementedError

    def derivative(self, z: float, y: float) -> float:
        raise NotImplementedError

    def curvature(self, C: float = 1.0) -> float:
        """Constant sigma of PNK Asm. 2 on |z| <= C (0 where the loss has none)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loss) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class Hinge(Loss):
    name, kind, task = "hinge", HINGE, "classification"

    def value(self, z, y):
        return max(0.0, 1.0 - y * z)

    def derivative(self, z, y):
        return -y if y * z < 1.0 else 0.0

    def curvature(self, C=1.0):
        return 0.0


class SquaredHinge(Loss):
    """Exp-concave on |z| <= C with beta = 1 / (2 (1 + C)^2) (ALGORITHMS.md 0)."""

    name, kind, task = "squared_hinge", SQUARED_HINGE, "classification"

    def value(self, z, y):
        return max(0.0, 1.0 - y * z) ** 2

    def derivative(self, z, y):
        return -2.0 * y * max(0.0, 1.0 - y * z)

    def curvature(self, C=1.0):
        # sigma = 0.5 min(1/(4 G D), beta), gradient bound G = 2(1+C), diameter D = 2C.
        beta = 1.0 / (2.0 * (1.0 + C) ** 2)
        return 0.5 * min(1.0 / (4.0 * 2.0 * (1.0 + C) * 2.0 * C), beta)


class Logistic(Loss):
    """Exp-concave on |z| <= C with beta = e^-C (ALGORITHMS.md 0)."""

    name, kind, task = "logistic", LOGISTIC, "classification"

    def value(self, z, y):
        m = -y * z
        return m + math.log1p(math.exp(-m)) if m > 0 else math.log1p(math.exp(m))

    def derivative(self, z, y):
        m = y * z
        if m > 0.0:  # -y e^-m / (1 + e^-m): no overflow for large margins
            e = math.exp(-m)
            return -y * e / (1.0 + e)
        return -y / (1.0 + math.exp(m))

    def curvature(self, C=1.0):
        return 0.5 * min(1.0 / (4.0 * 1.0 * 2.0 * C), math.exp(-C))


class Squared(Loss):
    """sigma = 1 / (8 C^2), Lipschitz 4C on |z| <= C (PROS-N-KONS Thm 2)."""

    name, kind, task = "squared", SQUARED, "regression"

    def value(self, z, y):
        return (z - y) ** 2

    def derivative(self, z, y):
        return 2.0 * (z - y)

    def curvature(self, C=1.0):
        return 1.0 / (8.0 * C * C)


LOSSES = {cls.name: cls for cls in (Hinge, SquaredHinge, Logistic, Squared)}


def get_loss(loss: Loss | str) -> Loss:
    """Accept a loss object or one of the names ``hinge``, ``squared_hinge``, ``squared``, ``logistic``."""
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str):
        key = loss.replace("-", "_")
        if key in LOSSES:
            return LOSSES[key]()
    raise ValueError(f"loss must be one of {sorted(LOSSES)} or a Loss object, got {loss!r}")


def loss_values(loss: Loss, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Vectorised l(z, y) for arrays."""
    z = np.asarray(z, float)
    y = np.asarray(y, float)
    if loss.kind == HINGE:
        return np.maximum(0.0, 1.0 - y * z)
    if loss.kind == SQUARED_HINGE:
        return np.maximum(0.0, 1.0 - y * z) ** 2
    if loss.kind == LOGISTIC:
        return np.logaddexp(0.0, -y * z)
    return (z - y) ** 2
