"""Hyperparameters declared once: name, type, range, default meaning, paper symbol and text.

Each learner lists its hyperparameters in ``Learner.hyperparameters`` (a tuple of :class:`Hyper`:
the shared ones below, or its own declared in its module) and validates them in ``__init__``
with :func:`accept`, so one declaration feeds

* validation (:meth:`Hyper.check`: the same messages as :mod:`okl._validation`, naming the
  parameter and its allowed range),
* the generic checks' bad values (:meth:`Hyper.invalid`, :func:`okl.checks.check_invalid_hyperparameters`:
  every declared hyperparameter of every learner, not a fixed list of common names),
* the command line's ranges (``okl run --budget`` checks :data:`BUDGET`'s, ``--param KEY=VALUE``
  goes through :func:`okl.runtime.registry.select_params`, which checks each value against the
  learner's declaration before any work),
* the documentation (:func:`describe`: one line per hyperparameter with its range, default and
  paper symbol; ``okl run --describe LEARNER``-style listings and tests that every declared name
  is documented in the class docstring).

Where a learner's parameter depends on another (NOGD's ``k`` <= ``budget``, KOGD's eta * decay < 1)
the learner checks the relation after :func:`accept`; the per-parameter range stays declared here.
Paper symbols are recorded (``symbol``), so a docstring or table can say which name is which
symbol (FORKS's ``d``: the SJLT's blocks, not the input dimension).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, replace
from typing import Any, Callable

from okl._validation import check_bool, check_choice, check_int, check_real
from okl.categories import check_categorical
from okl.kernels import check_kernel
from okl.losses import get_loss
from okl.scaling import check_scale


@dataclass(frozen=True)
class Hyper:
    """One hyperparameter. ``kind``: "real" (finite, in [low, high] with open ends as stated),
    "int" (in [low, high]), "bool", "choice" (one of ``choices``), "loss" / "kernel" / "scale"
    / "seed" (okl's own checks) or "any" (``custom`` checks it); ``optional``: None is accepted
    (and means ``none_means``).
    ``check``, when given, replaces the kind's check (a learner's own rule, same message style)."""

    name: str
    kind: str
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    optional: bool = False
    none_means: str = ""
    symbol: str | None = None
    custom: Callable[[Any], Any] | None = None
    #: the range also depends on other hyperparameters: the learner checks it after :func:`accept`
    #: (which leaves it alone), with a message naming the relation
    relation: bool = False
    #: a value :meth:`check` refuses, where the kind gives none (``custom`` checks)
    bad: Any = None

    def check(self, value):
        """The validated value, or ValueError naming the parameter and its allowed range."""
        if value is None and self.optional:
            return None
        if self.custom is not None:
            return self.custom(value)
        if self.kind == "real":
            return check_real(self.name, value, self.low, self.high, low_open=self.low_open,
                              high_open=self.high_open)
        if self.kind == "int":
            return check_int(self.name, value, self.low, self.high)
        if self.kind == "bool":
            return check_bool(self.name, value)
        if self.kind == "choice":
            return check_choice(self.name, value, self.choices)
        if self.kind == "loss":
            return get_loss(value).name
        if self.kind == "kernel":
            return check_kernel(value)
        if self.kind == "scale":
            return check_scale(value)
        if self.kind == "seed":  # (checked when the learner starts: a Generator is made from it)
            return value
        raise ValueError(f"{self.name}: unknown hyperparameter kind {self.kind!r}")

    def invalid(self):
        """A value :meth:`check` refuses (what the generic checks try), or None when every value
        of the type is accepted."""
        if self.bad is not None:
            return self.bad
        if self.kind in ("real", "int"):
            if self.low is not None:
                return (self.low - 1) if self.kind == "int" else (self.low if self.low_open else self.low - 1.0)
            if self.high is not None:
                return (self.high + 1) if self.kind == "int" else (self.high if self.high_open else self.high + 1.0)
            return math.nan if self.kind == "real" else 0.5
        return {"bool": "yes", "choice": "nope", "loss": "nope", "kernel": "nope", "scale": "nope"}.get(self.kind)

    def range_text(self) -> str:
        """The allowed values, as the error messages state them."""
        if self.kind in ("real", "int"):
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            opens = "(" if self.low_open or self.low is None else "["
            closes = ")" if self.high_open or self.high is None else "]"
            text = ("an integer in " if self.kind == "int" else "a real in ") + f"{opens}{lo}, {hi}{closes}"
        elif self.kind == "choice":
            text = "one of " + ", ".join(map(repr, self.choices))
        else:
            text = {"bool": "True or False", "loss": "a loss name or Loss", "kernel": "a kernel",
                    "scale": "'auto', 'symlog', 'range', 'affine'", "seed": "an integer >= 0",
                    "any": "see the learner's docstring"}[self.kind]
        if self.optional:
            text += f", or None ({self.none_means})" if self.none_means else ", or None"
        return text

    def but(self, **changes) -> "Hyper":
        """This declaration with some fields changed (a learner's own range or default meaning)."""
        return replace(self, **changes)


def accept(learner, values: dict) -> None:
    """Set each of the learner's declared hyperparameters from ``values`` (``locals()`` of its
    ``__init__``), checked in declaration order (``categorical``, which every learner's constructor
    takes through :func:`okl.runtime.categorical.takes_categorical`, is set there)."""
    for h in type(learner).hyperparameters:
        if not h.relation and h.name in values:
            setattr(learner, h.name, h.check(values[h.name]))


def describe(cls) -> list[str]:
    """One line per hyperparameter of a learner class: name, paper symbol, allowed values, text."""
    out = []
    for h in cls.hyperparameters:
        symbol = f" ({h.symbol})" if h.symbol else ""
        out.append(f"{h.name}{symbol}: {h.range_text()}. {h.doc}")
    return out


# ---- the shared declarations (each learner composes its list from these and its own) ----------

BUDGET = Hyper("budget", "int", "Stored rows, centres or feature budget B.", low=1, symbol="B")
ETA = Hyper("eta", "real", "Step size.", low=0.0, low_open=True, symbol="eta")
LR = Hyper("lr", "real", "AdaGrad's learning rate.", low=0.0, low_open=True)
C = Hyper("C", "real", "The bound on |w^T phi(x)| (ONS's projection) or the box constraint.", low=0.0,
          low_open=True, symbol="C")
HORIZON = Hyper("horizon", "int", "Rounds the stream is expected to run (sizes a step or a sketch).", low=1,
                optional=True, none_means="unknown", symbol="T")
LOSS = Hyper("loss", "loss", "The loss (its task: classification or regression).")
KERNEL = Hyper("kernel", "kernel", "The kernel.", optional=True,
               none_means="a Gaussian whose width is chosen from the first rows")
CENTER_TARGETS = Hyper("center_targets", "bool", "Regression: model the residual from the running target mean.")
SCALE = Hyper("scale", "scale", "The per-feature input map fixed in the first rows (okl.scaling).", optional=True,
              none_means="features as given")
RANDOM_STATE = Hyper("random_state", "seed", "Seed of the learner's random draws.", optional=True,
                     none_means="fresh entropy")
CATEGORICAL = Hyper("categorical", "any", "Columns holding category codes, each level an indicator column "
                    "(okl.categories).", optional=True, none_means="no categorical column", custom=check_categorical,
                    bad=[-1])

#: the tail every kernel stream learner ends with
KERNEL_LEARNER = (LOSS, KERNEL, CENTER_TARGETS, SCALE, RANDOM_STATE)

__all__ = ["BUDGET", "C", "CATEGORICAL", "CENTER_TARGETS", "ETA", "HORIZON", "Hyper", "KERNEL", "KERNEL_LEARNER",
           "LOSS", "LR", "RANDOM_STATE", "SCALE", "accept", "describe"]


def param_names(learner) -> list[str]:
    """The hyperparameters of a learner or learner class: the keyword parameters of its
    ``__init__``, in order (what ``get_params`` returns and model files save)."""
    cls = learner if isinstance(learner, type) else type(learner)
    sig = inspect.signature(cls.__init__)
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p, spec in sig.parameters.items() if p != "self" and spec.kind in kinds]
