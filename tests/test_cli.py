"""The command line as a user types it."""

import subprocess
import sys

import pytest

from okl.cli import main


def test_okl_run_default_compares_learners_on_bundled_german(capsys):
    assert main(["run", "--runs", "3", "--learners", "nogd,fogd,linear", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "dataset german: T = 1000, d = 24" in out
    assert "majority-class rate: 30.00 %" in out
    lines = [line for line in out.splitlines() if line.startswith("| nogd") or line.startswith("| fogd")]
    assert len(lines) == 2
    nogd = next(line for line in lines if line.startswith("| nogd"))
    mean = float(nogd.split("|")[2].split("±")[0])
    assert 25.0 < mean < 35.0
    assert nogd.split("|")[3].strip()  # the authors' count is shown for a two-stage learner


def test_okl_run_on_shared_dataset_with_options(capsys, data_dir, tmp_path):
    csv = tmp_path / "t.csv"
    assert main(["run", "--dataset", "codrna", "--learners", "fogd,nogd", "--budget", "200", "--runs", "2",
                 "--max-rows", "3000", "--data-dir", data_dir, "--sigma", "1", "--csv", str(csv),
                 "--param", "eta=0.5", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "T = 3000" in out and "RBF(sigma=1)" in out and "budget B = 200" in out
    assert csv.read_text().count("\n") == 3


def test_regression_dataset_reports_squared_loss(capsys, data_dir):
    assert main(["run", "--dataset", "cpusmall", "--learners", "nogd", "--runs", "1", "--max-rows", "2000",
                 "--data-dir", data_dir, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean squared loss" in out and "running-mean predictor" in out


def test_errors_name_the_problem(capsys, tmp_path):
    assert main(["run", "--dataset", "nope", "--quiet"]) == 2
    assert "unknown dataset 'nope'; registered: " in capsys.readouterr().err
    assert main(["run", "--learners", "nogd,nope", "--quiet"]) == 2
    assert "unknown learner 'nope'" in capsys.readouterr().err
    assert main(["run", "--learners", "nogd", "--budget", "0", "--runs", "1", "--quiet"]) == 2
    assert "budget must be an integer in [1, inf], got 0" in capsys.readouterr().err
    assert main(["run", "--learners", "nogd", "--param", "zeta=1", "--quiet"]) == 2
    assert capsys.readouterr().err == "okl: error: no selected learner has hyperparameter 'zeta'\n"


def test_datasets_lists_registry_with_availability(capsys, data_dir):
    assert main(["datasets", "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert "| codrna " in out and "271617" in out and "yes" in out


def test_console_script_runs():
    r = subprocess.run([sys.executable, "-m", "okl.cli", "run", "--runs", "1", "--learners", "linear"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "| linear" in r.stdout
    assert "linear" in r.stderr  # the progress line
