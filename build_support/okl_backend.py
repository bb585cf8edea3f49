"""okl's build backend: setuptools' (``setuptools.build_meta``), which first compiles okl's code for
the machine it builds on, so that the installed package carries its compiled cache and the first
run after ``pip install .`` loads instead of compiling (src/okl/precompile.py says what is run;
src/okl/_cache.py why a cache built here stays valid where the same sources are installed).

The compile runs in a child process of the build environment (``python -m okl.precompile``
through ``okl.compile()``: two processes on a machine with two cores), with okl's numerical
dependencies added to the build requirements. It never fails the build: with
``OKL_NO_PRECOMPILE=1``, without the dependencies, or when compiling fails, the package installs
without a cache and its first use compiles as before (``okl compile`` fills the cache later).
"""

import os
import subprocess
import sys
import time

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook this module does not wrap)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: okl's dependencies that importing okl and running its compiled code needs
COMPILE_NEEDS = ("numpy", "scipy", "scikit-learn", "numba", "threadpoolctl")


def _skip() -> bool:
    return os.environ.get("OKL_NO_PRECOMPILE", "").strip() not in ("", "0")


def _compile_requirements() -> list[str]:
    """okl's declared requirements (pyproject.toml) of :data:`COMPILE_NEEDS`, as declared."""
    import re

    try:
        import tomllib
    except ImportError:  # (Python < 3.11)
        return list(COMPILE_NEEDS)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        declared = tomllib.load(f)["project"]["dependencies"]
    return [req for req in declared if re.split(r"[ <>=!~\[;]", req, maxsplit=1)[0].lower() in COMPILE_NEEDS]


def _precompile() -> None:
    if _skip():
        print("okl: OKL_NO_PRECOMPILE is set: installing without compiled code (first use compiles)",
              file=sys.stderr)
        return
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # (the package's own cache)
    # (on sys.path from the code, not PYTHONPATH: pip's build environment prunes sys.path at start)
    # (a tree whose cache is complete for these sources, from an earlier build: nothing to compile)
    code = (f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'src')!r}); import okl.precompile as p; "
            "r = p.check(); r = r if r.complete else p.compile(); print(r.summary(), file=sys.stderr)")
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, timeout=1800)
        ok = done.returncode == 0
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"okl: compiling at install could not start ({exc})", file=sys.stderr)
        ok = False
    if ok:
        print(f"okl: compiled for this machine in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    else:
        print("okl: compiling at install failed; okl installs without compiled code and its first use "
              "compiles (or run `okl compile` after installing)", file=sys.stderr)


def get_requires_for_build_wheel(config_settings=None):
    extra = [] if _skip() else _compile_requirements()
    return _setuptools.get_requires_for_build_wheel(config_settings) + extra


def get_requires_for_build_editable(config_settings=None):
    extra = [] if _skip() else _compile_requirements()
    return _setuptools.get_requires_for_build_editable(config_settings) + extra


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _precompile()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _precompile()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
