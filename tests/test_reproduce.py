"""``okl reproduce`` table experiments on tiny configurations: outputs, paper numbers, resume."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from okl.cli import main as cli_main
from okl.eval.store import ResultStore
from okl.experiments import ExperimentContext, experiments
from okl.experiments.tables import FORKS_T2, SKEGD_ADV
from okl.runtime.hyperparameters import param_names

PNG = b"\x89PNG\r\n\x1a\n"


def test_table_experiments_are_registered():
    ids = set(experiments())
    assert {"forks-table2", "forks-adversarial", "skegd-table3", "skegd-adversarial", "forks-kuairec"} <= ids
    # published numbers transcribed from ALGORITHMS.md 9.1 / 9.5
    assert FORKS_T2[("FORKS", "codrna")] == (12.795, 0.360, 0.918)
    assert SKEGD_ADV[("SkeGD (theta=0.001)", "german-2")] == (6.835, 0.136, 1.856)


def test_quick_reproduce_writes_markdown_csv_png_and_resumes(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli_main(["reproduce", "forks-adversarial", "--quick", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    md, csv_path, png = out / "forks-adversarial.md", out / "forks-adversarial.csv", out / "forks-adversarial.png"
    assert md.read_text().strip() == printed.strip()
    assert png.read_bytes()[:8] == PNG
    rows = list(csv.DictReader(csv_path.open()))
    assert [(r["dataset"], r["algorithm"]) for r in rows] == [("german-1", "BOGD"), ("german-1", "FORKS")]
    forks = rows[1]
    assert float(forks["paper_mean"]) == 5.142 and float(forks["paper_std"]) == 0.215
    assert forks["compared_count"] == "authors"  # FORKS's table uses the authors' count for two-stage learners
    # our numbers are the store's, mean over the 2 seeds
    with ResultStore(out / "forks-adversarial.sqlite") as store:
        got = [r for r in store.rows() if r["learner"] == "forks"]
    assert len(got) == 2 and {r["seed"] for r in got} == {0, 1}
    assert float(forks["mistake_mean"]) == pytest.approx(np.mean([r["metric"] for r in got]), rel=1e-12)
    assert float(forks["authors_mean"]) == pytest.approx(np.mean([r["authors_rate"] for r in got]), rel=1e-12)
    flag = abs(float(forks["authors_mean"]) - 5.142) > 2 * 0.215
    assert (forks["flag"] == "outside") == flag
    text = md.read_text()
    assert "5.142 ± 0.215" in text and "k_b = 500 blocks x k_r = 10" in text and "sigma" in text
    # a second run finds every cell in the store
    ctx = ExperimentContext(runs=20, out_dir=out, progress=False, quick=True)
    result = experiments()["forks-adversarial"].func(ctx)
    assert "4 cells: 4 already in the store, 0 run now" in result.markdown


def _kuairec_writer():
    spec = importlib.util.spec_from_file_location("kuairec_files", Path(__file__).with_name("test_kuairec.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write_kuairec


def test_forks_kuairec_quick_on_a_mini_file_set(tmp_path, capsys):
    _kuairec_writer()(tmp_path / "kr", n_rows=400, seed=1)
    out = tmp_path / "out"
    assert cli_main(["reproduce", "forks-kuairec", "--quick", "--quiet", "--data-dir", str(tmp_path / "kr"),
                     "--out", str(out)]) == 0
    assert (out / "forks-kuairec.png").read_bytes()[:8] == PNG
    rows = list(csv.DictReader((out / "forks-kuairec.csv").open()))
    assert {(r["learner"], r["loss"], r["budget"]) for r in rows} == {
        (m, loss, b) for m in ("nogd", "forks") for loss in ("hinge", "squared_hinge") for b in ("100", "150")}
    assert "T = 398 rounds in timestamp order" in (out / "forks-kuairec.md").read_text()


def test_forks_kuairec_without_files_names_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OKL_DATA", raising=False)
    assert cli_main(["reproduce", "forks-kuairec", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "small_matrix.csv" in err and "item_daily_features.csv" in err and "Traceback" not in err


def test_reproduce_id_help_lists_the_experiments_param_keys(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main(["reproduce", "forks-adversarial", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--param NAME=VALUE keys of forks-adversarial" in out
    for key in ("store", "workers", "backend", "sigma", "datasets", "learners", "drop_last", "max_rows", "theta"):
        assert f"\n  {key} " in out, key
    with pytest.raises(SystemExit):
        cli_main(["reproduce", "--help"])
    assert "keys of" not in capsys.readouterr().out
    assert all(isinstance(e.params, dict) for e in experiments().values())
    assert "grid" in experiments()["opfes-table2"].params and "sweep" in experiments()["skegd-table2"].params


# ---- --protocol published (issue 27) ---------------------------------------------------------------

def test_published_skegd_table3_streams_raw_features_at_the_toolboxs_width(tmp_path, data_dir, capsys):
    """The published protocol streams german as its file stores it ([-1, 1], not [0, 1]), runs the
    LSOKL baselines at sigma = 8 and BOGD with lambda = 1/T^2; a stored cell is a direct learner run."""
    import okl
    from okl.data import load_dataset, permutation
    from okl.runtime.base import learner_class

    out = tmp_path / "pub"
    assert cli_main(["reproduce", "skegd-table3", "--protocol", "published", "--quick", "--quiet", "--out",
                     str(out), "--data-dir", data_dir, "--param", "learners=bpa-s,bogd,skegd"]) == 0
    md = (out / "skegd-table3-published.md").read_text()
    assert md.strip() == capsys.readouterr().out.strip()
    assert "protocol: published" in md.splitlines()[0]
    with ResultStore(out / "skegd-table3-published.sqlite") as store:
        rows = list(store.rows())
    assert {r["dataset"] for r in rows} == {"german:raw"}
    params = {r["learner"]: __import__("json").loads(r["params"]) for r in rows}
    assert params["bpa-s"]["sigma"] == 8.0 and params["bpa-s"]["budget"] == 100
    assert params["bogd"]["sigma"] == 8.0 and params["bogd"]["decay"] == "horizon"
    assert params["skegd"]["sigma"] == "auto"
    X, y = load_dataset("german:raw", data_dir)
    assert X.min() == -1.0  # the file's values: okl's [0, 1] scaling would make the minimum 0
    order = permutation(len(y), 1)[:300]
    for name in ("bpa-s", "bogd"):
        extra = {k: v for k, v in learner_class(name).paper_params(100).items()}
        direct = okl.make(name, budget=100, kernel=okl.RBF(sigma=8.0), random_state=1, horizon=300, **extra) \
            if "horizon" in param_names(learner_class(name)) else \
            okl.make(name, budget=100, kernel=okl.RBF(sigma=8.0), random_state=1, **extra)
        stored = [r["metric"] for r in rows if r["learner"] == name and r["seed"] == 1]
        assert stored == [pytest.approx(direct.run(X[order], y[order]).metric, abs=1e-12)]
    # the okl protocol of the same table streams [0, 1] features at the recorded width
    assert cli_main(["reproduce", "skegd-table3", "--quick", "--quiet", "--out", str(out), "--data-dir", data_dir,
                     "--param", "learners=bpa-s"]) == 0
    with ResultStore(out / "skegd-table3.sqlite") as store:
        okl_rows = list(store.rows())
    assert {r["dataset"] for r in okl_rows} == {"german"}
    assert __import__("json").loads(okl_rows[0]["params"])["sigma"] == pytest.approx(1.6121, abs=1e-3)


def test_published_forks_table2_is_the_forks_codes_driver():
    """codrna = the training file, raw; baselines at B = 100 and sigma = 8 whatever T; SkeGD / FORKS at
    the paper's budget and the driver's sigma = 50."""
    from okl.experiments.tables import FORKS_TABLE2_PUBLISHED as spec

    assert spec.bases["codrna"] == "codrna-train:raw" and spec.bases["spambase"] == "spambase:raw"
    rows = {r.label: r for r in spec.rows}
    assert spec.row_setting(rows["BOGD"], 59535) == {"sigma": 8.0, "budget": 100}
    assert spec.row_setting(rows["PROS-N-KONS"], 59535) == {"sigma": 8.0, "budget": 100}
    assert spec.row_setting(rows["FORKS"], 59535) == {"sigma": 50.0, "budget": 200}
    assert spec.row_setting(rows["SkeGD"], 1000) == {"sigma": 50.0, "budget": 100}


def test_a_protocol_an_experiment_lacks_is_refused(capsys):
    assert cli_main(["reproduce", "skegd-adversarial", "--protocol", "published", "--quick", "--quiet"]) != 0
    assert "implements: okl" in capsys.readouterr().err


def test_published_pnk_table2_reads_ijcnn1_unscaled(tmp_path, data_dir):
    """pnk-table2 --protocol published: FOGD's stored error is a direct run on ijcnn1 as LIBSVM stores it."""
    import okl
    from okl.data import load_dataset, permutation

    out = tmp_path / "pnk"
    assert cli_main(["reproduce", "pnk-table2", "--protocol", "published", "--quick", "--quiet", "--runs", "1",
                     "--out", str(out), "--data-dir", data_dir, "--param", "learners=FOGD"]) == 0
    assert "protocol: published" in (out / "pnk-table2-published.md").read_text().splitlines()[0]
    rows = list(csv.DictReader((out / "pnk-table2-published.csv").open()))
    X, y = load_dataset("ijcnn1:raw", data_dir)
    order = permutation(len(y), 0)[:400]
    extra = {"scale": None} if "scale" in param_names(okl.learner_class("fogd")) else {}
    direct = okl.make("fogd", budget=100, loss="hinge", kernel=okl.RBF(sigma=8.0), center_targets=False,
                      random_state=0, **extra).run(X[order], y[order])
    assert float(rows[0]["error_rate"]) == pytest.approx(direct.metric, abs=1e-12)
    Xs, _ = load_dataset("ijcnn1", data_dir)
    assert not np.allclose(X[:50], Xs[:50])  # the okl protocol's features differ


