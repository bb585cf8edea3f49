"""The command line as a user types it."""

import subprocess
import sys


from okl.cli import main


def test_okl_run_default_compares_learners_on_bundled_german(capsys):
    assert main(["run", "--runs", "3", "--learners", "nogd,fogd,linear", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "dataset german: T = 1000, d = 24" in out
    assert "majority-class rate: 30.00 %" in out
    # the input scale each learner fixed from its first rows is printed (okl.scaling)
    assert "input scale (okl.scaling; fixed from its first rows, no hindsight): symlog (first 50 rows): nogd, fogd, linear" in out
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
    assert "no hindsight): off: fogd, nogd" in out  # a given width is in the file's units: scale off
    assert csv.read_text().count("\n") == 3


def test_regression_dataset_reports_squared_loss(capsys, data_dir):
    assert main(["run", "--dataset", "cpusmall", "--learners", "nogd", "--runs", "1", "--max-rows", "2000",
                 "--data-dir", data_dir, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mean squared loss" in out and "running-mean predictor" in out
    # the 90 % intervals of a conformal head around the predictions: coverage and width columns
    header = next(line for line in out.splitlines() if line.startswith("| learner"))
    assert header.split("|")[6:8] == [" 90 % interval coverage % ", " mean width "]
    row = next(line for line in out.splitlines() if line.startswith("| nogd")).split("|")
    assert 88.0 <= float(row[6]) <= 92.0 and 0.0 < float(row[7]) < 1.0
    assert "intervals: okl.intervals.ConformalHead around each learner's predictions" in out


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


def test_long_run_reports_progress_in_rounds_with_the_same_decisions(data_dir):
    """A run long enough to be cut into pieces reports rows as it goes (not 0/1 until it ends),
    and the pieces give the decisions, counting and diagnostics of one run() over all rows."""
    import io

    import numpy as np
    import okl
    from okl.eval import Progress
    from okl.eval.progressive import run_in_pieces

    X, y = okl.load_dataset("svmguide1", data_dir)
    X, y = np.asarray(X, float)[:3000], np.asarray(y, float)[:3000]
    for name in ("nogd", "forks", "rbp"):
        whole = okl.make(name, budget=30, random_state=0).run(X, y)
        seen = []
        pieces = run_in_pieces(okl.make(name, budget=30, random_state=0), X, y, seen.append, rows=700)
        assert seen == [700, 700, 700, 700, 200]
        np.testing.assert_allclose(pieces.decisions, whole.decisions, rtol=0, atol=1e-9)
        assert pieces.counted_from == whole.counted_from
        assert pieces.mistake_rate == whole.mistake_rate
        assert pieces.diagnostics["sigma"] == whole.diagnostics["sigma"]
    out = io.StringIO()
    with Progress(2 * 3000, "nogd", stream=out, unit="rows") as bar:
        run_in_pieces(okl.make("nogd", random_state=0), X, y, bar.advance, rows=1000)
        run_in_pieces(okl.make("nogd", random_state=0), X, y, bar.advance, rows=1000)
    lines = out.getvalue().splitlines()
    # a non-terminal stream gets one line per 10 %: the start, then 1,000 rows at a time
    assert lines[0].split()[1] == "0/6,000" and lines[1].split()[1] == "1,000/6,000"
    assert lines[-1].split()[1] == "6,000/6,000" and "rows/s" in lines[-1]
    # the running loss on the line; off a terminal one summary line per learner (set_label)
    out = io.StringIO()
    with Progress(2 * 3000, "", stream=out, unit="rows") as bar:
        traces = {}
        for name in ("nogd", "linear"):
            bar.set_label(name)
            traces[name] = run_in_pieces(okl.make(name, random_state=0), X, y, bar.advance, rows=1000,
                                         on_piece=bar.add_trace)
            assert bar.line().endswith(f"mistakes {traces[name].mistake_rate:.2f}%")
    lines = out.getvalue().splitlines()
    assert [line.split()[:3] for line in lines] == [["nogd", "3,000", "rows"], ["linear", "3,000", "rows"]]
    for line, name in zip(lines, ("nogd", "linear")):
        assert f"mistakes {traces[name].mistake_rate:.2f}%; " in line
    assert lines[-1].endswith("6,000/6,000 done")


def test_run_plot_draws_curves_and_the_baseline(capsys, tmp_path):
    """--plot writes a PNG; its baseline is the running majority / running mean, computed here by
    hand on tiny streams, and each curve ends at the table's metric."""
    import numpy as np
    import okl
    from okl.cli.run import _baselines

    png = tmp_path / "g.png"
    assert main(["run", "--learners", "nogd,linear", "--runs", "2", "--plot", str(png), "--quiet"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    identity = lambda X, y, seed: (X, y)  # noqa: E731
    label, c, value = _baselines(identity, None, np.array([1.0, -1.0, -1.0, -1.0]), 1, 4, "classification")
    # +1 on the tie at t = 1 (right), +1 after one positive (wrong), +1 on the tie (wrong), -1 (right)
    np.testing.assert_allclose(c, [0.0, 50.0, 200.0 / 3.0, 50.0])
    assert value == 25.0  # the minority class's share
    label, c, value = _baselines(identity, None, np.array([1.0, 3.0]), 1, 2, "regression")
    np.testing.assert_allclose(c, [1.0, 2.5])  # guesses 0 then 1
    assert value == 2.5
    X, y = okl.load_dataset("german")
    for loss, target in (("hinge", y), ("squared", (y + 1.0) / 2.0)):
        t = okl.make("nogd", loss=loss, random_state=0).run(X, target)
        assert abs(t.cumulative_metric()[-1] - t.metric) < 1e-12


def test_run_marks_learners_above_the_baseline_of_the_same_streams(capsys, data_dir):
    """The baseline printed is computed on the runs' own streams (regression: the running mean's
    loss on the permuted, cut streams, not on the file), and rows above it carry '!' and are named
    under the table."""
    import numpy as np
    import okl
    from okl.data import permutation

    assert main(["run", "--learners", "rbp,nogd", "--runs", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert rows["rbp"].split("|")[2].strip().endswith("!") and not rows["nogd"].split("|")[2].strip().endswith("!")
    assert "! above the majority-class rate: rbp " in out
    assert main(["run", "--dataset", "cadata", "--learners", "linear", "--runs", "2", "--max-rows", "700",
                 "--data-dir", data_dir, "--quiet"]) == 0
    out = capsys.readouterr().out
    X, y = okl.load_dataset("cadata", data_dir)
    losses = []
    for seed in range(2):
        ys = y[permutation(len(y), seed)[:700]]
        mu = np.concatenate([[0.0], np.cumsum(ys)[:-1] / np.arange(1, len(ys))])
        losses.append(np.mean((mu - ys) ** 2))
    assert f"running-mean predictor: {np.mean(losses):.5f} (on the same streams" in out
