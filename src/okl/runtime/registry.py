"""The one learner registry: :func:`register`, :func:`make`, :func:`learners` and friends."""

from __future__ import annotations

from typing import Any

from okl.kernels import RBF
from okl.runtime import plugins
from okl.runtime.hyperparameters import param_names


# --------------------------------------------------------------------------------------------
# Registry

#: The one learner registry, by kind: ``"streaming"``, the learners of the protocol above
#: (:class:`Learner` subclasses: ``okl run``, ``sweep``, ``stream``, the adapters; model files
#: name them) and ``"evolvable"``, the learners on feature-evolvable streams
#: (:class:`okl.evolvable.EvolvableLearner`, ``okl evolve``), registered when okl is imported.
#: A name is registered once over all kinds.
KINDS = ("streaming", "evolvable")
_BY_KIND: dict[str, dict[str, tuple[type, dict[str, Any]]]] = {kind: {} for kind in KINDS}
#: the streaming learners (the names a model file may hold)
_REGISTRY: dict[str, tuple[type[Learner], dict[str, Any]]] = _BY_KIND["streaming"]


def _kind_of(name: str) -> str | None:
    return next((kind for kind, table in _BY_KIND.items() if name in table), None)


def _names() -> set[str]:
    return {name for table in _BY_KIND.values() for name in table}


def _find(name: str) -> str | None:
    """The kind of ``name``, importing the plugins (:mod:`okl.runtime.plugins`) on a miss."""
    kind = _kind_of(name)
    if kind is None and plugins.load_plugins(_names):
        kind = _kind_of(name)
    return kind


def import_plugin(module: str) -> list[str]:
    """Import ``module`` for its learners now (``okl ... --import MODULE``; worker processes
    started afterwards import it too): the names it registered. ValueError naming the module
    when it fails."""
    return plugins.import_module(module, _names)


def learner_source(name: str) -> str:
    """Where registered learner ``name`` came from: ``okl``, a plugin package (its name, version
    and entry point) or a module (``okl learners`` lists it)."""
    return plugins.learner_source(name, _BY_KIND[learner_kind(name)][name][0])


def _check_kind(kind: str | None) -> None:
    if kind is not None and kind not in _BY_KIND:
        raise ValueError(f"unknown kind of learner {kind!r}; kinds: {', '.join(KINDS)}")


def register(name: str, *, kind: str = "streaming", replace: bool = False, **fixed: Any):
    """Class decorator: make the learner available as ``okl.make(name)`` and on the command line.

    ``kind`` is the protocol the class follows (:data:`KINDS`); ``fixed`` are hyperparameters
    that define this registered variant (e.g. a budget cap). ``name`` must be a non-empty lower-case
    string without a comma or white space (``--learners a,b`` splits on commas); ``replace=True``
    replaces a learner registered under that name before (a notebook cell or a reloaded module
    running its ``@okl.register`` again), never one of okl's own. Everything is checked (the name,
    then that ``cls`` is a class with the protocol's ``learn_one``, ``predict_one`` and ``run``)
    before the registry changes, so a refused registration leaves it as it was.
    """
    _check_kind(kind)
    if not isinstance(name, str) or not name or name != name.strip() or any(c in name for c in ", \t\n") \
            or name != name.lower():
        raise ValueError(f"okl.register: a learner name must be a non-empty lower-case string without commas or "
                         f"spaces (it is typed in --learners a,b), got {name!r}")

    def deco(cls: type) -> type:
        missing = [m for m in ("learn_one", "predict_one", "run") if not callable(getattr(cls, m, None))]
        if not isinstance(cls, type) or missing:
            raise ValueError(f"okl.register({name!r}): {getattr(cls, '__name__', repr(cls))} is not a learner class "
                             f"(it has no {', '.join(missing) or 'class'}); subclass okl.Learner")
        known = _kind_of(name)
        if known is not None:
            old = _BY_KIND[known][name][0]
            if not replace:
                raise ValueError(f"learner name {name!r} is already registered (by {old.__qualname__}); pass "
                                 f"replace=True to replace it")
            if old.__module__.split(".")[0] == "okl" and cls.__module__.split(".")[0] != "okl":
                raise ValueError(f"learner name {name!r} is one of okl's own learners; register yours under "
                                 f"another name")
            del _BY_KIND[known][name]
        _BY_KIND[kind][name] = (cls, dict(fixed))
        if not fixed and not cls.name:
            cls.name = name
        return cls

    return deco