def test_table_cells_keep_the_papers_features_without_an_input_scale(tmp_path, data_dir):
    """paper_params' scale=None survives into the stored cell and the learner it builds: the linear
    reference (no kernel, so scale="auto" would rescale it) sees the table's features as loaded."""
    import json

    import okl
    from okl.data import load_dataset, permutation
    from okl.eval.sweep import _build_learner

    out = tmp_path / "lin"
    assert cli_main(["reproduce", "skegd-table3", "--protocol", "published", "--quick", "--quiet", "--out",
                     str(out), "--data-dir", data_dir, "--param", "learners=linear"]) == 0
    with ResultStore(out / "skegd-table3-published.sqlite") as store:
        rows = list(store.rows())
    params = json.loads(rows[0]["params"])
    if "scale" not in param_names(okl.learner_class("linear")):
        return  # before the input scale existed there was nothing to turn off
    assert params["scale"] is None and _build_learner("linear", 300, 0, params).scale is None
    X, y = load_dataset("german:raw", data_dir)
    order = permutation(len(y), 0)[:300]
    direct = okl.make("linear", random_state=0, loss="hinge", scale=None).run(X[order], y[order])
    assert [r["metric"] for r in rows if r["seed"] == 0] == [pytest.approx(direct.metric, abs=1e-12)]


