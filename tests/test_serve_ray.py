"""okl serve on Ray: two named shard actors on a local cluster, one killed mid-stream (Ray restarts
it from its snapshots and log on the shared store); every key then predicts as the single-process run."""

from __future__ import annotations

import json
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette")
ray = pytest.importorskip("ray", reason="Ray is not installed (the okl[ray] extra)")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

import okl  # noqa: E402
from okl.serve import App, Template  # noqa: E402

DIM = 4


# (the workload and the in-process replay of tests/test_serve.py)
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


def assert_same(c, models, probes):
    for k, m in models.items():
        for x in probes:
            got = c.post("/v1/predict", json={"key": k, "x": x.tolist()}).json()["decision"]
            assert got == pytest.approx(m.predict_one(x), rel=1e-12, abs=1e-12), k


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, namespace="okl", include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_two_shard_actors_one_killed_mid_stream_equal_the_single_process_run(tmp_path, cluster):
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
