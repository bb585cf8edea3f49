"""okl serve: per-key models equal to the library's, the write-ahead log (restart, kill -9, duplicates,
eviction), refusals that change nothing, the client, the CLI's safety rules."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("orjson")
pytest.importorskip("httpx")

import warnings  # noqa: E402

with warnings.catch_warnings():  # (Starlette 1.x suggests httpx2 for its test client; httpx still works)
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

import okl  # noqa: E402
from okl.serve import App, Client, ServeError, Template  # noqa: E402

DIM = 4


def events_for(n, keys, seed, delay=True):
    """predict-with-id events and their labels 0..9 events later (as the acceptance check's workload)."""
    rng = np.random.default_rng(seed)
    out, pending = [], []
    for i in range(n):
        k = f"k{int(rng.integers(keys))}"
        x = rng.normal(size=DIM)
        y = 1 if x[0] + 0.5 * x[1] > 0 else -1
        out.append({"op": "predict", "key": k, "id": f"e{seed}-{i}", "x": x.tolist()})
        pending.append((i + (int(rng.integers(0, 10)) if delay else 0), k, f"e{seed}-{i}", y))
        due = [p for p in pending if p[0] <= i]
        pending = [p for p in pending if p[0] > i]
        out += [{"op": "learn", "key": k2, "id": e2, "y": y2} for _, k2, e2, y2 in due]
    return out + [{"op": "learn", "key": k2, "id": e2, "y": y2} for _, k2, e2, y2 in pending]


def replay(learner, events, **params):
    models, kept = {}, {}
    for e in events:
        m = models.setdefault(e["key"], okl.make(learner, random_state=0, **params))
        if e["op"] == "predict":
            kept[e["id"]] = e["x"]
        elif e.get("x") is not None:
            m.learn_one(np.asarray(e["x"], dtype=float), float(e["y"]))
        elif e["id"] in kept:
            m.learn_one(np.asarray(kept.pop(e["id"])), float(e["y"]))
    return models


def ndjson(events):
    return "\n".join(json.dumps(e) for e in events) + "\n"


def post_events(c, events):
    r = c.post("/v1/events", content=ndjson(events), headers={"Content-Type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    return [json.loads(line) for line in r.text.splitlines()]


def assert_same(c, models, probes):
    for k, m in models.items():
        for x in probes:
            got = c.post("/v1/predict", json={"key": k, "x": x.tolist()}).json()["decision"]
            assert got == pytest.approx(m.predict_one(x), rel=1e-12, abs=1e-12), k


@pytest.mark.parametrize("learner", ["linear", "fogd", "klms"])
def test_keys_equal_in_process_learners_and_survive_restart(tmp_path, learner):
    """Each key's decisions are okl.make(learner) fed learn_one in the key's order, delayed labels
    joined by id; after a restart (snapshots every 7 learns + the log replayed) they are unchanged."""
    events = events_for(300, 4, seed=1)
    probes = np.random.default_rng(9).normal(size=(3, DIM))
    models = replay(learner, events)
    app = App(Template(learner), str(tmp_path), snapshot_every=7)
    with TestClient(app) as c:
        out = post_events(c, events[:len(events) // 2])
        out += post_events(c, events[len(events) // 2:])
        assert len(out) == len(events)
        learns = [o for o, e in zip(out, events) if e["op"] == "learn"]
        assert all(o["learned"] for o in learns)
        assert_same(c, models, probes)
        info = c.get("/v1/keys/k0").json()
        assert info["learned"] == sum(1 for e in events if e["op"] == "learn" and e["key"] == "k0")
    assert any(f.endswith(".npz") for _, _, fs in os.walk(tmp_path / "models") for f in fs)
    with TestClient(App(Template(learner), str(tmp_path), snapshot_every=7)) as c:  # restart on the same store
        assert_same(c, models, probes)


def test_abandoned_process_loses_nothing_acknowledged(tmp_path):
    """A second App on the store of one never closed (no flush, no snapshot at exit) replays its log."""
    events = events_for(200, 3, seed=2)
    app = App(Template("linear"), str(tmp_path), snapshot_every=10_000)
    with TestClient(app) as c:
        post_events(c, events)
        app.close = lambda: None  # as if killed: nothing written at shutdown
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        assert_same(c, replay("linear", events), np.eye(DIM))


@pytest.mark.parametrize("learner", ["linear", "fogd"])
def test_blocks_of_both_sizes_replayed_from_the_log_equal_learn_one(tmp_path, learner):
    """A key's block of learns is learned and logged as one (learn_many past ONE_BY_ONE rows, row by
    row below); a restart without a snapshot replays each block by the same call: every key then
    equals okl.make(learner) fed learn_one in order."""
    from okl.serve.shards import ONE_BY_ONE

    rng = np.random.default_rng(12)
    requests = []
    for size in (ONE_BY_ONE, ONE_BY_ONE + 1, 3 * ONE_BY_ONE, 1, 2):  # a request: a block of `size` for each key
        requests.append([])
        for k in ("a", "b"):
            X = rng.normal(size=(size, DIM))
            requests[-1] += [{"op": "learn", "key": k, "x": r.tolist(), "y": 1 if r[0] + r[1] > 0 else -1} for r in X]
    events = [e for r in requests for e in r]
    app = App(Template(learner), str(tmp_path), snapshot_every=10_000)
    with TestClient(app) as c:
        for r in requests:
            post_events(c, r)
        app.close = lambda: None  # as if killed: the restart replays the log
    with TestClient(App(Template(learner), str(tmp_path))) as c:
        assert_same(c, replay(learner, events), np.random.default_rng(13).normal(size=(3, DIM)))


def test_learn_with_an_id_is_learned_at_most_once(tmp_path):
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        x = [0.3, -0.2, 0.5, 0.1]
        assert c.post("/v1/predict", json={"key": "a", "id": "p", "x": x}).json()["new_key"] is True
        first = c.post("/v1/learn", json={"key": "a", "id": "p", "y": 1}).json()
        again = c.post("/v1/learn", json={"key": "a", "id": "p", "y": 1}).json()
        direct = c.post("/v1/learn", json={"key": "a", "id": "q", "x": x, "y": -1}).json()
        direct2 = c.post("/v1/learn", json={"key": "a", "id": "q", "x": x, "y": -1}).json()
        unknown = c.post("/v1/learn", json={"key": "a", "id": "never", "y": 1}).json()
        assert (first["learned"], again["learned"], again["duplicate"]) == (True, False, True)
        assert (direct["learned"], direct2["duplicate"]) == (True, True)
        assert unknown["learned"] is False and "no features kept" in unknown["reason"]
        m = okl.make("linear", random_state=0).learn_one(np.array(x), 1.0).learn_one(np.array(x), -1.0)
        assert c.post("/v1/predict", json={"key": "a", "x": x}).json()["decision"] == pytest.approx(m.predict_one(np.array(x)))
        assert c.get("/v1/keys/a").json()["learned"] == 2


def test_refusals_name_the_field_and_change_nothing(tmp_path):
    app = App(Template("linear"), str(tmp_path), max_body=4096)
    with TestClient(app) as c:
        x = [0.1] * DIM
        c.post("/v1/learn", json={"key": "a", "x": x, "y": 1})
        before = c.post("/v1/predict", json={"key": "a", "x": x}).json()
        cases = [(b'{"key": "a", "x": [0.1,', 400, None), (b'{"key": "a", "x": [NaN, 0, 0, 0], "y": 1}', 422, "x"),
                 (json.dumps({"key": "a", "x": [0.1] * 7, "y": 1}).encode(), 422, "x"),
                 (json.dumps({"key": "a", "x": x, "y": 1, "wieght": 2}).encode(), 422, "wieght"),
                 (json.dumps({"key": "a", "x": x, "y": 3}).encode(), 422, "y"),
                 (json.dumps({"key": "a", "x": x}).encode(), 422, "y"),
                 (json.dumps({"key": 5, "x": x, "y": 1}).encode(), 422, "key"),
                 (json.dumps({"key": "a", "x": ["1"] * DIM, "y": 1}).encode(), 422, "x"),
                 (json.dumps([1, 2]).encode(), 422, None),
                 (b'{"key": "a", "x": [' + b"0.1," * 5000 + b'0.1], "y": 1}', 413, None)]
        for body, status, field in cases:
            r = c.post("/v1/learn", content=body)
            assert r.status_code == status, (body[:60], r.text)
            assert "error" in r.json() and len(r.json()["error"]) > 10
            if field:
                assert r.json()["field"] == field and field in r.json()["error"]
        # a batch with a bad event at index 2 is refused whole, naming the index: nothing learned
        batch = [{"op": "learn", "key": "a", "x": x, "y": 1}, {"op": "learn", "key": "b", "x": x, "y": -1},
                 {"op": "learn", "key": "a", "x": x + [1.0], "y": 1}]
        r = c.post("/v1/events", content=ndjson(batch))
        assert r.status_code == 422 and r.json()["index"] == 2 and "event 2" in r.json()["error"]
        r = c.post("/v1/events", content=b'{"op": "learn", "x": [1, 2, 3, 4], "y": 1}\n{"op": "learn", "x": [1,\n')
        assert r.status_code == 400 and r.json()["index"] == 1
        r = c.post("/v1/events", content=ndjson([{"op": "forget", "x": x}]))
        assert r.status_code == 422 and r.json()["field"] == "op"
        assert c.post("/v1/predict", json={"key": "a", "x": x}).json() == before
        assert c.get("/v1/keys/a").json()["learned"] == 1
        assert c.get("/v1/keys/b").status_code == 404


def test_token(tmp_path):
    with TestClient(App(Template("linear"), str(tmp_path), token="s3cret")) as c:
        x = [0.1] * DIM
        assert c.post("/v1/predict", json={"x": x}).status_code == 401
        assert c.post("/v1/predict", json={"x": x}, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.get("/metrics").status_code == 401
        assert c.get("/healthz").status_code == 200
        assert c.post("/v1/predict", json={"x": x}, headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_eviction_beyond_max_memory_comes_back_exactly(tmp_path):
    """With room for a few keys only, keys are evicted (snapshotted when far behind) and reload exactly."""
    events = events_for(600, 30, seed=3, delay=False)
    app = App(Template("fogd"), str(tmp_path), max_memory=200_000, snapshot_every=50)
    with TestClient(app) as c:
        post_events(c, events)
        assert 0 < len(app.shards[0].entries) < 30
        assert app.shards[0].bytes <= 200_000 or len(app.shards[0].entries) == 1
        assert_same(c, replay("fogd", events), np.random.default_rng(1).normal(size=(2, DIM)))


def test_dict_inputs_named_missing_and_categorical(tmp_path):
    """Named features take the key's first event's (sorted) names; a missing one is 0; a string is a
    level of a categorical column; the key's model is the library's learner on those columns."""
    rng = np.random.default_rng(4)
    rows = [{"a": float(rng.normal()), "b": float(rng.normal()), "colour": str(rng.choice(["red", "blue"]))}
            for _ in range(80)]
    ys = [1 if r["a"] > 0 else -1 for r in rows]
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        for r, y in zip(rows, ys):
            assert c.post("/v1/learn", json={"key": "d", "x": r, "y": y}).json()["learned"]
        info = c.get("/v1/keys/d").json()
        assert info["features"] == ["a", "b", "colour"]
        import zlib

        m = okl.make("linear", random_state=0, categorical=[2])
        for r, y in zip(rows, ys):
            m.learn_one(np.array([r["a"], r["b"], float(zlib.crc32(r["colour"].encode()))]), y)
        got = c.post("/v1/predict", json={"key": "d", "x": {"a": 0.5, "colour": "red"}}).json()["decision"]
        assert got == pytest.approx(m.predict_one(np.array([0.5, 0.0, float(zlib.crc32(b"red"))])))
        r = c.post("/v1/learn", json={"key": "d", "x": {"a": 1.0, "zz": 2.0}, "y": 1})
        assert r.status_code == 422 and "'zz'" in r.json()["error"]
        r = c.post("/v1/learn", json={"key": "d", "x": {"a": "text"}, "y": 1})
        assert r.status_code == 422 and "numeric" in r.json()["error"]
        r = c.post("/v1/learn", json={"key": "d", "x": [1.0, 2.0, 3.0], "y": 1})
        assert r.status_code == 422 and "named features" in r.json()["error"]


def test_warm_start_global_and_delete(tmp_path):
    x = np.array([0.2, 0.4, -0.1, 0.3])
    with TestClient(App(Template("linear", warm_start="global"), str(tmp_path))) as c:
        for i in range(60):
            c.post("/v1/learn", json={"x": (x * (1 + i % 3)).tolist(), "y": 1 if i % 2 else -1})
        g = c.post("/v1/predict", json={"x": x.tolist()}).json()["decision"]
        assert c.post("/v1/predict", json={"key": "new", "x": x.tolist()}).json()["decision"] == pytest.approx(g)
        c.post("/v1/learn", json={"key": "new", "x": x.tolist(), "y": 1})
        after = c.post("/v1/predict", json={"key": "new", "x": x.tolist()}).json()["decision"]
        assert after != pytest.approx(g)
        assert c.get("/v1/keys/new/model").content[:2] == b"PK"  # an okl model file (zip of .npy), no pickle
        assert c.delete("/v1/keys/new").status_code == 200
        assert c.get("/v1/keys/new").status_code == 404


def test_model_file_metrics_openapi_dashboard(tmp_path):
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        x = [0.1, 0.2, 0.3, 0.4]
        for y in (1, -1, 1):
            c.post("/v1/learn", json={"key": "m", "x": x, "y": y})
        path = tmp_path / "m.npz"
        path.write_bytes(c.get("/v1/keys/m/model").content)
        m = okl.Learner.load(path)
        assert m.predict_one(np.array(x)) == pytest.approx(c.post("/v1/predict", json={"key": "m", "x": x}).json()["decision"])
        text = c.get("/metrics").text
        assert 'okl_serve_events_total{op="learn"} 3' in text and "okl_serve_prequential_mistake_rate" in text
        assert "okl_serve_keys_in_memory 1" in text
        spec = c.get("/openapi.json").json()
        assert {"/v1/predict", "/v1/learn", "/v1/events", "/v1/keys/{key}", "/metrics"} <= set(spec["paths"])
        assert "chart-metric" in c.get("/").text


def test_regression_task(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, DIM))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0])
    with TestClient(App(Template("linear", "regression"), str(tmp_path))) as c:
        out = post_events(c, [{"op": "learn", "x": r.tolist(), "y": float(t)} for r, t in zip(X, y)])
        assert all(o["learned"] for o in out)
        m = okl.make("linear", random_state=0, loss="squared")
        for r, t in zip(X, y):
            m.learn_one(r, t)
        got = c.post("/v1/predict", json={"x": [1.0, 1.0, 1.0, 1.0]}).json()
        assert got["decision"] == pytest.approx(m.predict_one(np.ones(DIM))) and "proba" not in got


# ---- a real process: kill -9, the client's retries, the CLI's rules ---------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(store, port, *extra):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(okl.__file__)),
                                                                    os.environ.get("PYTHONPATH")] if p)}
    return subprocess.Popen([sys.executable, "-m", "okl.cli", "serve", "--learner", "linear", "--store", str(store),
                             "--port", str(port), *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def _wait(port, proc, timeout=120):
    c = Client(f"http://127.0.0.1:{port}", retries=0)
    t0 = time.time()
    while time.time() - t0 < timeout:
        assert proc.poll() is None, proc.stderr.read().decode()[-500:]
        if c.health():
            return
        time.sleep(0.2)
    raise AssertionError("okl serve did not start")


def test_kill9_under_load_loses_nothing_acknowledged_and_client_never_learns_twice(tmp_path):
    events = events_for(1500, 5, seed=6)
    batches = [events[i:i + 200] for i in range(0, len(events), 200)]
    port = _free_port()
    proc = _serve(tmp_path, port)
    try:
        _wait(port, proc)
        client = Client(f"http://127.0.0.1:{port}", retries=40)
        for i, batch in enumerate(batches):
            if i in (2, 5):  # killed while this batch is in flight; the client's retries resend it
                def kill_and_restart():
                    time.sleep(0.01)
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    restarted.append(_serve(tmp_path, port))

                restarted: list = []
                t = threading.Thread(target=kill_and_restart)
                t.start()
                out = client.events(batch)
                t.join()
                proc = restarted[0]
            else:
                out = client.events(batch)
            assert len(out) == len(batch)
        models = replay("linear", events)
        for k, m in models.items():
            for x in np.eye(DIM):
                assert client.predict(x, key=k)["decision"] == pytest.approx(m.predict_one(x), rel=1e-9, abs=1e-12)
        with pytest.raises(ServeError) as err:
            client.predict([1.0, 2.0], key="k0")
        assert err.value.status == 422
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def test_cli_refuses_an_open_address_without_a_token(tmp_path):
    r = subprocess.run([sys.executable, "-m", "okl.cli", "serve", "--learner", "linear", "--store", str(tmp_path),
                        "--host", "0.0.0.0", "--port", str(_free_port())], capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "OKL_SERVE_TOKEN"})
    assert r.returncode == 2 and "token" in r.stderr


def test_store_made_with_another_template_is_refused(tmp_path):
    App(Template("linear"), str(tmp_path)).close()
    with pytest.raises(ValueError, match="this store was made with"):
        App(Template("fogd"), str(tmp_path))


def test_store_of_another_layout_is_refused_by_name(tmp_path):
    import sqlite3

    db = sqlite3.connect(tmp_path / "okl-serve-0-of-1.sqlite")  # the first layout: a log row per learn, no format
    db.execute("CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.commit()
    db.close()
    with pytest.raises(ValueError, match="another version of okl serve .layout 1, this one reads 2"):
        App(Template("linear"), str(tmp_path))


def test_batch_check_refuses_the_first_bad_event_and_takes_what_one_by_one_takes(tmp_path):
    """The batch check (one NumPy conversion) gives the per-event check's events, and its refusal is
    always the first refused event's: NaN at 1 before an unknown field at 3; strings are not numbers."""
    from okl.serve.inputs import check_event, check_events

    x = [0.5, -1.0, 2.0, 0.25]
    good = [{"op": "predict", "key": "a", "id": "p", "x": x}, {"op": "learn", "key": "a", "id": "p", "y": 0},
            {"op": "learn", "x": [True, 1, 2.5, -3], "y": -1}, {"op": "learn", "key": "b", "x": {"u": 1.0, "v": "s"},
                                                                "y": True}]
    fast, slow = check_events(good, "classification"), [(i, check_event(e, i, "classification")) for i, e in enumerate(good)]
    for (i, a), (j, b) in zip(fast, slow):
        assert i == j and a[:3] == b[:3] and a[4] == b[4]
        assert (a[3] is None and b[3] is None) or type(a[3]) is dict and a[3] == b[3] or (
            a[3].dtype == np.float64 and np.array_equal(a[3], b[3]))
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        for bad, index, field in [([{"op": "learn", "x": x, "y": 1}, {"op": "learn", "x": [np.nan] + x[1:], "y": 1},
                                    {"op": "learn", "x": x, "y": 1}, {"op": "learn", "x": x, "y": 1, "w": 2}], 1, "x"),
                                   ([{"op": "learn", "x": x, "y": 1}, {"op": "learn", "x": ["1", "2", "3", "4"], "y": 1}], 1, "x"),
                                   ([{"op": "learn", "x": x, "y": 1}, {"op": "learn", "x": x, "y": 5}], 1, "y"),
                                   ([{"op": "learn", "x": x, "y": 1}, {"op": "learn", "x": [x, x], "y": 1}], 1, "x")]:
            r = c.post("/v1/events", content=ndjson(bad))
            assert r.status_code == 422 and (r.json()["index"], r.json()["field"]) == (index, field), r.text
        assert c.post("/v1/predict", json={"x": x}).json()["new_key"] is True  # nothing of a refused batch learned
        assert c.post("/v1/events", content=b"").content == b""


def test_ndjson_answers_are_one_object_a_line_whatever_the_ids_hold():
    import orjson

    from okl.serve.app import ndjson_lines

    for answers in ([], [{"learned": True}], [{"learned": True, "id": 'a},{"b'}, {"decision": 1.5, "proba": {"-1": 0.25,
                    "1": 0.75}, "new_key": False}], [{"id": "x\ny"}, {"id": "}"}, {"error": 'event 3: {"a"},{"b"}'}]):
        assert ndjson_lines(answers) == b"".join(orjson.dumps(a) + b"\n" for a in answers)


def test_startup_warms_the_template_up_before_serving_and_learns_nothing(tmp_path, monkeypatch):
    """The compiled code is loaded at startup (a throwaway model), not by the first requests: the
    warm-up runs once before the first request and leaves no key, log row or kept row behind."""
    import sqlite3

    calls = []
    real = Template.warm_up
    monkeypatch.setattr(Template, "warm_up", lambda self, rows=64: (calls.append(rows), real(self, rows)))
    with TestClient(App(Template("fogd"), str(tmp_path))) as c:
        assert calls == [64]
        assert c.post("/v1/predict", json={"x": [0.1] * DIM}).json()["new_key"] is True
    db = sqlite3.connect(tmp_path / "okl-serve-0-of-1.sqlite")
    assert [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("keys", "log", "kept")] == [0, 0, 0]


def test_the_wal_is_checkpointed_by_its_own_thread_not_by_the_commits(tmp_path):
    from okl.serve.store import Store

    store = Store(str(tmp_path))
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # (no checkpoint inside a commit)
    for k in range(40):
        store.stage_learns(f"k{k}", [None] * 50, np.ones((50, DIM)), np.ones(50), 0.0)
        store.commit()
    t0 = time.time()
    while store.checkpointer.last is None and time.time() - t0 < 10:
        time.sleep(0.05)
    busy, pages, done = store.checkpointer.last
    assert busy == 0 and pages > 0 and done == pages  # every page of the WAL moved by the thread
    store.close()
    assert not store.checkpointer.is_alive()


def test_features_beyond_the_learners_bound_are_refused_and_new_keys_answer_the_blank_decision(tmp_path):
    """|x| > 1e100 (okl's learners refuse it) is a 422 naming the position, alone or in a batch
    (was a 500 on a predict); a key with no learn answers what an untrained model answers."""
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        r = c.post("/v1/predict", json={"key": "n", "x": [0.1, 1e200, 0.0, 0.0]})
        assert r.status_code == 422 and r.json()["field"] == "x" and "position 1" in r.json()["error"]
        r = c.post("/v1/events", content=ndjson([{"op": "learn", "x": [0.1] * DIM, "y": 1},
                                                 {"op": "predict", "x": [0.1, 0.2, -1e101, 0.0]}]))
        assert r.status_code == 422 and r.json()["index"] == 1 and "position 2" in r.json()["error"]
        assert c.app.template.blank_decision == 0.0
        x = np.random.default_rng(3).normal(size=DIM)
        got = c.post("/v1/predict", json={"key": "n", "x": x.tolist()}).json()
        assert (got["decision"], got["new_key"]) == (okl.make("linear", random_state=0).predict_one(x), True)


def test_kept_row_goes_with_the_commit_of_its_label(tmp_path):
    import sqlite3

    x = [0.3, -0.2, 0.5, 0.1]
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        c.post("/v1/predict", json={"key": "a", "id": "p1", "x": x})
        c.post("/v1/predict", json={"key": "a", "id": "p2", "x": x})
        count = lambda: sqlite3.connect(tmp_path / "okl-serve-0-of-1.sqlite").execute("SELECT COUNT(*) FROM kept").fetchone()[0]
        assert count() == 2
        assert c.post("/v1/learn", json={"key": "a", "id": "p1", "y": 1}).json()["learned"]
        assert count() == 1  # p2 still waits for its label
        out = post_events(c, [{"op": "predict", "key": "a", "id": "p3", "x": x}, {"op": "learn", "key": "a", "id": "p3", "y": -1},
                              {"op": "learn", "key": "a", "id": "p2", "y": -1}])
        assert [o.get("learned") for o in out] == [None, True, True] and count() == 0


def test_cli_settings_from_toml_and_sizes(tmp_path):
    from okl.cli import build_parser
    from okl.cli.serve import _settings, loopback, parse_size

    assert parse_size("1536MiB", "--max-memory") == 1536 * 2 ** 20
    assert parse_size("2GB", "--max-memory") == 2 * 10 ** 9 and parse_size("4096", "--max-body") == 4096
    with pytest.raises(ValueError, match="--max-memory"):
        parse_size("lots", "--max-memory")
    assert loopback("127.0.0.1") and loopback("::1") and loopback("localhost") and not loopback("0.0.0.0")
    conf = tmp_path / "serve.toml"
    conf.write_text('learner = "fogd"\ntask = "regression"\nmax-memory = "2GiB"\nfeatures = "a,b"\n'
                    '[param]\nbudget = 50\n')
    args = build_parser().parse_args(["serve", "--config", str(conf), "--param", "eta=0.5", "--task", "classification"])
    s = _settings(args)
    assert (s["learner"], s["task"], s["max_memory"], s["features"]) == ("fogd", "classification", "2GiB", ["a", "b"])
    assert s["params"] == {"budget": 50, "eta": 0.5}
    conf.write_text('lerner = "fogd"\n')
    with pytest.raises(ValueError, match="unknown setting 'lerner'"):
        _settings(build_parser().parse_args(["serve", "--config", str(conf)]))


def test_keys_far_behind_are_snapshotted_every_snapshot_seconds(tmp_path):
    rng = np.random.default_rng(8)
    events = [{"op": "learn", "key": "s", "x": rng.normal(size=DIM).tolist(), "y": 1 if i % 3 else -1}
              for i in range(300)]
    app = App(Template("linear"), str(tmp_path), snapshot_seconds=1)
    with TestClient(app) as c:
        post_events(c, events)
        assert c.get("/v1/keys/s").json()["logged_since_snapshot"] == 300
        t0 = time.time()
        while c.get("/v1/keys/s").json()["logged_since_snapshot"] and time.time() - t0 < 20:
            time.sleep(0.2)
        info = c.get("/v1/keys/s").json()
        assert (info["logged_since_snapshot"], info["snapshot_learns"], info["learned"]) == (0, 300, 300)
        app.close = lambda: None  # as if killed after the snapshot: the restart needs no replay
    with TestClient(App(Template("linear"), str(tmp_path))) as c:
        assert_same(c, replay("linear", events), np.eye(DIM))


@pytest.fixture(scope="module")
def ray():
    """A local Ray cluster of 2 CPUs for the module (the Ray test skips where the okl[ray] extra is not installed)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (the okl[ray] extra)")
    ray.init(num_cpus=2, namespace="okl", include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_two_shard_actors_one_killed_mid_stream_equal_the_single_process_run(tmp_path, ray):
    # okl serve on Ray: two named shard actors on a local cluster, one killed mid-stream (Ray restarts it
    # from its snapshots and log on the shared store); every key then predicts as the single-process run
    events = events_for(900, 6, seed=11)
    batches = [events[i:i + 150] for i in range(0, len(events), 150)]
    app = App(Template("linear"), str(tmp_path), shards=2, engine="ray", snapshot_every=40)
    assert len(app.remote.actors) == 2
    with TestClient(app) as c:
        pids = [ray.get(a.pid.remote()) for a in app.remote.actors]
        for i, batch in enumerate(batches):
            if i == 3:  # killed while this batch is in flight: Ray restarts it and retries the call
                victim = app.remote.actors[0]
                t = threading.Thread(target=lambda: (time.sleep(0.02), ray.kill(victim, no_restart=False)))
                t.start()
            r = c.post("/v1/events", content="\n".join(json.dumps(e) for e in batch) + "\n")
            assert r.status_code == 200, r.text
            if i == 3:
                t.join()
        assert ray.get(app.remote.actors[0].pid.remote()) != pids[0]  # it was restarted: another process
        assert ray.get(app.remote.actors[1].pid.remote()) == pids[1]
        assert_same(c, replay("linear", events), np.random.default_rng(2).normal(size=(3, 4)))
        # a refusal from either shard changes nothing on the other one
        bad = [{"op": "learn", "key": "k0", "x": [0.1] * 4, "y": 1}, {"op": "learn", "key": "k1", "x": [0.1] * 5, "y": 1}]
        r = c.post("/v1/events", content="\n".join(json.dumps(e) for e in bad) + "\n")
        assert r.status_code == 422 and r.json()["index"] == 1
        assert_same(c, replay("linear", events), np.eye(4))
