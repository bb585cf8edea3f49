"""matplotlib is optional (okl[plot]): okl imports and runs without it, and a figure asked for without it
is refused with what to install, before any work."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from okl.cli import main
from okl.plotting import MISSING, PlotDependencyError, pyplot


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib unimportable in this process (a None entry in sys.modules makes ``import`` fail)."""
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_pooch_required_and_matplotlib_only_in_extras():
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("pooch") for r in project["dependencies"])
    assert not any(r.startswith("matplotlib") for r in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(r.startswith("matplotlib") for r in extras["plot"]) and any(r.startswith("matplotlib")
                                                                          for r in extras["test"])


def test_a_figure_without_matplotlib_names_what_to_install(no_matplotlib, tmp_path, capsys):
    with pytest.raises(PlotDependencyError, match=r"pip install 'okl\[plot\]'"):
        pyplot()
    base = ["run", "--learners", "linear", "--runs", "1", "--max-rows", "100", "--quiet"]
    plot = tmp_path / "p.png"
    assert main(base + ["--plot", str(plot)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"okl: error: {MISSING}" and not plot.exists()
    assert main(base) == 0  # the same run without a figure
    assert "| linear " in capsys.readouterr().out


def test_import_and_run_never_import_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import okl; from okl.cli import main\n"
            "X, y = okl.load_dataset('german'); r = okl.make('nogd', random_state=0).run(X[:300], y[:300])\n"
            "assert main(['run', '--learners', 'linear', '--runs', '1', '--max-rows', '100', '--quiet']) == 0\n"
            "print('ok', sorted(m for m, v in sys.modules.items() if m.startswith('matplotlib') and v is not None))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().endswith("ok []")
