"""The K-output learner of :class:`okl.runtime.multiclass.MultiClass` (its ``core_``): which
learners learn K classes as K outputs of one model in auto's engine, the ``auto`` pool built for
a learner, the pool continuing a binary learner, and the learner's hyperparameters read back from
a pool (model files)."""

from __future__ import annotations

import numpy as np

from okl.components import K_OUTPUTS, runs_everywhere
from okl.runtime.base import Learner, learner_class, make
from okl.runtime.hyperparameters import param_names


def _engine_member(name: str, params: dict) -> bool:
    """Whether learner ``name`` with ``params`` runs in auto's engine with K outputs (its
    class's :meth:`~okl.runtime.events.EventPath.runs_in_engine`, and each component it declares
    on the K-output path)."""
    try:
        cls = learner_class(name)
    except ValueError:
        return False
    return cls.runs_in_engine(params) and runs_everywhere(cls.composition, K_OUTPUTS)


def _has_k_outputs(learner: Learner) -> bool:
    """Whether ``learner`` learns K classes as K outputs of one model: ``auto`` whose members all
    run in its engine (:mod:`okl.engine.core`), or one of those members alone."""
    if getattr(learner, "name", "") == "auto":
        return all(_engine_member(name, params) for name, _, params in learner.member_specs())
    return _engine_member(getattr(learner, "name", ""), learner.get_params())


#: the hyperparameters auto takes itself and passes on to a member (the rest are the member's own)
_AUTO_OWN = ("budget", "loss", "kernel", "horizon", "scale")


def _k_output_core(learner: Learner, random_state) -> Learner:
    """The K-output learner of :class:`MultiClass`: ``auto`` itself, or a single learner as the
    one member of an ``auto`` pool (the engine holds the K outputs; the pool gives the member's own
    outputs, not the mixture's clipped ones). Its
    hyperparameters are the learner's: the pool's width is chosen by the same rule from the same
    rows, the input scaled by the same rule, the member keeps its budget, loss and steps."""
    params = {k: v for k, v in learner.get_params().items() if k != "random_state"}
    if learner.name == "auto":
        return make("auto", **params, random_state=random_state)
    own = {k: params.pop(k) for k in _AUTO_OWN if k in params}
    params.pop("center_targets", None)
    width = learner._width_factor if "kernel" in param_names(learner) else None
    if width is None:
        own.pop("kernel", None)
    if "budget" in own:
        params["budget"] = own["budget"]
    core = make("auto", **own, members=[[learner.name, width, params]], random_state=random_state)
    core._raw_member = True  # the member's own outputs (unclipped), as the learner alone gives them
    return core


def _core_from_binary(learner: Learner, signs: list[float], random_state) -> Learner | None:
    """The K-output learner continuing a binary single learner (``signs``: its outputs' signs, see
    :meth:`okl.runtime.heads.Heads.set_outputs`): the learner becomes the one member of a pool that takes over its
    input scale and kernel, nothing learned lost; still inside its window, a fresh pool holding its
    buffered rows. None when it cannot (no kernel: the linear learner keeps heads)."""
    core = _k_output_core(learner, random_state)
    if learner.dim_ is None:
        return None
    if not learner.started_:
        core.inputs.ensure_started(core, learner.dim_)
        n = learner.n_seen_
        core.warmup_X_[:n], core.warmup_y_[:n], core.n_seen_ = learner.warmup_X_[:n], learner.warmup_y_[:n], n
        core.heads.set_outputs(core, signs)
        return core
    if getattr(learner, "kernel_", None) is None:
        return None
    core.inputs.ensure_started(core, learner.dim_)  # (its generator and base state; the window is replaced below)
    core.started_, core.warmup_X_, core.warmup_y_ = True, None, None
    core.kernel_, core.n_seen_ = learner.kernel_, learner.n_seen_
    core.scale_center_, core.scale_spread_ = learner.scale_center_, learner.scale_spread_
    core._pool, core.member_index_ = [learner], [0]
    core.L_, core.alive_, core.agg_ = np.zeros(1), np.ones(1), np.array([0.0, 0.0, np.inf, -np.inf])
    core.members_blob_ = core.member_sizes_ = None
    # the member as auto builds it: the input scaled once, by the pool
    learner.scale, learner.scale_center_, learner.scale_spread_ = None, None, None
    core.heads.set_outputs(core, signs)
    return core


def _learner_params(core: Learner, name: str) -> dict:
    """The hyperparameters of learner ``name`` that made the K-output ``core`` (its inverse)."""
    params = {k: v for k, v in core.get_params().items() if k != "random_state"}
    if name == "auto":
        return params
    (member, _, own), = core.member_specs()
    if member != name:
        raise ValueError(f"the core's member is {member!r}, not {name!r}")
    accepted = param_names(learner_class(name))
    return {**{k: params[k] for k in _AUTO_OWN if k in accepted}, **own}
