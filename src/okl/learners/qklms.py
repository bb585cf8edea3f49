"""QKLMS: quantized kernel least mean squares (KLMS whose close inputs merge into a centre).

Chen, Zhao, Zhu & Principe, "Quantized kernel least mean square algorithm", IEEE TNNLS 23(1) 2012
(../shared/KAF.md K2; KAFBOX ``lib/qklms.m``). As KLMS (:mod:`okl.learners.klms`), with the
a-priori error e_t: let j* be the centre nearest to x_t; if ||x_t - d_j*|| <= eps_U, then
alpha_j* += eta e_t (the input is quantised to its nearest centre), else x_t joins the dictionary
with alpha_t = eta e_t. The dictionary grows only where the input space is new.

In okl's terms: the expansion map with the support step and its ``merge_above`` option
(:mod:`okl.components`): for a distance kernel the most similar centre is the nearest, and
||x - d|| <= eps_U is kappa(x, d) >= kappa at distance eps_U. ``quantization`` gives eps_U in
units of the kernel width sigma (scale-free: the width is chosen from the stream), so the
threshold is exp(-q^2 / 2) for the Gaussian and exp(-q) for the Laplacian kernel. Once ``budget``
centres are stored every input merges into its nearest centre (KLMS's budget rule).

Defaults: eta = 0.5 (KLMS's: a merged centre takes every step of its cell, so a step that is
safe for KLMS bounds QKLMS's; KAFBOX's 0.9 gave cadata an MSE of 0.073, above the running mean's
0.057, against 0.041 at 0.5: docs/results/klms.md) and q = 0.1 (KAFBOX's eps_U 0.1 at its kernel
width 1), 100 centres, a Gaussian kernel whose width is chosen from the stream's first rows.
Per-round cost O(B d) for the decision and O(B d) for the nearest centre; memory O(B d).
"""

from __future__ import annotations

import numpy as np

from okl._compiled import kernel_value
from okl.kernels import LAPLACIAN_KIND, RBF, RBF_KIND
from okl.learners.klms import KLMS
from okl.runtime.base import register
from okl.runtime.hyperparameters import BUDGET, ETA, KERNEL_LEARNER, Hyper, accept

QUANTIZATION = Hyper("quantization", "real", "The quantisation size eps_U in units of the kernel width sigma.",
                     low=0.0, symbol="eps_U / sigma")


@register("qklms")
class QKLMS(KLMS):
    """Quantized KLMS; see the module docstring.

    Parameters
    ----------
    eta : float, default 0.5
        The step eta: the coefficient a new or merged input adds is eta e_t.
    quantization : float, default 0.1
        eps_U / sigma: an input within this many kernel widths of its nearest centre merges into it
        (0: only exact repeats merge).
    budget : int, default 100
        Centres kept; once they are stored every input merges into its nearest centre.
    [[loss, kernel, center_targets, scale]]
    random_state : int or None
        Unused (QKLMS is deterministic); accepted for a uniform interface.

    >>> import numpy as np, okl
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 1))
    >>> m = okl.make("qklms", quantization=0.5, loss="squared")
    >>> _ = m.run(X, np.sin(3 * X[:, 0]))
    >>> m.diagnostics()["centres"] < 40   # a 1-D input: a few centres cover it
    True
    """

    hyperparameters = (ETA.but(doc="The step: a new or merged input adds eta e_t."), QUANTIZATION,
                       BUDGET.but(doc="Centres kept (then inputs merge into their nearest)."), *KERNEL_LEARNER)

    def __init__(self, *, eta: float = 0.5, quantization: float = 0.1, budget: int = 100, loss="hinge",
                 kernel=None, center_targets: bool = True, scale: str | None = "auto",
                 random_state: int | None = None):
        accept(self, locals())
        if self.kernel is not None and self.kernel.spec()[0] not in (RBF_KIND, LAPLACIAN_KIND):
            raise ValueError(f"qklms: kernel must be a distance kernel (RBF or Laplacian), got {self.kernel!r}")
        # the merge test compares with the kernel value at eps_U: it must not underflow to 0 (the
        # plan holds a value in (0, 1]); scale-free, so the unit width decides for a width not given
        kernel = self.kernel if self.kernel is not None else RBF(sigma=1.0)
        if not self._merge_value(kernel) > 0.0:
            laplacian = kernel.spec()[0] == LAPLACIAN_KIND
            raise ValueError(f"qklms: quantization={self.quantization!r} is too large: the kernel value at that many "
                             f"kernel widths underflows to 0, so the merge test cannot hold it; pass quantization at "
                             f"most {745.0 if laplacian else 38.5} (a value that large already merges nearly every "
                             f"input into one centre)")

    def _merge_value(self, kernel) -> float:
        """kappa at distance eps_U = quantization x sigma of ``kernel`` (along one axis: the same for
        both kernels)."""
        return float(kernel_value(*kernel.spec(), np.zeros(1), np.array([self.quantization * kernel.sigma])))

    def _merge_above(self) -> float:
        """kappa at distance eps_U = quantization x sigma (along one axis: the same for both kernels)."""
        return self._merge_value(self.kernel_)


__all__ = ["QKLMS", "QUANTIZATION"]
