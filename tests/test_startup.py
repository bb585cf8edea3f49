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
