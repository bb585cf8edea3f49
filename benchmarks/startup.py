"""A newcomer's first contact: cold-cache and warm times of ``import okl``, the first ``run()`` of
each registered stream learner on german, the first 60 events of ``OKLRiverClassifier()`` and
``okl run`` with no arguments. Each figure is one fresh process with its own ``NUMBA_CACHE_DIR``:
empty for the cold figure, the one the cold process filled for the warm one. Compile time is CPU
time, so the machine's load (printed before and after) moves every cold figure; each process's
CPU seconds are printed beside its wall seconds.

``--install`` adds what a newcomer waits for after a clone: ``pip install .`` of the committed HEAD
into a new virtual environment (which compiles okl's code for this machine), the same with
``OKL_NO_PRECOMPILE=1`` (no compile), and the first answer after each install (``okl run``, the
first 60 River events, auto's first ``run()``), with no ``NUMBA_CACHE_DIR``.

    python benchmarks/startup.py [--learners auto,nogd] [--install] [--out docs/results/startup.md]

Not a timed test: ``../shared/checks/firstcontact.py`` holds the bars.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import okl

IMPORT = "import okl"
FIRST_RUN = ("import okl; X, y = okl.load_dataset('german'); okl.make({name!r}, random_state=0).run(X, y)")
RIVER = ("import numpy as np; from okl.river import OKLRiverClassifier; m = OKLRiverClassifier(); "
         "r = np.random.default_rng(0); "
         "[m.learn_one({'a': float(r.random()), 'b': float(r.random())}, bool(r.random() > .5)) for _ in range(60)]; "
         "m.predict_one({'a': 0.5, 'b': 0.5})")


def timed(cmd: list[str], cache: str, cwd: str | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stderr) of one fresh process with NUMBA_CACHE_DIR=cache."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env={**os.environ, "NUMBA_CACHE_DIR": cache}, capture_output=True, text=True,
                       cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stderr


def said(stderr: str) -> str:
    return "yes" if "okl: compiling" in stderr else "no"


def cold_and_warm(label: str, cmd: list[str], root: str, cwd: str | None = None) -> dict:
    cache = tempfile.mkdtemp(dir=root)
    cold = timed(cmd, cache, cwd)
    warm = timed(cmd, cache, cwd)
    row = {"what": label, "cold": cold[0], "cold_cpu": cold[1], "warm": warm[0], "warm_cpu": warm[1],
           "notice": f"{said(cold[2])} / {said(warm[2])}"}
    print(f"{label:38s} cold {cold[0]:6.1f} s (CPU {cold[1]:5.1f})   warm {warm[0]:5.1f} s (CPU {warm[1]:4.1f})"
          f"   compile notice cold / warm: {row['notice']}", flush=True)
    return row


def install_rows(root: str) -> list[dict]:
    """``pip install .`` of HEAD into a new venv, with and without the compile, and the first answer
    after each (every process with the environment a user has: no NUMBA_* or OKL_* settings)."""
    rows = []
    for label, extra in (("compiled at install", {}), ("OKL_NO_PRECOMPILE=1", {"OKL_NO_PRECOMPILE": "1"})):
        src = os.path.join(root, f"okl-{len(rows)}")  # (a clone each: a build leaves its cache in the tree)
        subprocess.run(["git", "clone", "-q", os.getcwd(), src], check=True)
        venv = os.path.join(root, f"venv-{len(rows)}")
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "OKL_", "VIRTUAL_ENV", "PYTHON"))}
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
        py = os.path.join(venv, "bin", "python")
        subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], env=env, capture_output=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "river"], env=env, capture_output=True)

        def clock(cmd, cwd=root, more=None):
            t0 = time.perf_counter()
            r = subprocess.run(cmd, cwd=cwd, env={**env, **(more or {})}, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr[-500:]}")
            return time.perf_counter() - t0, said(r.stderr)

        install, _ = clock([py, "-m", "pip", "install", "-q", "."], cwd=src, more=extra)
        run1, n1 = clock([os.path.join(venv, "bin", "okl"), "run"])
        run2, _ = clock([os.path.join(venv, "bin", "okl"), "run"])
        river, nr = clock([py, "-c", RIVER])
        auto, na = clock([py, "-c", FIRST_RUN.format(name="auto")])
        row = {"what": label, "install": install, "run1": run1, "run2": run2, "river": river, "auto": auto,
               "notice": " / ".join((n1, nr, na))}
        print(f"{label:22s} pip install . {install:5.1f} s; then okl run {run1:5.1f} s (again {run2:4.1f} s), "
              f"60 River events {river:4.1f} s, auto's run() {auto:4.1f} s; compile notice {row['notice']}",
              flush=True)
        rows.append(row)
    return rows


def cpu_name() -> str:
    """The CPU's model name and widest vector unit (compile time rides on both), from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return platform.processor() or platform.machine()
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")),
                platform.machine())
    vector = "AVX-512" if "avx512f" in text else "AVX2" if "avx2" in text else "no AVX2"
    return f"{name}, {vector}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", help="comma-separated learners (default: every registered stream learner)")
    ap.add_argument("--out", help="also write the table as Markdown to this file")
    ap.add_argument("--install", action="store_true",
                    help="also time pip install . of HEAD into new venvs (with and without the compile) and the "
                         "first answer after it")
    args = ap.parse_args(argv)
    names = args.learners.split(",") if args.learners else okl.learners(kind="streaming")
    py = sys.executable
    okl_bin = shutil.which("okl") or "okl"
    load0 = os.getloadavg()[0]
    print(f"load average at start: {load0:.2f}; {os.cpu_count()} CPUs; {cpu_name()}")
    root = tempfile.mkdtemp(prefix="okl-startup-")
    rows, installs = [], []
    try:
        if args.install:
            installs = install_rows(root)
        rows.append(cold_and_warm("import okl", [py, "-c", IMPORT], root))
        for name in names:
            rows.append(cold_and_warm(f"first run() of {name} (german)", [py, "-c", FIRST_RUN.format(name=name)], root))
        try:
            import river  # noqa: F401
            rows.append(cold_and_warm("first 60 OKLRiverClassifier() events", [py, "-c", RIVER], root))
        except ImportError:
            print("river not installed: the adapter's row is skipped (pip install -e '.[test]')")
        # the README's first command, in an empty working directory
        rows.append(cold_and_warm("okl run (no arguments)", [okl_bin, "run"], root, cwd=tempfile.mkdtemp(dir=root)))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load1 = os.getloadavg()[0]
    print(f"load average at end: {load1:.2f}")
    if args.out:
        lines = [
            "# First contact: cold-cache and warm start-up times",
            "",
            f"Generated by `python benchmarks/startup.py{' --install' if installs else ''}` on {datetime.date.today()} "
            f"({os.cpu_count()} CPUs, {cpu_name()}, "
            f"load average {load0:.2f} at start, {load1:.2f} at end). Each cell is one fresh process with its own "
            "`NUMBA_CACHE_DIR` (cold: empty; warm: the one the cold process filled); CPU is the child's user + "
            "system time. The cold figures are compile time: CPU time, moved by the machine's load.",
            "",
            "| what | cold s | cold CPU s | warm s | warm CPU s | compile notice (cold / warm) |",
            "|---|---|---|---|---|---|",
        ]
        lines += [f"| {r['what']} | {r['cold']:.1f} | {r['cold_cpu']:.1f} | {r['warm']:.1f} | {r['warm_cpu']:.1f} | "
                  f"{r['notice']} |" for r in rows]
        if installs:
            lines += ["", "## After `pip install .`", "",
                      "A clone of HEAD installed into a new virtual environment (River installed first), each figure "
                      "a fresh process with no `NUMBA_CACHE_DIR`: the install, then the first answers.", "",
                      "| install | pip install . s | first okl run s | second okl run s | first 60 River events s | "
                      "auto's first run() s | compile notice (run / River / auto) |",
                      "|---|---|---|---|---|---|---|"]
            lines += [f"| {r['what']} | {r['install']:.1f} | {r['run1']:.1f} | {r['run2']:.1f} | {r['river']:.1f} | "
                      f"{r['auto']:.1f} | {r['notice']} |" for r in installs]
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
