"""Budgeted kernel-expansion baselines: RBP, Forgetron, Projectron, Projectron++, BPA-S, BOGD.

Each learner lives in its own module (``rbp``, ``forgetron``, ``projectron``, ``bpas``, ``bogd``) over
the shared expansion of :mod:`okl.learners._expansion` (whose docstring has the table of rules and
the notes on speed and randomness); this module re-exports them."""

from okl.learners._expansion import (DONE, NEED_RANDOM, PROJECTRON_MIN_RESIDUAL, RANDOM_BLOCK,  # noqa: F401
                                     _BudgetedExpansion, _RandomRemovals, column_kernel_row, expansion_value)
from okl.learners.rbp import RBP, rbp_rounds  # noqa: F401
from okl.learners.forgetron import Forgetron, forgetron_rounds, forgetron_shrink  # noqa: F401
from okl.learners.projectron import Projectron, ProjectronPlusPlus, projectron_rounds  # noqa: F401
from okl.learners.bpas import BPAS, bpas_rounds  # noqa: F401
from okl.learners.bogd import BOGD, BOGD_DECAY_RULES, bogd_rounds  # noqa: F401

__all__ = ["RBP", "Forgetron", "Projectron", "ProjectronPlusPlus", "BPAS", "BOGD",
           "forgetron_shrink", "RANDOM_BLOCK", "PROJECTRON_MIN_RESIDUAL", "BOGD_DECAY_RULES"]
