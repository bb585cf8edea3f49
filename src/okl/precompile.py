"""Compile okl's code for this machine ahead of its first use (``okl compile``, ``okl.compile()``,
and the build: ``build_support/okl_backend.py`` runs it when okl is installed).

Numba compiles a function for the argument types of its first call, so the code a process needs
is found by running it: :func:`default_units` are short workloads that take every path a user's first
minute takes (each stream learner's ``run()`` and per-event calls on german and on a regression
stream, K classes, auto's engine with one and K outputs, River's and scikit-learn's adapters, the
feature-evolvable learners), each filling :mod:`okl._cache` with what it compiled. The units run
in ``processes`` worker processes at once (longest first: auto's engine; the units that run that
engine again last, so they load it); a unit whose code is already cached only loads it.

:func:`compile` ends by writing a manifest beside the entries: the package's fingerprint and the
functions that hold an entry for this CPU (each module's dispatchers, less those inlined into their
callers). :func:`check` reads it and says whether every one of them is still cached, and where.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from dataclasses import dataclass, field

#: the longest workloads, first: auto's engine (about 20 s of a cold compile on the 2-core AMD EPYC),
#: and beside it, in the pool's other process, the sketched and KONS learners, which share none of it;
#: every other registered stream learner follows (:func:`default_units`)
FIRST_UNITS = ("auto", "forks", "skegd", "pros-n-kons", "con-kons", "b-kons")
#: the workloads that run auto's engine again (its K outputs, River's default model): after the
#: learners, so they load the engine auto compiled instead of compiling it at the same time in the
#: other process. Measured with an empty cache (okl compile, 32 workloads): 45.6-55.2 s with them
#: second and third (auto-k, auto and river each compiling the engine), 37.3 s here
AFTER_AUTO = ("auto-k", "river")
#: the workloads after the learners
LAST_UNITS = (*AFTER_AUTO, "sklearn", "evolvable")
#: rows of the per-event part of a learner's unit (past auto's width window and a small budget's overflow)
EVENTS = 300


def _regression(rows: int = 600, dim: int = 8):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, dim))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=rows)


def _learner(name: str) -> None:
    """A stream learner's first-minute paths: run() and per-event calls on german (two classes),
    the same on a regression stream where it takes a squared loss, and K = 3 classes."""
    from okl.data import load_dataset
    from okl.learners import make

    X, y = load_dataset("german")
    make(name, random_state=0).run(X, y)
    m = make(name, random_state=0)
    for t in range(EVENTS):
        m.predict_one(X[t])
        m.learn_one(X[t], y[t])
    try:
        reg = make(name, random_state=0, loss="squared")
    except (TypeError, ValueError):  # a classification-only learner
        reg = None
    if reg is not None:
        Xr, yr = _regression()
        reg.run(Xr, yr)
        m = make(name, random_state=0, loss="squared")
        for t in range(EVENTS):
            m.predict_one(Xr[t])
            m.learn_one(Xr[t], float(yr[t]))
        if hasattr(m, "predict_interval_one"):  # a predictive variance (krls-t)
            m.predict_interval_one(Xr[0])
    if name != "auto":  # (auto's K classes: the "auto-k" unit, in another process at the same time)
        _three_classes(name, X, run=False)
    _sparse_rows(name, X, y)
    _categorical(name, X, y)


def _categorical(name: str, X, y) -> None:
    """The learner with a categorical column (german's second, in five codes): its window widens
    as levels appear and its map runs on every entry point, so run() and per-event calls on it
    are part of a first minute too."""
    import numpy as np

    from okl.learners import make

    Xc = X[:EVENTS].copy()
    Xc[:, 1] = np.digitize(Xc[:, 1], np.quantile(Xc[:, 1], [0.2, 0.4, 0.6, 0.8]))
    make(name, random_state=0, categorical=[1]).run(Xc, y[:EVENTS])
    m = make(name, random_state=0, categorical=[1])
    for t in range(80):  # (past the width window)
        m.predict_one(Xc[t])
        m.learn_one(Xc[t], y[t])


def _sparse_rows(name: str, X, y) -> None:
    """A learner that takes CSR rows itself (``accepts_csr``): run() and per-event calls on german as
    a SciPy CSR matrix, and with generated directions where it has them (FOGD's ``directions``)."""
    import scipy.sparse as sp

    from okl.learners import make
    from okl.runtime.registry import accepts, learner_class

    if not learner_class(name).accepts_csr:
        return
    S = sp.csr_matrix(X)
    for params in ({}, {"directions": "generated"}) if accepts(name, "directions") else ({},):
        make(name, random_state=0, **params).run(S, y)
        m = make(name, random_state=0, **params)
        for t in range(80):  # (past the width window)
            m.predict_one(S[t])
            m.learn_one(S[t], y[t])


def _three_classes(name: str, X, run: bool) -> None:
    """K = 3 classes (german's second column in terciles): per event, and run() when ``run``."""
    import numpy as np

    from okl.runtime.multiclass import MultiClass

    k = np.digitize(X[:, 1], np.quantile(X[:, 1], [1 / 3, 2 / 3])).astype(float)
    try:
        multi = MultiClass(name, random_state=0)
    except ValueError:  # (a regression-only learner)
        return
    if run:
        MultiClass(name, random_state=0).run(X, k)
    for t in range(EVENTS):
        multi.predict_one(X[t])
        multi.learn_one(X[t], int(k[t]))


def _auto_k() -> None:
    """auto with K = 3 outputs: its K-output engine (run() and per event)."""
    from okl.data import load_dataset

    _three_classes("auto", load_dataset("german")[0], run=True)


def _river() -> None:
    """River's adapters at their defaults: two classes, three, a regression stream (the events of
    a River user's first minute)."""
    import numpy as np

    try:
        import river  # noqa: F401
    except ImportError:  # (the build environment: River's base classes only, for okl's adapter code)
        _river_bases()
    from okl.river import OKLRiverClassifier, OKLRiverRegressor

    rng = np.random.default_rng(0)
    for classes in ((False, True), ("a", "b", "c")):
        m = OKLRiverClassifier()
        for _ in range(EVENTS):
            x = {"a": float(rng.random()), "b": float(rng.random())}
            m.predict_proba_one(x)
            m.learn_one(x, classes[int(x["a"] * len(classes))])
    r = OKLRiverRegressor()
    for _ in range(EVENTS):
        x = {"a": float(rng.random()), "b": float(rng.random())}
        r.predict_one(x)
        r.learn_one(x, x["a"] - 2 * x["b"])


def _river_bases() -> None:
    """Stand-ins for the two base classes ``okl.river`` takes from River, in this process only:
    the adapter's own code (what it compiles) then runs without River installed. The build
    environment installs okl's dependencies, and River is not one of them."""
    import types

    river, base = types.ModuleType("river"), types.ModuleType("river.base")
    base.MiniBatchClassifier = type("MiniBatchClassifier", (), {})
    base.MiniBatchRegressor = type("MiniBatchRegressor", (), {})
    river.base = base
    sys.modules.update({"river": river, "river.base": base})


def _sklearn() -> None:
    import numpy as np

    from okl.data import load_dataset
    from okl.sklearn import OKLClassifier, OKLRegressor

    X, y = load_dataset("german")
    OKLClassifier().fit(X, y).predict(X[:10])
    OKLClassifier().fit(X, np.digitize(X[:, 1], [0.3, 0.6])).predict_proba(X[:10])
    Xr, yr = _regression()
    OKLRegressor().fit(Xr, yr).predict(Xr[:10])


def _evolvable() -> None:
    import okl.evolvable  # noqa: F401  (the feature-evolvable learners join the registry)
    from okl.checks import cases, data_for
    from okl.learners import learners, make

    for name in learners(kind="evolvable"):
        for case in cases(name)[:1]:
            stream = data_for(case)
            make(name, **case.params(len(stream.y))).run(stream)


def run_unit(unit: str) -> None:
    """Run one workload of :func:`default_units` in this process (what it compiles goes to the cache)."""
    from okl._threads import one_blas_thread

    with one_blas_thread():
        special = {"auto-k": _auto_k, "river": _river, "sklearn": _sklearn, "evolvable": _evolvable}
        if unit in special:
            special[unit]()
        else:
            _learner(unit)


@dataclass
class Report:
    """What :func:`check` found: the functions :func:`compile` cached for this CPU (its manifest;
    empty when it never ran here on these sources), those of them without an entry now, and the
    cache directories read and written."""

    functions: list[str]
    missing: list[str]
    read: list[str]
    write: str | None
    manifest: str | None
    #: the wall seconds of each workload in its worker (from :func:`compile`; empty from :func:`check`)
    seconds: dict = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.manifest is not None and not self.missing

    def summary(self) -> str:
        if self.manifest is None:
            state = "not compiled ahead for this CPU and these sources (first use compiles; run `okl compile`)"
        elif self.missing:
            state = (f"{len(self.functions)} compiled ahead, {len(self.missing)} of them no longer cached "
                     "(they compile at first use; run `okl compile`)")
        else:
            state = f"all {len(self.functions)} compiled ahead are cached for this CPU"
        lines = [f"okl's compiled code: {state}",
                 "cache read from: " + ", ".join(self.read),
                 f"cache written to: {self.write or 'nowhere (no writable directory: set NUMBA_CACHE_DIR)'}"]
        if self.missing:
            lines.append("not cached: " + ", ".join(self.missing[:12]) + (" ..." if len(self.missing) > 12 else ""))
        return "\n".join(lines)


def _manifest_name() -> str:
    import hashlib

    from okl._cache import cpu_magic

    return f"compiled-{hashlib.sha256(repr(cpu_magic()).encode()).hexdigest()[:12]}.txt"


def _write_manifest(root: str, names: list[str]) -> None:
    """The functions compiled ahead for this CPU, under the package's fingerprint (first line)."""
    from okl._cache import fingerprint

    path = os.path.join(root, _manifest_name())
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write("\n".join([fingerprint()] + names) + "\n")
    os.replace(tmp, path)


def _read_manifest(roots: list[str]) -> tuple[str | None, list[str]]:
    from okl._cache import fingerprint

    for root in roots:
        path = os.path.join(root, _manifest_name())
        try:
            with open(path) as f:
                lines = f.read().split()
        except OSError:
            continue
        if lines and lines[0] == fingerprint():
            return path, lines[1:]
    return None, []


def compiled_functions():
    """Every compiled function the package defines, as (``module.name``, dispatcher), less those
    inlined into their callers (never compiled alone). Imports every module of the package."""
    from okl._cache import PACKAGE_DIR, LazyCache

    seen = {}
    for info in pkgutil.walk_packages([PACKAGE_DIR], "okl."):
        if info.name.startswith(("okl.cli", "okl.precompile")):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # (an adapter whose optional dependency is not installed: okl.river)
            continue
        for name, value in vars(module).items():
            cache = getattr(value, "_cache", None)
            if isinstance(cache, LazyCache) and value.py_func.__module__ == info.name \
                    and value.targetoptions.get("inline", "never") == "never":
                seen.setdefault(f"{info.name}.{value.py_func.__qualname__}", value)
    return sorted(seen.items())


def check() -> Report:
    """Whether the cache holds every compiled function of the package for this CPU (nothing is
    compiled)."""
    from okl._cache import cache_dirs
    from okl._jit import is_cached

    dirs = cache_dirs()
    manifest, names = _read_manifest(dirs.read + ([dirs.write] if dirs.write and dirs.write not in dirs.read else []))
    if manifest is None:
        return Report([], [], dirs.read, dirs.write, None)
    functions = dict(compiled_functions())
    missing = [name for name in names if name not in functions or not is_cached(functions[name])]
    return Report(names, missing, dirs.read, dirs.write, manifest)


def _unit_in_worker(unit: str) -> tuple[str, str, float]:
    """:func:`run_unit` in a worker of :func:`compile`'s pool: (unit, "" or the failure, seconds)."""
    import time
    import traceback

    from okl._jit import compile_notice

    os.environ["OKL_COMPILE_PROCESSES"] = "1"  # (the pool is the parallelism: no compile child per worker)
    compile_notice(False)  # (the parent's progress line says what is compiling)
    t0 = time.perf_counter()
    try:
        run_unit(unit)
    except Exception:  # (reported by the parent, naming the unit; the other units go on)
        return unit, traceback.format_exc(limit=3)[-600:], time.perf_counter() - t0
    return unit, "", time.perf_counter() - t0


def default_units() -> tuple[str, ...]:
    """The workloads: :data:`FIRST_UNITS`, each other registered stream learner (so a learner
    registered in the package is compiled at install with no edit here), :data:`LAST_UNITS`."""
    from okl.learners import learners

    rest = [n for n in learners(kind="streaming") if n not in FIRST_UNITS + LAST_UNITS]
    return (*FIRST_UNITS, *rest, *LAST_UNITS)


def compile(processes: int | None = None, progress: bool = True, units=None) -> Report:  # noqa: A001
    """Fill the cache for this machine: run ``units`` (default :func:`default_units`) in a pool of
    ``processes`` worker processes (default: the cores this process may use, at most 2: auto's engine,
    the first unit, takes a third of the time), with a progress line on stderr; writes the manifest
    :func:`check` reads and returns its report. A unit that fails raises RuntimeError naming it
    (what the others compiled stays cached)."""
    import multiprocessing

    from okl._cache import cache_dirs
    from okl._jit import is_cached
    from okl.eval.progress import Progress

    units = default_units() if units is None else tuple(units)
    if processes is None:
        try:
            processes = min(len(os.sched_getaffinity(0)), 2)
        except (AttributeError, OSError):
            processes = min(os.cpu_count() or 1, 2)
    processes = max(1, min(int(processes), len(units)))
    failed, seconds = [], {}
    with Progress(len(units), "okl compile", enabled=progress, unit="workloads", eta=False) as bar, \
            multiprocessing.get_context("spawn").Pool(processes) as pool:
        for unit, error, took in pool.imap_unordered(_unit_in_worker, units, chunksize=1):
            seconds[unit] = took
            if error:
                failed.append(f"{unit}: {error}")
            bar.set_label(f"okl compile: {unit}")
            bar.advance()
    if failed:
        raise RuntimeError("okl compile: workloads failed (what the others compiled is cached): " + "; ".join(failed))
    write = cache_dirs().write
    if write is not None:
        _write_manifest(write, [name for name, dispatcher in compiled_functions() if is_cached(dispatcher)])
    report = check()
    report.seconds = seconds
    return report


__all__ = ["AFTER_AUTO", "FIRST_UNITS", "LAST_UNITS", "Report", "check", "compile", "default_units",
           "compiled_functions", "run_unit"]
