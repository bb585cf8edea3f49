"""Learners from other packages (okl.runtime.plugins): an installed distribution's entry point in
the group ``okl.learners``, ``$OKL_PLUGINS`` and ``--import``, each seen by okl run, okl learners and
model files in a fresh process; a plugin that fails to import is one line and stops nothing."""

import os
import subprocess
import sys
import textwrap

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

GOOD = textwrap.dedent('''
    import okl
    from okl.learners.klms import KLMS

    @okl.register("klms-{tag}")
    class KLMSPlugin(KLMS):
        """KLMS registered by a test plugin."""
    ''')


def _package(root, dist, module, names, body):
    """A distribution as pip leaves it (a ``.dist-info`` with its entry points) beside its module."""
    info = os.path.join(root, f"{dist.replace('-', '_')}-0.3.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    with open(os.path.join(info, "entry_points.txt"), "w") as f:
        f.write("[okl.learners]\n" + "".join(f"{n} = {module}\n" for n in names))
    with open(os.path.join(root, f"{module}.py"), "w") as f:
        f.write(body)


def _run(args, root, cwd=None, **env):
    full = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), SRC]), **env}
    full.pop("OKL_PLUGINS", None)
    full.update(env)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=full,
                          cwd=cwd or root)


@pytest.fixture
def plugins_dir(tmp_path):
    _package(tmp_path, "okl-good-plugin", "good_plugin", ["klms-good"], GOOD.format(tag="good"))
    _package(tmp_path, "okl-bad-plugin", "bad_plugin", ["broken"], "raise RuntimeError('the plugin is broken')\n")
    return tmp_path


def test_entry_point_learner_runs_and_is_listed_with_its_package(plugins_dir):
    r = _run(["-m", "okl.cli", "run", "--learners", "klms-good,klms", "--runs", "1", "--max-rows", "200",
              "--quiet"], plugins_dir)
    assert r.returncode == 0, r.stderr
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in r.stdout.splitlines()
            if line.startswith("| klms")}
    # a subclass adding nothing: the very decisions of klms
    assert rows["klms-good"] == rows["klms"]
    # the broken plugin is one line naming its package and the error, and stops nothing
    failed = [line for line in r.stderr.splitlines() if "bad_plugin" in line]
    assert failed == ["okl: plugin okl-bad-plugin 0.3 (entry point broken = bad_plugin) not loaded: "
                      "RuntimeError: the plugin is broken"]
    r = _run(["-m", "okl.cli", "learners"], plugins_dir)
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("| klms-good "))
    assert "okl-good-plugin 0.3 (entry point klms-good = good_plugin)" in row
    assert "KLMS registered by a test plugin" in row
    assert next(line for line in r.stdout.splitlines() if line.startswith("| nogd ")).split("|")[3].strip() == "okl"
    assert "okl: plugin okl-bad-plugin 0.3" in r.stdout  # listed under the table too


def test_plugin_learner_model_file_loads_in_a_fresh_process(plugins_dir):
    code = textwrap.dedent('''
        import sys, numpy as np, okl
        from okl.runtime.base import Learner
        X, y = okl.load_dataset("german")
        if sys.argv[1] == "save":
            m = okl.make("klms-good", random_state=0)
            m.run(X[:300], y[:300])
            m.save(sys.argv[2])
            print(m.predict_one(X[400]))
        else:
            print(Learner.load(sys.argv[2]).predict_one(X[400]))
        ''')
    path = str(plugins_dir / "m.okl")
    saved = _run(["-c", code, "save", path], plugins_dir)
    assert saved.returncode == 0, saved.stderr
    loaded = _run(["-c", code, "load", path], plugins_dir)  # nothing imported the plugin before load
    assert loaded.returncode == 0, loaded.stderr
    assert float(loaded.stdout) == float(saved.stdout)


def test_okl_plugins_and_import_option(tmp_path):
    (tmp_path / "mod_learners.py").write_text(GOOD.format(tag="onpath"))
    (tmp_path / "mod_broken.py").write_text("import no_such_module_here\n")
    code = "import okl; print(okl.make('klms-onpath').name, 'klms-onpath' in okl.learners())"
    r = _run(["-c", code], tmp_path, OKL_PLUGINS="mod_broken,mod_learners")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["klms-onpath", "True"]
    assert r.stderr.strip().splitlines() == [
        "okl: plugin module mod_broken ($OKL_PLUGINS) not loaded: ModuleNotFoundError: "
        "No module named 'no_such_module_here'"]
    # without it the name is unknown
    r = _run(["-c", code], tmp_path)
    assert r.returncode == 1 and "unknown learner 'klms-onpath'" in r.stderr
    # --import: from the current directory (not on PYTHONPATH), for every command
    env = {"PYTHONPATH": SRC}
    full = {**os.environ, **env}
    full.pop("OKL_PLUGINS", None)
    r = subprocess.run([sys.executable, "-m", "okl.cli", "run", "--import", "mod_learners", "--learners",
                        "klms-onpath", "--runs", "1", "--max-rows", "100", "--quiet"], capture_output=True,
                       text=True, timeout=600, env=full, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "| klms-onpath " in r.stdout
    r = subprocess.run([sys.executable, "-m", "okl.cli", "learners", "--import", "mod_broken"], capture_output=True,
                       text=True, timeout=600, env=full, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip() == ("okl: error: --import mod_broken: ModuleNotFoundError: "
                                "No module named 'no_such_module_here'")


def test_sweep_workers_see_an_imported_learner(tmp_path):
    (tmp_path / "mod_learners.py").write_text(GOOD.format(tag="onpath"))
    r = _run(["-m", "okl.cli", "sweep", "--import", "mod_learners", "--datasets", "german", "--learners",
              "klms-onpath", "--runs", "2", "--max-rows", "100", "--workers", "2", "--backend", "processes",
              "--store", str(tmp_path / "s.sqlite"), "--quiet"], SRC, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 run now" in r.stderr