def test_published_forks_table2_runs_the_slow_pnk_cell_on_its_stated_prefix(tmp_path, capsys, monkeypatch,
                                                                            data_dir):
    """forks-table2 --protocol published is one command: PROS-N-KONS on the raw cod-rna training file runs
    on the first PNK_CODRNA_PREFIX rounds of each permutation, marked and explained; the other rows run
    the whole file. The cell is what a direct run on that prefix makes."""
    import okl.experiments.tables as tables
    from okl.data import load_dataset
    from okl.eval import evaluate
    from okl.runtime.base import learner_class

    monkeypatch.setattr(tables, "PNK_CODRNA_PREFIX", 400)
    out = tmp_path / "out"
    assert cli_main(["reproduce", "forks-table2", "--protocol", "published", "--runs", "1", "--quiet",
                     "--data-dir", data_dir, "--out", str(out), "--param", "datasets=codrna",
                     "--param", "learners=pros-n-kons,rbp"]) == 0
    text = capsys.readouterr().out
    assert "PROS-N-KONS on codrna: the first 400 rounds of each permutation (of 59,535; horizon = 400)" in text
    rows = {r["algorithm"]: r for r in csv.DictReader((out / "forks-table2-published.csv").open())}
    assert rows["PROS-N-KONS"]["prefix_rounds"] == "400" and rows["RBP"]["prefix_rounds"] == ""
    pnk_line = next(l for l in text.splitlines() if "| PROS-N-KONS" in l)
    assert "† (400 rounds)" in pnk_line
    assert "†" not in next(l for l in text.splitlines() if "| RBP" in l)
    X, y = load_dataset("codrna-train:raw", data_dir)
    ref = evaluate("pros-n-kons", X, y, runs=1, sigma=8.0, max_rows=400,
                   params={**learner_class("pros-n-kons").paper_params(100), "loss": "hinge"})
    assert float(rows["PROS-N-KONS"]["mistake_mean"]) == pytest.approx(float(ref.metric.mean()), rel=1e-12)


def test_a_learner_that_is_not_a_row_of_a_paper_table_points_to_okl_sweep(tmp_path, capsys):
    """A paper table's rows are its published learners: another registered learner (a plugin's too)
    is refused before any work with the sweep that compares it on the table's datasets."""
    assert cli_main(["reproduce", "forks-table2", "--quick", "--quiet", "--out", str(tmp_path / "o"),
                     "--param", "learners=nogd,klms"]) == 2
    err = capsys.readouterr().err
    assert "learners: ['klms'] are not rows of this table (its rows: RBP," in err
    assert "use okl sweep --datasets german --learners klms --store FILE, then okl report FILE" in err
