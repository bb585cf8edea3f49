"""What the scikit-learn and River adapters (:mod:`okl.sklearn`, :mod:`okl.river`) share: building
the core learner from the adapter's settings."""

from __future__ import annotations

from typing import Any

from okl.runtime.base import Learner, make, select_params


def build_core(adapter: Any, task: str, loss: str | None, **settings: Any) -> Learner:
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
