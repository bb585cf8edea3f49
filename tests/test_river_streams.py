"""okl reproduce river-streams: River's predict-then-learn over okl and River models, cached per cell."""

import csv
import json

import pytest

river = pytest.importorskip("river")

from okl.experiments import ExperimentContext, experiments  # noqa: E402
from okl.experiments import river_streams as rs  # noqa: E402


def _run(out, **options):
    ctx = ExperimentContext(out_dir=out, progress=False, quick=True, options=options)
    return experiments()["river-streams"].func(ctx)


def test_river_streams_quick_writes_what_it_prints(tmp_path):
    result = _run(tmp_path, models="okl nogd,River HAT", events=200)
    md = (tmp_path / "river-streams.md").read_text()
    assert md.strip() == result.markdown.strip()
    assert (tmp_path / "river-streams.png").stat().st_size > 10000
    rows = list(csv.DictReader(open(tmp_path / "river-streams.csv")))
    assert {(r["stream"], r["seed"], r["model"]) for r in rows} == {
        (s, "1", m) for s in ("Phishing", "TrumpApproval") for m in ("okl nogd", "River HAT")}
    cell = next(r for r in rows if r["stream"] == "Phishing" and r["model"] == "okl nogd")
    assert cell["events"] == "200" and cell["stopped_at"] == "" and float(cell["seconds"]) > 0
    assert f"{float(cell['metric']):.2f}" in md and "Phishing (200)" in md and "TrumpApproval (200)" in md
    lines = [json.loads(line) for line in (tmp_path / "river-streams.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and {rec["river"] for rec in lines} == {river.__version__}


@pytest.mark.parametrize("stream,model", [("Phishing", "okl nogd"), ("ImageSegments", "River LogReg / LinReg"),
                                          ("Mv", "River AMF(10)"), ("LED", "River KNN"),
                                          ("Sine", "River SRP(10)")])
def test_a_cell_is_rivers_progressive_val_score(stream, model):
    from river import evaluate, metrics

    st = rs._streams(2, 100)[stream]
    events = st.make()
    assert len(events) == st.events == 100
    reg = st.task == "regression"
    want = evaluate.progressive_val_score(events, rs._model(model, st.task, 1),
                                          metrics.MAE() if reg else metrics.Accuracy()).get()
    cell = rs._cell(model, st.task, events, seed=2)
    assert cell["metric"] == pytest.approx(want * (1 if reg else 100), abs=1e-6)
    assert cell["done"] == 100 and cell["stopped_at"] is None and cell["error"] is None


def test_river_streams_refuses_unknown_names(tmp_path):
    with pytest.raises(ValueError, match="unknown stream 'Phishng'; streams: Agrawal, SEA"):
        _run(tmp_path, streams="Phishng")
    with pytest.raises(ValueError, match=r"unknown model 'River ARF'; models: okl auto, .*River SRP\(10\)"):
        _run(tmp_path, models="okl auto,River ARF")


def test_the_cache_computes_only_missing_cells_and_fresh_okl_reruns_okl(tmp_path, monkeypatch):
    opts = {"models": "okl linear,River LogReg / LinReg", "events": 60, "streams": "Phishing,Friedman"}
    first = _run(tmp_path, **opts).markdown
    calls = []
    real = rs._cell

    def refuse(name, *args, **kwargs):
        raise AssertionError(f"computed {name} again")

    monkeypatch.setattr(rs, "_cell", refuse)
    assert _run(tmp_path, **opts).markdown == first  # all cached: nothing computed, the same table

    def record(name, *args, **kwargs):
        calls.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(rs, "_cell", record)
    assert _run(tmp_path, **opts, fresh="okl").markdown.split("## Events")[0] == first.split("## Events")[0]
    assert calls == ["okl linear", "okl linear"]
    calls.clear()
    _run(tmp_path, **{**opts, "seeds": "1,2"})  # seed 2 missing: only its cells
    assert calls == ["okl linear", "River LogReg / LinReg"] * 2
    assert len((tmp_path / "river-streams.jsonl").read_text().splitlines()) == 4 + 2 + 4


def test_a_stopped_cell_is_marked_and_not_ranked(tmp_path, monkeypatch):
    st = rs._streams(1, 40)["Phishing"]
    cell = rs._cell("River HAT", st.task, st.make(), seed=1, budget=0.0)
    assert cell["stopped_at"] == cell["done"] == 1

    def fake(name, task, events, seed=1, budget=None):  # HAT the highest but stopped
        if name == "River HAT":
            return {"metric": 99.0, "seconds": 1.0, "done": 10, "stopped_at": 10, "error": None}
        return {"metric": 80.0 if name == "River KNN" else 70.0, "seconds": 1.0, "done": len(events),
                "stopped_at": None, "error": None}

    monkeypatch.setattr(rs, "_cell", fake)
    md = _run(tmp_path, models="okl auto,River HAT,River KNN", streams="Phishing", events=40, budget=0.5).markdown
    row = next(line for line in md.splitlines() if line.startswith("| Phishing (40)"))
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "Phishing (40)", "70.00", "99.00 (stopped at 10)", "80.00*", "-10.00"]
    assert "budget=0.5" in md and "pass 0.5 s" in md
