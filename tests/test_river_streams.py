"""okl reproduce river-streams: River's progressive_val_score over okl and River models."""

import csv

import pytest

pytest.importorskip("river")

from okl.experiments import ExperimentContext, experiments  # noqa: E402


def test_river_streams_quick_writes_what_it_prints(tmp_path):
    from river import datasets, evaluate, metrics
    from okl.river import OKLRiverClassifier

    ctx = ExperimentContext(out_dir=tmp_path, progress=False, quick=True,
                            options={"models": "okl nogd,River HAT", "events": "200"})
    result = experiments()["river-streams"].func(ctx)
    md = (tmp_path / "river-streams.md").read_text()
    assert md.strip() == result.markdown.strip()
    assert (tmp_path / "river-streams.png").stat().st_size > 10000
    rows = list(csv.DictReader(open(tmp_path / "river-streams.csv")))
    assert {(r["stream"], r["model"]) for r in rows} == {
        (s, m) for s in ("Phishing", "TrumpApproval") for m in ("okl nogd", "River HAT")}
    # the cell is River's own progressive_val_score of the adapter on the same 200 events
    want = 100 * evaluate.progressive_val_score(list(datasets.Phishing())[:200],
                                                OKLRiverClassifier(learner="nogd", seed=0), metrics.Accuracy()).get()
    cell = next(r for r in rows if r["stream"] == "Phishing" and r["model"] == "okl nogd")
    assert float(cell["metric"]) == pytest.approx(want, abs=1e-6)
    assert f"{want:.2f}" in md and "Phishing (200)" in md


def test_river_streams_refuses_unknown_names(tmp_path):
    ctx = ExperimentContext(out_dir=tmp_path, progress=False, quick=True, options={"streams": "Phishng"})
    with pytest.raises(ValueError, match="unknown stream 'Phishng'"):
        experiments()["river-streams"].func(ctx)
