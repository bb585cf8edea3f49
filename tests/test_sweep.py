"""Sweeps: grid parsing, cells, the results store (resume, crash safety, foreign files), backends, report."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from okl import RBF, make
from okl.cli import main as cli_main
from okl.data import load_dataset, permutation
from okl.eval.backends import DaskBackend, ProcessBackend, SerialBackend, make_backend
from okl.eval.grid import parse_grid, parse_values
from okl.eval.report import group_rows, report
from okl.eval.store import CellKey, CellResult, ResultStore, StoreError
from okl.eval.sweep import build_cells, curve_rounds, run_cell, run_sweep

REPO = Path(__file__).resolve().parents[1]


def _numbers(store: ResultStore) -> dict:
    """Everything a backend must not change: key -> metrics, diagnostics and curve (no time, no worker)."""
    out = {}
    for r in store.rows(curves=True):
        key = (r["dataset"], r["stream"], r["learner"], r["params"], r["seed"], r["okl_version"])
        out[key] = (r["task"], r["metric"], r["mistake_rate"], r["authors_rate"], r["mse"], r["n_rounds"],
                    r["diagnostics"], r["curve_rounds"].tolist(), r["curve_values"].tolist())
    return out


# ---- grids and cells ----------------------------------------------------------------------

def test_grid_values():
    assert parse_values("1e-5,1e-4,...,1") == [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0]
    assert parse_values("100,150,...,500") == [100, 150, 200, 250, 300, 350, 400, 450, 500]
    assert parse_values("0.1,0.2,...,0.5") == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert parse_values("2^-5:0.5:7") == [2.0 ** (e / 2) for e in range(-10, 15)]
    assert parse_values("0:0.25:1") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_values("auto,1.5,3") == ["auto", 1.5, 3]
    assert parse_grid(["eta=0.1,0.2", "update-counter=rounds"]) == {"eta": [0.1, 0.2], "update_counter": ["rounds"]}
    for bad in ("1,...,3", "100,150,...,480", "1,,2", "1:0:2"):
        with pytest.raises(ValueError):
            parse_values(bad)


def test_cells_state_every_default_and_cross_only_accepted_keys():
    cells = build_cells(["german", "german-2"], ["nogd", "rbp"], {"eta": [0.1, 0.5], "budget": [50, 100]},
                        seeds=[0, 1, 2], okl_version="t")
    # nogd: 2 etas x 2 budgets; rbp: 2 budgets (no eta); x 2 datasets x 3 seeds
    assert len(cells) == (4 + 2) * 2 * 3 == len(set(cells))
    p = [c for c in cells if c.learner == "rbp"][0].param_dict
    assert p == {"budget": 50}  # no sigma: the learner's own from its first rows, as okl run
    (c,) = build_cells(["german"], ["rbp"], {"sigma": ["dataset"]}, seeds=[0], okl_version="t")
    assert c.param_dict == {"budget": 100, "sigma": 1.6121048733463141}  # the recorded width, asked for
    (c,) = build_cells(["german"], ["rbp"], seeds=[0], okl_version="t", width="dataset")
    assert c.param_dict == {"budget": 100, "sigma": 1.6121048733463141}
    adv = [c for c in cells if c.stream != "permutation"]
    assert {c.stream for c in adv} == {"adversarial:kb=500,kr=20"} and {c.dataset for c in adv} == {"german"}
    with pytest.raises(ValueError, match="no selected learner"):
        build_cells(["german"], ["rbp"], {"eta": [0.1]})
    with pytest.raises(ValueError, match="eta"):
        build_cells(["german"], ["nogd"], {"eta": [-1.0]})  # invalid values fail before any work
    # T > 10,000 -> B = 200
    (c,) = build_cells(["codrna"], ["nogd"], seeds=[0], okl_version="t")
    assert c.param_dict["budget"] == 200


def test_sweep_and_run_choose_the_same_width():
    """One width rule: a sweep cell with no sigma and okl run's evaluate() (the learner's own width
    from its first rows) give the same widths and mistake rates on the same streams."""
    from okl.eval import evaluate

    cells = build_cells(["german"], ["nogd"], seeds=[0, 1])
    results = [run_cell(c) for c in cells]
    X, y = load_dataset("german")
    summary = evaluate("nogd", X, y, runs=2, horizon=False)
    assert [r.metric for r in results] == summary.metric.tolist()
    assert [t.diagnostics["sigma"] for t in summary.traces][0] != pytest.approx(1.6121048733463141)


def test_cell_equals_a_direct_run_and_curve_is_cumulative():
    (cell,) = build_cells(["german"], ["nogd"], {"eta": [0.3]}, seeds=[4])
    res = run_cell(cell)
    X, y = load_dataset("german")
    order = permutation(1000, 4)
    assert "sigma" not in cell.param_dict
    trace = make("nogd", budget=100, eta=0.3, loss="hinge", random_state=4).run(X[order], y[order])
    assert res.mistake_rate == trace.mistake_rate == res.metric
    assert res.authors_rate == trace.authors_mistake_rate is not None
    rounds = curve_rounds(1000)
    assert rounds[0] == 1 and rounds[-1] == 1000 and 190 <= len(rounds) <= 200
    np.testing.assert_array_equal(res.curve_rounds, rounds)
    np.testing.assert_allclose(res.curve_values, trace.cumulative_mistake_rate()[rounds - 1], rtol=1e-12)


def test_sigma_auto_uses_the_first_rounds_of_the_cells_stream():
    from okl.data.width import select_sigma

    (cell,) = build_cells(["german"], ["nogd"], {"sigma": ["auto"]}, seeds=[1], stream="permutation:rows=200")
    res = run_cell(cell)
    X, y = load_dataset("german")
    order = permutation(1000, 1)[:200]
    assert res.diagnostics["sigma"] == pytest.approx(select_sigma(X[order], y[order]), rel=1e-12)


# ---- the store ----------------------------------------------------------------------------

def test_store_keeps_one_row_per_key_and_reopens(tmp_path):
    path = tmp_path / "s.sqlite"
    key = CellKey.make("german", "permutation", "nogd", {"budget": 100, "eta": 0.2}, 0, okl_version="t")
    res = CellResult("classification", 30.0, 0.5, 1000, 30.0, 25.0, None, {"sv": 100},
                     np.array([1, 1000]), np.array([0.0, 30.0]))
    with ResultStore(path) as s:
        assert s.add(key, res) and not s.add(key, res)
    with ResultStore(path) as s:
        assert len(s) == 1 and s.done_keys() == {key}
        got = s.get(key)
        assert got.same_numbers(res) and got.diagnostics == {"sv": 100}
        assert s.meta()["format"] == "okl-results"
        assert s._con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_foreign_damaged_and_truncated_stores_give_clear_errors(tmp_path, capsys):
    text = tmp_path / "results.csv"
    text.write_text("dataset,learner\ngerman,nogd\n")
    with pytest.raises(StoreError, match="not an SQLite database"):
        ResultStore(text)
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE cells (a, b)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="another program"):
        ResultStore(other)
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="empty file"):
        ResultStore(empty)
    # a real store, truncated
    good = tmp_path / "good.sqlite"
    with ResultStore(good) as s:
        blob = CellResult("classification", 1.0, 0.1, 10, curve_rounds=np.arange(200),
                          curve_values=np.linspace(0, 1, 200))
        for seed in range(40):
            s.add(CellKey.make("german", "permutation", "nogd", {"budget": 100}, seed, "t"), blob)
        s._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = good.read_bytes()
    assert len(data) > 4096
    for cut in (len(data) // 2, 60):
        bad = tmp_path / f"cut{cut}.sqlite"
        bad.write_bytes(data[:cut])
        with pytest.raises(StoreError, match="truncated"):
            ResultStore(bad)
    # a page overwritten with garbage
    garbled = bytearray(data)
    garbled[len(data) // 2: len(data) // 2 + 3000] = np.random.default_rng(0).bytes(3000)  # fixed: no flaky draw
    bad = tmp_path / "garbled.sqlite"
    bad.write_bytes(bytes(garbled))
    with pytest.raises(StoreError):
        with ResultStore(bad) as s:
            s.rows()
    # the command line: a message, exit code 2, no traceback
    assert cli_main(["report", str(other)]) == 2
    err = capsys.readouterr().err
    assert "not an okl results store" in err and "Traceback" not in err


# ---- backends -----------------------------------------------------------------------------

def _small_cells():
    return build_cells(["german", "german-1"], ["bogd", "nogd"], {"eta": [0.2, 0.5]}, seeds=[0, 1],
                       stream="permutation:rows=300")


def test_local_processes_and_dask_localcluster_equal_the_serial_backend(tmp_path):
    cells = _small_cells()
    assert len(cells) == 16
    results = {}
    backends = {"serial": SerialBackend(), "processes": ProcessBackend(2)}
    for name, backend in backends.items():
        with ResultStore(tmp_path / f"{name}.sqlite") as store:
            report_ = run_sweep(cells, store, backend, progress=False)
            assert report_.ran == 16 and not report_.failures
            results[name] = _numbers(store)
    dask = DaskBackend(workers=2)
    try:
        assert len(dask.client.scheduler_info()["workers"]) == 2
        with ResultStore(tmp_path / "dask.sqlite") as store:
            report_ = run_sweep(cells, store, dask, progress=False)
            assert report_.ran == 16 and not report_.failures
            workers = {r["worker"] for r in store.rows()}
            results["dask"] = _numbers(store)
    finally:
        dask.close()
    assert len(workers) == 2 and all(str(os.getpid()) not in w for w in workers)  # ran on both workers
    assert len(results["serial"]) == 16
    assert results["processes"] == results["serial"]
    assert results["dask"] == results["serial"]


def test_make_backend_choices():
    assert isinstance(make_backend("auto"), SerialBackend)
    assert isinstance(make_backend("processes", 2), ProcessBackend)
    with pytest.raises(ValueError, match="dask backend"):
        make_backend("processes", scheduler="tcp://localhost:1")


def test_failing_cell_is_reported_and_not_stored(tmp_path):
    good = build_cells(["german"], ["bogd"], seeds=[0], stream="permutation:rows=50")
    bad = CellKey.make("german", "permutation:rows=50", "bogd", {"budget": 100, "eta": -1.0}, 0)
    with ResultStore(tmp_path / "f.sqlite") as store:
        rep = run_sweep(good + [bad], store, progress=False, stream=open(os.devnull, "w"))
        assert rep.ran == 1 and [k for k, _ in rep.failures] == [bad] and "eta" in rep.failures[0][1]
        assert store.done_keys() == set(good)


# ---- crash safety -------------------------------------------------------------------------

SWEEP_ARGS = ["sweep", "--datasets", "german", "--learners", "nogd", "--grid", "eta=0.05,0.1,...,0.5",
              "--runs", "3", "--quiet", "--backend", "serial"]


def test_sigkill_then_rerun_completes_without_lost_or_duplicated_cells(tmp_path):
    path = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "okl.cli", *SWEEP_ARGS, "--store", str(path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    count = 0
    deadline = time.time() + 120
    try:
        while time.time() < deadline and proc.poll() is None:
            if path.exists():
                try:
                    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
                    count = con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
                    con.close()
                except sqlite3.OperationalError:
                    count = 0
                if count >= 3:
                    break
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed"
    with ResultStore(path) as store:  # opens cleanly (quick_check) after the kill
        before = {(r["learner"], r["params"], r["seed"]): r["finished_at"] for r in store.rows()}
    assert 3 <= len(before) < 30
    # rerun the same command: only the missing cells run
    assert cli_main([*SWEEP_ARGS, "--store", str(path)]) == 0
    with ResultStore(path) as store:
        rows = store.rows()
        keys = [(r["learner"], r["params"], r["seed"]) for r in rows]
        assert len(rows) == 30 and len(set(keys)) == 30  # 10 etas x 3 seeds, none lost or twice
        assert all({k: r["finished_at"] for k, r in zip(keys, rows)}[k] == t for k, t in before.items())
        assert store._con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # and the stored numbers are the cells' own
        cells = {(c.learner, c.params, c.seed): c for c in build_cells(
            ["german"], ["nogd"], {"eta": parse_values("0.05,0.1,...,0.5")}, seeds=range(3))}
        for r in rows[:: 7]:
            assert r["metric"] == run_cell(cells[(r["learner"], r["params"], r["seed"])]).metric


# ---- report -------------------------------------------------------------------------------

def test_report_tables_and_figures(tmp_path):
    cells = build_cells(["german"], ["bogd", "nogd"], {"budget": [50, 100]}, seeds=[0, 1, 2],
                        stream="permutation:rows=200")
    with ResultStore(tmp_path / "r.sqlite") as store:
        run_sweep(cells, store, progress=False)
        text, files = report(store, tmp_path / "rep")
        groups = group_rows(store.rows(curves=True))
    assert len(groups) == 4 and all(g.runs == 3 for g in groups)
    g = [g for g in groups if g.learner == "nogd" and g.param_dict["budget"] == 50][0]
    line = [ln for ln in text.splitlines() if ln.startswith("| nogd") and "| 50 " in ln][0]
    assert f"{np.mean(g.metric):.2f} ± {np.std(g.metric):.2f}" in line
    names = sorted(f.name for f in files)
    assert names == ["curves_german_permutation_rows_200.png", "report.csv", "report.md",
                     "tradeoff_german_permutation_rows_200.png"]
    for f in files:
        if f.suffix == ".png":
            assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((tmp_path / "rep" / "report.csv").read_text().splitlines()) == 5


def test_report_sorts_numbers_shows_defaults_and_draws_the_baseline(tmp_path, monkeypatch):
    """Budgets in numeric order (50, 100, 200, not as text), a value a group left out shown as the
    learner's default, "n/a" where the learner does not take it, and the curves' baseline: the
    running majority vote on the cells' own streams."""
    from okl.cli.run import _baselines
    from okl.data.adversarial import parse_stream
    from okl.eval import report as report_module

    cells = build_cells(["german"], ["nogd"], {"budget": [200, 50, 100], "eta": [0.5]}, seeds=[0, 1],
                        stream="permutation:rows=150")
    cells += build_cells(["german"], ["nogd", "linear"], {}, seeds=[0, 1], stream="permutation:rows=150")
    drawn = {}
    real = report_module._plot_curves

    def spy(path, title, groups, baseline=None):
        drawn["baseline"] = baseline
        return real(path, title, groups, baseline)

    monkeypatch.setattr(report_module, "_plot_curves", spy)
    with ResultStore(tmp_path / "r.sqlite") as store:
        run_sweep(cells, store, progress=False)
        text, _ = report(store, tmp_path / "rep")
    rows = [[c.strip() for c in ln.split("|")[1:4]] for ln in text.splitlines() if ln.startswith(("| nogd", "| linear"))]
    from okl.learners import LinearOGD

    linear_eta = f"{LinearOGD().eta:.4g} (default)"
    assert rows[:5] == [["linear", "n/a", linear_eta], ["nogd", "50", "0.5"], ["nogd", "100", "0.5"],
                        ["nogd", "100", "0.2 (default)"], ["nogd", "200", "0.5"]]
    label, rounds, values = drawn["baseline"]
    assert label == "majority so far"
    X, y = load_dataset("german")
    _, curve, _ = _baselines(parse_stream("permutation:rows=150"), X, y, 2, 150, "classification")
    np.testing.assert_allclose(values, curve[np.asarray(rounds) - 1])


