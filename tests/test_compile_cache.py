"""okl's compile cache (okl._cache, okl.precompile): entries stamped by the package's content, a
read-only install that compiles into a user cache the notice names, a prebuilt cache loaded from a
read-only package, damaged entries compiled again, ``okl compile`` and its check, and
``OKL_COMPILE_PROCESSES`` read as a number."""

import os
import shutil
import subprocess
import sys

import pytest

import okl

NOTICE = "okl: compiling the learners' loops for this machine"
LINEAR = ("import okl; X, y = okl.load_dataset('german'); print(okl.make('linear').run(X, y).mistake_rate)")
PACKAGE = os.path.dirname(okl.__file__)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE_DIR", "XDG_CACHE_HOME"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _python(code, env, cwd=None, wrap=()):
    return subprocess.run([*wrap, sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env,
                          cwd=cwd)


def _copy_package(tmp_path):
    """A copy of the package's sources (no compiled cache) under tmp_path/site."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "okl", ignore=shutil.ignore_patterns("__pycache__", "_numba_cache"))
    return site


def _read_only(site):
    """A command prefix that runs a child with ``site`` read-only: chmod for a user, a read-only bind
    mount in a private mount namespace for root (whom permissions do not stop); None when neither
    is available here."""
    if os.geteuid() != 0:
        for top, dirs, files in os.walk(site):
            for name in dirs + files:
                os.chmod(os.path.join(top, name), 0o555 if name in dirs else 0o444)
        os.chmod(site, 0o555)
        return ()
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind -o ro {site} {site} && ! touch {site}/x"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return ("unshare", "-rm", "sh", "-c", f'mount --bind -o ro {site} {site} && exec "$0" "$@"')


def _files(path):
    return sorted(os.path.relpath(os.path.join(t, f), path) for t, _, fs in os.walk(path) for f in fs)


def _as_another_user(tmp_path, site):
    """(environment, command prefix, home) to run a child with ``site`` read-only and an empty home
    (skips where no way to make it read-only exists)."""
    home = tmp_path / "home"
    home.mkdir()
    wrap = _read_only(site)
    if wrap is None:
        pytest.skip("root without user namespaces: no way to make a directory read-only for this process")
    return _env(PYTHONPATH=site, HOME=home), wrap, home


def test_a_read_only_install_compiles_into_the_user_cache_the_notice_names(tmp_path):
    site = _copy_package(tmp_path)
    env, wrap, home = _as_another_user(tmp_path, site)
    first = _python(LINEAR, env, cwd=tmp_path, wrap=wrap)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["26.8"]
    user = home / ".cache" / "okl"
    assert first.stderr.count(NOTICE) == 1 and str(user) in first.stderr, first.stderr
    assert any(name.endswith(".nbi") for name in _files(user))  # the entries went where it said
    assert not (site / "okl" / "_numba_cache").exists()  # and nothing into the read-only package
    again = _python(LINEAR, env, cwd=tmp_path, wrap=wrap)
    assert again.returncode == 0 and NOTICE not in again.stderr and again.stdout == first.stdout, again.stderr


def test_a_cache_built_beside_the_sources_loads_from_a_read_only_copy_elsewhere(tmp_path):
    """The package's content stamps its entries, not the files' times: a cache compiled in one copy
    is valid in another copy made later (new modification times), read-only, with nothing written."""
    build = _copy_package(tmp_path / "build")
    made = _python("import sys; from okl.precompile import compile; r = compile(processes=1, progress=False, "
                   "units=('linear',)); sys.exit(0 if r.complete else 1)", _env(PYTHONPATH=build), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    site = tmp_path / "site"
    shutil.copytree(build, site)  # (copytree gives the sources new modification times)
    env, wrap, home = _as_another_user(tmp_path, site)
    run = _python(LINEAR, env, cwd=tmp_path, wrap=wrap)
    assert run.returncode == 0 and run.stdout.split() == ["26.8"], run.stderr
    assert NOTICE not in run.stderr, run.stderr
    assert not _files(home)  # (nothing compiled, nothing written)
    check = _python("from okl.precompile import check; print(check().summary())", env,
                    cwd=tmp_path, wrap=wrap)
    assert "all" in check.stdout and "cached for this CPU" in check.stdout, check.stdout + check.stderr


def test_an_edit_anywhere_in_the_package_invalidates_its_entries(tmp_path):
    site = _copy_package(tmp_path)
    env = _env(PYTHONPATH=site, NUMBA_CACHE_DIR=tmp_path / "cache")
    assert NOTICE in _python(LINEAR, env, cwd=tmp_path).stderr
    assert NOTICE not in _python(LINEAR, env, cwd=tmp_path).stderr
    with open(site / "okl" / "kernels.py", "a") as f:  # (a file that defines no compiled function)
        f.write("\n# an edit\n")
    edited = _python(LINEAR, env, cwd=tmp_path)
    assert edited.returncode == 0 and NOTICE in edited.stderr, edited.stderr


@pytest.mark.parametrize("damage", ["truncate data", "garbage index"])
def test_a_damaged_cache_entry_is_compiled_again_with_the_same_numbers(tmp_path, damage):
    env = _env(NUMBA_CACHE_DIR=tmp_path / "cache")
    code = LINEAR + "; print(okl.make('nogd', random_state=0).run(X, y).mistake_rate)"
    clean = _python(code, env)
    assert clean.returncode == 0, clean.stderr
    damaged = 0
    for name in _files(tmp_path / "cache"):
        path = tmp_path / "cache" / name
        if damage == "truncate data" and name.endswith(".nbc"):
            os.truncate(path, path.stat().st_size // 2)
            damaged += 1
        elif damage == "garbage index" and name.endswith(".nbi"):
            path.write_bytes(os.urandom(200))
            damaged += 1
    assert damaged > 5
    again = _python(code, env)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert again.stdout == clean.stdout
    assert NOTICE in again.stderr  # (compiled again)
    healed = _python(code, env)  # the entries were written anew
    assert healed.returncode == 0 and NOTICE not in healed.stderr and healed.stdout == clean.stdout, healed.stderr


def test_okl_compile_fills_the_cache_and_check_says_so(tmp_path):
    from okl.cli import main  # noqa: F401  (the command is registered)

    env = _env(NUMBA_CACHE_DIR=tmp_path / "cache")
    before = _python("from okl.precompile import check; r = check(); print(r.complete); print(r.summary())", env)
    assert before.stdout.splitlines()[0] == "False" and "not compiled ahead" in before.stdout, before.stdout
    made = subprocess.run([sys.executable, "-c", "import sys; from okl.precompile import compile; "
                           "r = compile(processes=2, progress=True, units=('linear', 'nogd')); print(r.summary())"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert made.returncode == 0, made.stderr
    assert "okl compile" in made.stderr and "ETA    ?" in made.stderr  # progress, and no ETA from uneven steps
    assert "compiled ahead are cached for this CPU" in made.stdout and str(tmp_path / "cache") in made.stdout
    cli = subprocess.run([sys.executable, "-m", "okl.cli", "compile", "--check"], capture_output=True, text=True,
                         timeout=600, env=env)
    assert cli.returncode == 0 and "cached for this CPU" in cli.stdout, cli.stdout + cli.stderr
    again = subprocess.run([sys.executable, "-m", "okl.cli", "compile"], capture_output=True, text=True, timeout=600,
                           env=env)  # (complete for the manifest's functions: nothing to run)
    assert again.returncode == 0 and "nothing to do" in again.stdout, again.stdout + again.stderr
    run = _python(LINEAR, env)
    assert run.returncode == 0 and NOTICE not in run.stderr, run.stderr


def test_the_notice_names_the_directory_used_when_numba_cache_dir_cannot_be(tmp_path):
    (tmp_path / "afile").write_text("")
    env = _env(NUMBA_CACHE_DIR=tmp_path / "afile" / "sub", HOME=tmp_path, XDG_CACHE_HOME=tmp_path / "xdg")
    site = _copy_package(tmp_path)  # (a package copy whose own cache is cold)
    env["PYTHONPATH"] = str(site)
    run = _python(LINEAR, env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    line = next(line for line in run.stderr.splitlines() if line.startswith(NOTICE))
    assert "afile" not in line and str(site / "okl" / "_numba_cache") in line, line
    assert "NUMBA_CACHE_DIR is not a directory this process can write" in line


def test_okl_compile_processes_is_a_number(monkeypatch):
    from okl.engine.roots import compile_processes

    for text, expected in (("", 2), ("0", 0), ("1", 1), (" 3 ", 3)):
        monkeypatch.setenv("OKL_COMPILE_PROCESSES", text)
        assert compile_processes() == expected
    monkeypatch.setenv("OKL_COMPILE_PROCESSES", "two")
    with pytest.raises(ValueError, match="OKL_COMPILE_PROCESSES='two': expected an integer"):
        compile_processes()


def _backend():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "build_support" / "okl_backend.py"
    spec = importlib.util.spec_from_file_location("okl_backend_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_backend_asks_for_what_compiling_needs_unless_told_not_to(monkeypatch, capsys):
    backend = _backend()
    monkeypatch.delenv("OKL_NO_PRECOMPILE", raising=False)
    extra = [r.split(">")[0].split("<")[0] for r in backend.get_requires_for_build_wheel()]
    assert {"numpy", "scipy", "scikit-learn", "numba", "threadpoolctl"} <= set(extra)
    assert "matplotlib" not in extra  # (compiling imports no plotting)
    monkeypatch.setenv("OKL_NO_PRECOMPILE", "1")
    assert not {"numba", "numpy"} & set(backend.get_requires_for_build_wheel())
    backend._precompile()  # told not to: says so, compiles nothing
    assert "OKL_NO_PRECOMPILE is set" in capsys.readouterr().err


def test_ctrl_c_during_a_compile_ends_the_command_with_130(tmp_path):
    """SIGINT as soon as the compile notice appears (the compile under way): "okl: interrupted",
    exit code 130, and nothing swallowed inside Numba's ctypes callbacks."""
    import signal
    import time

    env = _env(NUMBA_CACHE_DIR=tmp_path / "cache")
    # (the command with Python's own Ctrl-C handler, as a terminal starts it: a test suite started as
    # a shell's background job, as CI may be, hands its children SIGINT ignored, and okl leaves an
    # ignored SIGINT ignored)
    command = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "from okl.cli import main; sys.exit(main(['run', '--learners', 'nogd', '--runs', '1']))")
    proc = subprocess.Popen([sys.executable, "-c", command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(NOTICE):
            break
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    proc.wait(timeout=120)
    err = "".join(seen) + rest
    assert proc.returncode == 130, err
    assert "okl: interrupted" in err and "Exception ignored" not in err and "Traceback" not in err, err


def test_importing_the_river_adapter_does_no_work_and_warm_up_is_explicit(tmp_path):
    """``import okl.river`` loads no engine and trains nothing; ``okl.river.warm_up()`` loads both
    roots on a warm cache (True) and does nothing on a cold one (False: it would compile)."""
    pytest.importorskip("river")
    code = ("import okl.river, okl.engine.roots as r; before = len(r._ROOTS); ok = okl.river.warm_up(); "
            "print(before, ok, len(r._ROOTS))")
    cold = _python(code, _env(NUMBA_CACHE_DIR=tmp_path / "cold"))
    assert cold.returncode == 0 and cold.stdout.split() == ["0", "False", "0"], cold.stdout + cold.stderr
    assert NOTICE not in cold.stderr
    warm = _python("from okl.precompile import check; print(check().complete); " + code, _env())
    assert warm.returncode == 0, warm.stderr
    complete, before, ok, after = warm.stdout.split()
    if complete != "True":  # (sources edited since the install compiled them)
        pytest.skip("the package's cache is not complete for these sources: run okl compile")
    assert (before, ok, after) == ("0", "True", "2"), warm.stdout


def test_damaged_entries_in_a_read_only_cache_are_compiled_elsewhere_and_named(tmp_path):
    site = _copy_package(tmp_path)
    made = _python("import sys; from okl.precompile import compile; r = compile(processes=1, progress=False, "
                   "units=('linear',)); sys.exit(0 if r.complete else 1)", _env(PYTHONPATH=site), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    package_cache = site / "okl" / "_numba_cache"
    for name in _files(package_cache):
        if name.endswith(".nbc"):
            path = package_cache / name
            os.truncate(path, path.stat().st_size // 2)
    env, wrap, home = _as_another_user(tmp_path, site)
    run = _python(LINEAR, env, cwd=tmp_path, wrap=wrap)
    assert run.returncode == 0 and run.stdout.split() == ["26.8"] and "Traceback" not in run.stderr, run.stderr
    assert f"the compile cache in {package_cache} has damaged entries" in run.stderr, run.stderr
    assert "okl compile --force" in run.stderr and str(home / ".cache" / "okl") in run.stderr
    again = _python(LINEAR, env, cwd=tmp_path, wrap=wrap)  # (the user cache now holds them)
    assert again.returncode == 0 and again.stdout == run.stdout and NOTICE not in again.stderr, again.stderr


def test_loading_a_cached_entry_installs_none_of_numbas_registries_and_a_compile_after_it_works(tmp_path):
    """A cached entry is loaded without Numba's registry refresh (okl._cache.PackageCache.load_overload:
    0.2-0.5 s of imports, cffi and pycparser among them, at a process's first compiled call): the
    same numbers as the process that compiled, none of those modules imported, and a function
    compiled afterwards in the same process (Numba's compiler refreshes the registries itself) runs."""
    env = _env(NUMBA_CACHE_DIR=tmp_path / "cache")
    code = (LINEAR + "; import sys; print(sorted(m for m in ('numba.core.typing.cffi_utils', 'numba.typed.typeddict', "
            "'numba.np.random.generator_methods', 'cffi') if m in sys.modules)); "
            "import numpy as np; from okl._jit import jit; f = jit(lambda a: np.sort(a)[::-1].sum() + len({1: 2})); "
            "print(f(np.arange(4.0)))")
    compiled = _python(code, env)
    assert compiled.returncode == 0 and NOTICE in compiled.stderr, compiled.stderr
    loaded = _python(code, env)
    assert loaded.returncode == 0 and NOTICE not in loaded.stderr, loaded.stderr
    rate, modules, after = loaded.stdout.split("\n")[:3]
    assert rate == compiled.stdout.split("\n")[0]
    assert modules == "[]", modules
    assert float(after) == 7.0


PROBE = '''
import numpy as np
from okl._jit import jit


@jit
def total(a):
    return np.sum(np.sqrt(a)) + len(str(a.shape[0]))


@jit
def set_head(a, b):
    a[:2] = b
    return a.sum()


@jit
def str_hash(n):
    return hash(str(n))
'''


def test_a_loaded_entry_rebuilds_only_the_environments_its_code_reads_and_the_runtime_from_its_file(tmp_path):
    """okl's entries keep the environments their machine code names (okl._cache._Impl.reduce): a
    loaded function whose linked implementations (NumPy's sum and sqrt, str) never read theirs
    imports none of their modules, nor the hash secret's (numba.cpython.hashing), which a str's
    hash then reads as Python's; a slice set from an array of the wrong shape still raises
    Numba's message (whose environment is kept); the runtime's compiled part (NRT) is read from
    its file in the cache (okl._cache.start_runtime), not compiled, and the numbers are those of
    the process that compiled."""
    site = _copy_package(tmp_path)
    (site / "okl" / "_probe.py").write_text(PROBE)
    env = _env(PYTHONPATH=site, NUMBA_CACHE_DIR=tmp_path / "cache")
    watch = ("import sys, numpy as np, numba.core.runtime.nrtdynmod as nrt; made = []; "
             "build = nrt.create_nrt_module; nrt.create_nrt_module = lambda ctx: made.append(1) or build(ctx); ")
    total = watch + ("from okl._probe import total; print(total(np.arange(16.0))); print(sorted(m for m in "
                     "('numba.np.arrayobj', 'numba.np.arraymath', 'numba.np.npyimpl', 'numba.cpython.unicode', "
                     "'numba.cpython.hashing') "
                     "if m in sys.modules)); print(len(made))")
    compiled = _python(total, env)
    assert compiled.returncode == 0 and NOTICE in compiled.stderr, compiled.stderr
    value, _, made = compiled.stdout.split("\n")[:3]
    assert float(value) == sum(i ** 0.5 for i in range(16)) + 2 and made == "1"
    assert [name for name in _files(tmp_path / "cache") if "/nrt-" in name]  # (the runtime's file)
    loaded = _python(total, env)
    assert loaded.returncode == 0 and NOTICE not in loaded.stderr, loaded.stderr
    assert loaded.stdout.split("\n")[:3] == [value, "[]", "0"], loaded.stdout
    head = watch + ("from okl._probe import set_head; print(set_head(np.zeros(4), np.ones(2)))\ntry:\n"
                    "    set_head(np.zeros(4), np.ones(3))\nexcept ValueError as e:\n    print(e)")
    for run in range(2):  # (compiled, then loaded)
        out = _python(head, env)
        assert out.returncode == 0 and (NOTICE in out.stderr) == (run == 0), out.stderr
        assert out.stdout.split("\n")[:2] == ["2.0", "cannot assign slice of shape (2,) from input of shape (3,)"]
    keyed = "from okl._probe import str_hash; print(str_hash(1234) == hash('1234'))"
    for run in range(2):
        out = _python(keyed, env)
        assert out.returncode == 0 and (NOTICE in out.stderr) == (run == 0) and out.stdout == "True\n", out.stderr


def test_loading_autos_engine_imports_no_numba_implementation_module():
    """auto's two compiled roots load (okl.engine.roots.load_compiled) without importing a Numba
    implementation module: their entries keep no environment of one (a slice set from an array in
    code the roots inline, ``a[s:e] = b``, would bring numba.np.arrayobj back, ~16 ms a process:
    copy element by element there). Needs the package's cache warm for both roots."""
    code = ("import sys; from okl.engine.roots import load_compiled, roots_cached; ok = roots_cached(); "
            "load_compiled() if ok else None; print(ok); print(sorted(m for m in ('numba.np.arrayobj', "
            "'numba.np.arraymath', 'numba.np.npyimpl', 'numba.np.linalg', 'numba.cpython.unicode', "
            "'numba.cpython.hashing') if m in sys.modules))")
    out = _python(code, _env())
    assert out.returncode == 0, out.stderr
    cached, modules = out.stdout.split("\n")[:2]
    if cached != "True":
        pytest.skip("auto's roots are not in the package's cache for these sources: run okl compile")
    assert NOTICE not in out.stderr
    assert modules == "[]", modules
