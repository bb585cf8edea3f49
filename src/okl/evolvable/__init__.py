"""Learning on feature-evolvable streams: OPFES, the KOM discrepancy and the FESL baselines.

ALGORITHMS.md 7; OPFES = Xing, Qian, Chen, Gao & Zhou, ICML 2025 (``papers/opfes.txt``).

The evolvable learner protocol
------------------------------
A feature-evolvable stream (:mod:`okl.evolvable.stream`) shows the old features x1 in the
previous stage, both x1 and x2 in the evolving stage and only the new features x2 in the current
stage. An :class:`EvolvableLearner` follows the main learner protocol (``okl.runtime.base``) in
that spirit:

* ``__init__`` takes only keyword hyperparameters, validated with errors that name the allowed
  range, plus ``random_state``; every random draw comes from one ``numpy.random.Generator``
  (``self._rng``) made from it, drawn lazily in a fixed order (old-space draws at the first x1,
  new-space draws at the first x2);
* ``predict_one(x1=None, x2=None)`` returns the decision value for the round's features without
  changing the learned state; the features given say the stage: x1 only = previous, both =
  evolving, x2 only = current;
* ``learn_one(x1=None, x2=None, y=...)`` runs one test-then-train round; stages can only move
  forward (previous -> evolving -> current, any may be empty) and each space keeps the dimension
  it started with, otherwise ValueError (state unchanged);
* ``run(stream) -> EvolvableResult`` processes a whole :class:`EvolvableStream` through the same
  stage hooks as the per-instance loop (blocks of rows, matrix feature maps, compiled loops) and
  gives the same decisions.

Subclasses implement ``_start_old(dim)``, ``_start_new(dim)``, ``_previous(X1, y)``,
``_evolving(X1, X2, y)``, ``_begin_current()`` (the one-off transition, deterministic given the
state) and ``_current(X2, y)`` (each returning the decisions made before learning), plus the
``_decide_*`` single-row decision functions. Model files are not supported for these learners.

Mistakes: the prediction is +1 when f >= 0 else -1 (the package's rule, ``mistakes_of``); the
paper's I[y h <= 0] differs only when f is exactly 0. The headline metric is the cumulative error
rate over the current stage (CER, a fraction as in OPFES Table 2).
"""

from okl.evolvable.base import (EvolvableLearner, EvolvableResult, evolvable_class, evolvable_learners,
                                make_evolvable, register_evolvable)
from okl.evolvable.stream import EvolvableStream, make_evolvable_stream, stage_lengths
from okl.evolvable.kom import (kom_discrepancy, kom_discrepancy_factors, kom_objective,
                               kom_subgradient, mirror_descent, procrustes_rotation)
from okl.evolvable.opfes import OPFES
from okl.evolvable import baselines  # noqa: F401  (registers the baselines)
from okl.evolvable.ocds import OCDS

__all__ = ["EvolvableLearner", "EvolvableResult", "EvolvableStream", "make_evolvable_stream", "stage_lengths",
           "register_evolvable", "make_evolvable", "evolvable_learners", "evolvable_class", "OPFES", "OCDS",
           "kom_discrepancy", "kom_discrepancy_factors", "kom_objective", "kom_subgradient",
           "mirror_descent", "procrustes_rotation"]
