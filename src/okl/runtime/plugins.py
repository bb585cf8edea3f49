"""Learners from other packages (plugins): the entry-point group ``okl.learners``, ``$OKL_PLUGINS``
and ``okl ... --import MODULE``.

A package ships learners to okl by declaring an entry point in the group ``okl.learners`` whose
value is a module that registers them when imported (``okl.register``)::

    [project.entry-points."okl.learners"]
    klms-decay = "my_package.learners"

A module on the path that is not installed as a package is named in ``OKL_PLUGINS`` (module
names separated by commas or the path separator) or given to a command as ``--import MODULE``
(which adds it to ``OKL_PLUGINS``, so worker processes started afterwards, forked or spawned, a
Dask LocalCluster's too, import it as well).

When: the registry calls :func:`load_plugins` the first time a name is not found and when it
lists its names (``okl.learners()``), never at ``import okl``; so every path that builds a
learner by name (``okl run``, ``sweep`` and its workers, ``stream``, the adapters, model files)
sees the plugins' learners without doing anything. Each plugin is imported once per process;
one that fails to import is named in one line on stderr (and in :func:`plugin_failures`) and
does not stop the others. Cost: one scan of the installed packages' entry points per process
(milliseconds), then a dictionary look-up.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Callable

#: the entry-point group a package declares its learners' module in
GROUP = "okl.learners"
#: the environment variable naming modules to import (comma- or os.pathsep-separated)
ENV = "OKL_PLUGINS"

_imported: set[str] = set()      # modules of OKL_PLUGINS / --import already tried
_sources: dict[str, str] = {}    # learner name -> where it came from
_failures: list[str] = []        # one line per plugin that failed to import
_state = {"entry_points": False, "busy": False}


def env_modules() -> list[str]:
    """The module names in ``$OKL_PLUGINS``."""
    return [m for m in re.split(rf"[,{re.escape(os.pathsep)}\s]+", os.environ.get(ENV, "")) if m]


def add_env_module(module: str) -> None:
    """Append ``module`` to ``$OKL_PLUGINS`` of this process (inherited by its workers)."""
    names = env_modules()
    if module not in names:
        os.environ[ENV] = ",".join([*names, module])


def load_plugins(names: Callable[[], set[str]]) -> bool:
    """Import the plugins not imported yet: every entry point of :data:`GROUP` (once per process)
    and every module of ``$OKL_PLUGINS``. ``names()`` gives the registered names (to tell which
    learners each plugin brought). True when a plugin registered something new. A plugin failing
    to import (any exception) is one line on stderr and in :func:`plugin_failures`."""
    if _state["busy"]:  # a plugin importing okl's registry while it loads
        return False
    _state["busy"] = True
    try:
        before = names()
        if not _state["entry_points"]:
            _state["entry_points"] = True
            for ep in _entry_points():
                dist = getattr(ep, "dist", None)
                package = f"{dist.name} {dist.version}" if dist is not None else "an installed package"
                _load(ep.load, f"{package} (entry point {ep.name} = {ep.value})", names)
        for module in env_modules():
            if module not in _imported:
                _imported.add(module)
                _load(lambda m=module: importlib.import_module(m), f"module {module} (${ENV})", names)
        return names() != before
    finally:
        _state["busy"] = False


def import_module(module: str, names: Callable[[], set[str]]) -> list[str]:
    """``--import MODULE``: import it now (errors propagate: the user named it) and add it to
    ``$OKL_PLUGINS`` for worker processes; the current directory is put on ``sys.path`` (as
    ``python -m`` does). Returns the learner names it registered."""
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*", module):
        raise ValueError(f"--import {module!r}: not a module name (e.g. my_package.learners)")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    before = names()
    try:
        importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001  (any failure of the user's module: one line)
        raise ValueError(f"--import {module}: {type(exc).__name__}: {_one_line(exc)}") from None
    _imported.add(module)
    add_env_module(module)
    new = sorted(names() - before)
    for name in new:
        _sources[name] = f"module {module} (--import)"
    return new


def learner_source(name: str, cls: type) -> str:
    """Where registered learner ``name`` (class ``cls``) came from: ``okl``, a plugin package
    with its version and entry point, a module of ``$OKL_PLUGINS`` / ``--import``, or the module
    that registered it."""
    if name in _sources:
        return _sources[name]
    module = getattr(cls, "__module__", "") or ""
    if module == "okl" or module.startswith("okl."):
        return "okl"
    top = module.split(".")[0]
    try:
        import importlib.metadata as md  # (here: okl's import does not pay for it)

        dists = md.packages_distributions().get(top, [])
    except Exception:  # noqa: BLE001  (broken metadata of another package: name the module)
        dists = []
    return f"{dists[0]} (module {module})" if dists else f"module {module}"


def plugin_failures() -> list[str]:
    """One line per plugin that failed to import in this process."""
    return list(_failures)


def _entry_points():
    import importlib.metadata as md  # (here: okl's import does not pay for it)

    try:
        return list(md.entry_points(group=GROUP))
    except Exception as exc:  # noqa: BLE001  (a broken installed distribution)
        _fail(f"okl: could not read the entry points of group {GROUP}: {_one_line(exc)}")
        return []


def _load(load: Callable[[], object], source: str, names: Callable[[], set[str]]) -> None:
    before = names()
    try:
        load()
    except Exception as exc:  # noqa: BLE001  (a plugin's own failure must not stop the others)
        _fail(f"okl: plugin {source} not loaded: {type(exc).__name__}: {_one_line(exc)}")
        return
    for name in names() - before:
        _sources[name] = source


def _fail(line: str) -> None:
    _failures.append(line)
    print(line, file=sys.stderr)


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "..."
