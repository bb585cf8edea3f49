"""What the scikit-learn and River adapters (:mod:`okl.sklearn`, :mod:`okl.river`) share: the
settings both take (:class:`AdapterSettings`), building the core learner from them
(:func:`build_core`) and its K-class form (:func:`multiclass_core`)."""

from __future__ import annotations

from typing import Any

from okl.runtime.base import Learner, make, select_params
from okl.runtime.multiclass import MultiClass


class AdapterSettings:
    """The settings both adapters take, kept as given: ``learner``, ``budget``, ``sigma``,
    ``loss``, ``params`` (what :func:`build_core` reads) and ``categorical``. Both frameworks'
    rule: the constructor stores its arguments unchanged, ``get_params`` / ``clone`` read them
    back (scikit-learn's own estimators share a base constructor the same way); each adapter's
    constructor stores its own others (the seed, River's widths)."""

    def __init__(self, learner: str, budget: int | None, sigma: float | None, loss: str | None,
                 params: dict[str, Any] | None, categorical):
        self.learner = learner
        self.budget = budget
        self.sigma = sigma
        self.loss = loss
        self.params = params
        self.categorical = categorical


def build_core(adapter: AdapterSettings, task: str, loss: str | None, **settings: Any) -> Learner:
    """The core learner of ``adapter`` (its ``learner``, ``params`` (and the scikit-learn adapters'
    flat hyperparameters), ``budget`` and ``sigma``, plus
    ``loss`` and the path's other ``settings``) through :func:`okl.runtime.base.select_params`;
    ValueError when its task is not ``task``."""
    name = adapter.learner
    params = adapter._learner_params() if hasattr(adapter, "_learner_params") else dict(adapter.params or {})
    kw = select_params(name, params, budget=adapter.budget, sigma=adapter.sigma,
                       loss=loss, **settings)
    core = make(name, **kw)
    if core.task != task:
        raise ValueError(f"{type(adapter).__name__} needs a {task} loss; learner {name!r} has "
                         f"loss {getattr(core, 'loss', None)!r} ({core.task})")
    return core


def multiclass_core(core: Learner, random_state: int | None, classes: list | None = None) -> MultiClass:
    """The K-class form of the binary core learner ``core``: a :class:`MultiClass` of its learner
    and hyperparameters (not its seed: ``random_state`` is the K-class learner's), its classes
    ``classes`` (fixed) or, when None, taken as they come."""
    params = {k: v for k, v in core.get_params().items() if k != "random_state"}
    return MultiClass(core.name, params, classes=classes, random_state=random_state)