def make(name: str, **params: Any) -> Learner:
    """Build a registered learner by its CLI name, e.g. ``okl.make("nogd", budget=100)`` (any
    kind: ``okl.make("opfes")`` builds a feature-evolvable learner)."""
    kind = _find(name)
    if kind is None:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(sorted(_REGISTRY))}"
                         + "".join(f"; {k}: {', '.join(sorted(_BY_KIND[k]))}" for k in KINDS[1:] if _BY_KIND[k])
                         + _failed_note())
    cls, fixed = _BY_KIND[kind][name]
    learner = cls(**{**fixed, **params})
    learner.name = name
    return learner


def select_params(name: str, params: dict[str, Any] | None = None, **common: Any) -> dict[str, Any]:
    """The one place where ``okl run``, ``sweep``, the paper tables (through
    :func:`okl.eval.progressive.learner_params`) and the scikit-learn and River adapters build
    learner ``name``'s hyperparameters (``okl stream`` passes the same settings; the
    feature-evolvable learners of ``okl evolve`` take theirs from :mod:`okl.evolvable.harness`).

    ``common`` holds the path's shared settings (budget, kernel, sigma, loss, horizon,
    random_state, ...): each that is not None and that the learner takes is passed, so a setting
    left out means the learner's own default. ``sigma`` (a number) becomes ``kernel=RBF(sigma)``;
    ``sigma=None`` or ``"auto"`` passes no kernel, and the learner chooses its width from the
    stream (:func:`okl.kernels.scale_sigma`). ``params`` override, and each must be a
    hyperparameter of the learner (ValueError otherwise).

    For example ``select_params("nogd", {"eta": 0.5}, sigma=2.0, budget=None, random_state=0)``
    gives ``{"kernel": RBF(sigma=2.0), "random_state": 0, "eta": 0.5}`` and
    ``select_params("linear", sigma=2.0, loss="squared")`` gives ``{"loss": "squared"}``
    (tests/test_defaults.py).
    """
    common = dict(common)
    sigma = common.pop("sigma", None)
    if sigma is not None and sigma != "auto" and common.get("kernel") is None:
        common["kernel"] = RBF(sigma=float(sigma))
    out = {key: value for key, value in common.items() if value is not None and accepts(name, key)}
    declared = {h.name: h for h in getattr(learner_class(name, kind=None), "hyperparameters", ()) if not h.relation}
    for key, value in (params or {}).items():
        if not accepts(name, key):
            raise ValueError(f"learner {name!r} has no hyperparameter {key!r}")
        if key in declared:  # (its declared range, before any data is read)
            declared[key].check(value)
        out[key] = value
    return out


def learners(kind: str | None = None) -> list[str]:
    """Names of the registered learners: all of them, or those of one kind (:data:`KINDS`), e.g.
    ``okl.learners(kind="evolvable")`` for the feature-evolvable ones."""
    _check_kind(kind)
    plugins.load_plugins(_names)
    return sorted(name for k, table in _BY_KIND.items() if kind in (None, k) for name in table)


def learner_kind(name: str) -> str:
    """The kind (:data:`KINDS`) of registered learner ``name``."""
    kind = _find(name)
    if kind is None:
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(learners())}{_failed_note()}")
    return kind


def learner_class(name: str, kind: str | None = "streaming") -> type:
    """The class of registered learner ``name`` of ``kind`` (by default a streaming learner, the
    kind every path but ``okl evolve`` takes; ``kind=None``: any kind). ValueError otherwise."""
    _check_kind(kind)
    found = _find(name)
    if found is None or (kind is not None and found != kind):
        if found is not None:
            raise ValueError(f"learner {name!r} is of kind {found!r}, not {kind!r}; registered {kind} learners: "
                             f"{', '.join(learners(kind))}")
        raise ValueError(f"unknown learner {name!r}; registered: {', '.join(learners(kind))}{_failed_note()}")
    return _BY_KIND[found][name][0]


def _failed_note() -> str:
    failed = plugins.plugin_failures()
    return f" ({len(failed)} plugin(s) failed to load: {'; '.join(failed)})" if failed else ""


def lookup(name: str) -> type | None:
    """The class of streaming learner ``name``, or None (model files: plugins imported on a miss)."""
    return _REGISTRY[name][0] if _find(name) == "streaming" else None


def accepts(name: str, param: str) -> bool:
    """Whether the registered learner takes hyperparameter ``param``."""
    return param in param_names(learner_class(name))