def test_sweep_over_a_users_data_file(tmp_path, capsys):
    """okl sweep --datasets PATH: cells keyed by absolute path and content hash, learners with their
    library defaults (width from the stream), numbers equal to a direct run on the loaded file; a
    rerun skips them, an edited file gets new cells, and a cell whose file changed after planning
    stops with a clear error."""
    from sklearn.datasets import dump_svmlight_file

    from okl.data import load_file
    from okl.eval.sweep import _file_data, file_dataset

    X, y = load_dataset("german")
    path = tmp_path / "mine.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    store = tmp_path / "s.sqlite"
    argv = ["sweep", "--datasets", str(path), "--learners", "nogd,linear", "--runs", "2", "--store", str(store),
            "--quiet"]
    assert cli_main(argv) == 0
    name = file_dataset(path)
    assert name.startswith(f"file:{path}#") and len(name.rsplit("#", 1)[1]) == 16
    data = load_file(path)
    with ResultStore(str(store)) as s:
        rows = {(r["learner"], r["seed"]): r for r in s.rows()}
    assert {r["dataset"] for r in rows.values()} == {name} and len(rows) == 4
    for (learner, seed), r in rows.items():
        p = permutation(len(data.y), seed)
        direct = make(learner, random_state=seed).run(data.X[p], data.y[p])
        assert r["metric"] == pytest.approx(direct.mistake_rate, abs=1e-12)
        assert "sigma" not in r["params"]  # the learner chose it from the stream
    capsys.readouterr()
    assert cli_main(argv[:-1] + ["--dry-run"]) == 0
    assert "4 already in" in capsys.readouterr().err
    dump_svmlight_file(X[:500], y[:500], str(path), zero_based=False)  # edited: new content, new cells
    assert cli_main(argv[:-1] + ["--dry-run"]) == 0
    assert "0 already in" in capsys.readouterr().err
    _file_data.cache_clear()
    with pytest.raises(ValueError, match="changed after this sweep was planned"):
        _file_data(name)
