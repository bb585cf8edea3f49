"""The literature's series as data sets of the command line: ``okl run --dataset lorenz`` embeds
the series in time order, ``okl datasets`` lists them."""

import numpy as np
import pytest

from okl.cli import main


def test_okl_run_embeds_a_series_in_time_order(capsys, data_dir):
    from okl.data.series import embed, load_series
    from okl.runtime.base import make

    assert main(["run", "--dataset", "lorenz", "--learners", "linear", "--runs", "1", "--max-rows", "500",
                 "--data-dir", data_dir, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "dataset lorenz: T = 500, d = 6, regression; stream identity" in out
    assert "features: the series' embedded values as stored" in out
    row = next(line for line in out.splitlines() if line.startswith("| linear"))
    # the same number as the learner run over the embedding's first 500 rows in time order
    X, y = embed(load_series("lorenz", data_dir), 6)
    m, loss = make("linear", loss="squared", random_state=0), []
    for x, t in zip(X[:500], y[:500]):
        loss.append((m.predict_one(x) - t) ** 2)
        m.learn_one(x, t)
    assert float(row.split("|")[2].split("±")[0]) == pytest.approx(np.mean(loss), rel=1e-4)


def test_okl_run_refuses_a_permuted_series(capsys, data_dir):
    assert main(["run", "--dataset", "mg30", "--stream", "permutation", "--data-dir", data_dir, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--stream permutation: the series 'mg30' is learned in time order" in err


def test_okl_datasets_lists_the_series(capsys, data_dir):
    assert main(["datasets", "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    lorenz = next(line for line in out.splitlines() if line.startswith("| lorenz"))
    assert "series" in lorenz and "| 6 " in lorenz and "yes" in lorenz
    assert main(["datasets", "santafe", "--data-dir", data_dir]) == 0
    assert "embedding order 6" in capsys.readouterr().out
