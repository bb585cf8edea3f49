"""The bit-for-bit tests hold under every BLAS kernel and NumPy dispatch level this CPU can run,
so a claim that would fail on another processor fails here too.

Paths that claim the same numbers (per event, blocks, run(), lists against arrays, K outputs)
run the same compiled arithmetic, which does not depend on the CPU (``okl._jit``: no fastmath).
BLAS does: OpenBLAS picks its kernels for the CPU (their summation order differs), and NumPy's
vectorised functions dispatch on the CPU's instruction groups (``np.log1p`` differed from
``math.log1p`` on 9 % of values under AVX-512). Each child below reruns the equality tests with
another OpenBLAS kernel (``OPENBLAS_CORETYPE``: one of each vector width the CPU can execute:
SSE3, AVX, AVX2, AVX-512) and with NumPy's dispatch down to its baseline
(``NPY_DISABLE_CPU_FEATURES``: every group this CPU has). Measured: the linear learner's generic
decision went through BLAS and failed under the Prescott kernel on an AVX2 machine exactly as it
failed under SkylakeX on an AVX-512 one.
"""

import functools
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the test files whose assertions compare two paths bit for bit
EQUALITY_TESTS = ["tests/test_events.py", "tests/test_vecmath.py", "tests/test_auto.py", "tests/test_multiclass.py",
                  "tests/test_data.py::test_recorded_width_is_what_the_rule_chooses"]
#: one OpenBLAS kernel per vector width (SSE3, AVX, AVX2, AVX-512)
CORETYPES = ["Prescott", "Sandybridge", "Haswell", "SkylakeX"]
_PROBE = ("import numpy as np; r = np.random.default_rng(0); a = r.random((64, 64)); x = r.random(5); "
          "print([float(v) for v in ((a @ a).sum(), a[0] @ a[1], x @ a[2, :5], (a @ a[0]).sum())])")


def _probe(env: dict) -> tuple[int, str]:
    r = subprocess.run([sys.executable, "-c", _PROBE], env={**os.environ, **env}, capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout.strip()


def _current_kernel() -> str:
    from threadpoolctl import threadpool_info

    return next((i.get("architecture") or "" for i in threadpool_info() if i.get("internal_api") == "openblas"), "")


@functools.lru_cache(maxsize=1)
def _variants() -> list[tuple[str, dict]]:
    """(name, environment) of each other kernel this CPU executes (a kernel the CPU lacks dies
    with SIGILL in the probe: skipped), the first also with NumPy's dispatch at its baseline."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    groups = " ".join(g for g in __cpu_dispatch__ if __cpu_features__.get(g))
    current = _current_kernel().lower()
    out = []
    for core in CORETYPES:
        if core.lower() == current:
            continue
        env = {"OPENBLAS_CORETYPE": core}
        if _probe(env)[0] == 0:
            out.append((core, env))
    if out and groups:
        name, env = out[0]
        out[0] = (f"{name}+numpy-baseline", {**env, "NPY_DISABLE_CPU_FEATURES": groups})
    return out


def test_another_kernel_gives_other_bits_for_blas_but_not_for_okls_compiled_code():
    """The probe's premise: some other kernel this CPU runs sums in another order (else the
    children below could not see a BLAS dependence at all)."""
    variants = _variants()
    if not variants:
        pytest.skip("no other OpenBLAS kernel runs on this CPU")
    base = _probe({})[1]
    assert any(_probe(env)[1] != base for _, env in variants), "every kernel gave the same BLAS sums"


def test_equality_tests_hold_under_every_other_kernel():
    from concurrent.futures import ThreadPoolExecutor

    def child(variant):
        name, env = variant
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *EQUALITY_TESTS],
                           cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=1800)
        return None if r.returncode == 0 else f"{name} ({env}):\n{r.stdout[-3000:]}\n{r.stderr[-1000:]}"

    # (the children are independent processes: one per core at a time)
    with ThreadPoolExecutor(max_workers=max(1, min(len(_variants()), os.cpu_count() or 1))) as pool:
        failed = [f for f in pool.map(child, _variants()) if f]
    assert not failed, "\n\n".join(failed)


#: every float a module of okl holds (a float, a NumPy float or an array of them), as its bytes
_CONSTANTS = r"""
import importlib, json, pkgutil
import numpy as np
import okl
out = {}
for info in pkgutil.walk_packages(okl.__path__, "okl."):
    if info.name.endswith("__main__"):
        continue
    try:
        module = importlib.import_module(info.name)
    except ImportError:  # (an optional extra not installed: the same in both processes)
        continue
    for name, value in vars(module).items():
        if isinstance(value, (float, np.floating)) or isinstance(value, np.ndarray) and value.dtype.kind in "fc":
            out[f"{info.name}.{name}"] = np.asarray(value).tobytes().hex()
print(json.dumps(out))
"""


def test_module_constants_do_not_depend_on_numpys_dispatch():
    """Compiled code freezes the module globals it reads into its machine code, and the cache
    shares that code between processes (okl._cache keys it by the sources and the CPU, not by
    NumPy's dispatch): a constant computed at import with NumPy's vector functions would be
    another bit in a process at NumPy's baseline, which then runs another process's constant
    compiled and its own in Python. Measured: ``scaling._SYMLOG_LOG`` = log1p(2) was ln 3 rounded
    up under AVX-512 and down at the baseline, and a cache written under one failed the
    list-against-array tests under the other."""
    import json

    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    groups = " ".join(g for g in __cpu_dispatch__ if __cpu_features__.get(g))
    if not groups:
        pytest.skip("NumPy dispatches to nothing above its baseline on this CPU")
    runs = [subprocess.run([sys.executable, "-c", _CONSTANTS], env={**os.environ, **env}, capture_output=True,
                           text=True, timeout=300) for env in ({}, {"NPY_DISABLE_CPU_FEATURES": groups})]
    assert all(r.returncode == 0 for r in runs), "\n".join(r.stderr[-2000:] for r in runs)
    here, baseline = (json.loads(r.stdout) for r in runs)
    assert len(here) > 50 and here.keys() == baseline.keys()
    differ = sorted(name for name in here if here[name] != baseline[name])
    assert not differ, f"constants that depend on NumPy's dispatch: {differ}"
