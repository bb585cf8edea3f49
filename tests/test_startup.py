"""A process that compiles okl's loops (a cold Numba cache) says so once on stderr; a warm cache
says nothing, and stdout is the same either way."""

import os
import subprocess
import sys

NOTICE = "okl: compiling the learners' loops for this machine, once"


def _run(args, cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=env)


def test_compile_notice_once_on_a_cold_cache_and_never_on_a_warm_one(tmp_path):
    api = ["-c", "import okl; X, y = okl.load_dataset('german'); "
                 "print(okl.make('linear').run(X, y).mistake_rate); print(okl.make('linear').run(X, y).mistake_rate)"]
    cold = _run(api, tmp_path / "cache")
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count(NOTICE) == 1, cold.stderr
    assert str(tmp_path / "cache") in cold.stderr  # where the cache lives
    warm = _run(api, tmp_path / "cache")
    assert warm.returncode == 0 and NOTICE not in warm.stderr, warm.stderr
    assert cold.stdout == warm.stdout and cold.stdout.splitlines() == ["26.8", "26.8"]
    # the CLI on the now warm cache: nothing on stderr but its own lines
    cli = _run(["-m", "okl.cli", "run", "--learners", "linear", "--runs", "1"], tmp_path / "cache")
    assert cli.returncode == 0 and NOTICE not in cli.stderr and "linear" in cli.stdout, cli.stderr


def test_quiet_turns_the_notice_off_for_the_command_only(monkeypatch):
    from okl import _jit
    from okl.cli import main

    seen = []
    monkeypatch.setattr(_jit, "compile_notice", lambda on: seen.append(on))
    assert main(["run", "--learners", "nogd", "--param", "zeta=1", "--quiet"]) == 2
    assert seen == [False, True]  # off for the command, restored after it (even on an error)


_COLD_AUTO = """
import json, os, numpy as np, okl
from numba.core import event
compiled = []
class Seen(event.Listener):
    def on_start(self, e):
        compiled.append(e.data['dispatcher'].py_func.__name__)
    def on_end(self, e):
        pass
event.register('numba:compile', Seen())
X, y = okl.load_dataset('german')
trace = okl.make('auto', random_state=0).run(X, y)
print(json.dumps({'compiled': compiled, 'mistakes': trace.mistake_rate}))
"""


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def test_a_cold_start_compiles_half_of_the_engine_in_a_second_process(tmp_path):
    """On a cold cache auto's first rows start a child process that compiles the second half of
    the engine root's callees (okl.engine.roots._parts) into the same cache; the root
    then loads them, so this process compiles none of them, and each of its own half once (the
    signatures in _parts are those the root types them with: a mismatch would compile a second
    specialisation here). The numbers are those of a process that compiled everything itself."""
    import json

    import pytest

    from okl.engine.roots import _parts

    if _cores() < 2:
        pytest.skip("one core: no second compile process")
    mine, child = ([d.py_func.__name__ for d, _ in part] for part in _parts(False))
    late = {"learn_all_one", "aggregate_outputs_round"}  # (the child's first two are a race, by design)
    assert late <= set(child)
    two = _run(["-c", _COLD_AUTO], tmp_path / "two")
    assert two.returncode == 0, two.stderr
    got = json.loads(two.stdout.splitlines()[-1])
    assert not late & set(got["compiled"]), got["compiled"]
    assert all(got["compiled"].count(name) == 1 for name in mine), got["compiled"]
    assert "engine_one" in got["compiled"] and "engine_k" not in got["compiled"]  # one output: no K-output root
    env_one = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "one"), "OKL_COMPILE_PROCESSES": "1"}
    one = subprocess.run([sys.executable, "-c", _COLD_AUTO], capture_output=True, text=True, timeout=600,
                         env=env_one)
    assert one.returncode == 0, one.stderr
    alone = json.loads(one.stdout.splitlines()[-1])
    assert set(child) <= set(alone["compiled"])  # OKL_COMPILE_PROCESSES=1: this process compiles everything
    assert alone["mistakes"] == got["mistakes"]
