"""okl serve under load on 127.0.0.1, beside the same learner in-process in the same run.

usage: python benchmarks/serve.py [--quick] [--learners linear,fogd,auto] [--frameworks-only] [--latency-only]
                                   [--ndjson-only]

1. frameworks: the single-event predict path (one request, one event) on three ASGI stacks over
   the same shard, each on uvicorn in its own process, 2,000 sequential requests: Starlette
   (Route + Request + Response), FastAPI (a pydantic body model), and the plain ASGI callable
   okl serve uses for its event endpoints (Starlette for the rest); p50/p99 per stack.
2. load: `okl serve --learner L`, a bounded load generator (C client threads, each at most R
   requests/s; keys drawn Zipf(1.3) over K keys; every predict carries an id whose label is
   learned 0-50 events later), per endpoint: /v1/predict and /v1/learn single events, and
   /v1/events NDJSON batches of 500; events/s and p50/p99 latency; beside the same learner
   in-process (okl.make, predict_one + learn_one per event, one model) in the same run.
3. memory per key: N keys x 60 learns of each learner (past the 50-row warm-up window, so the
   model holds its own state), resident memory of the server over its baseline, divided by N.
4. predict latency under the acceptance check's load (16 client threads in one process, 500
   requests/s, 8 s, keys k0..k15, k0 learned): `okl serve --learner linear` beside a do-nothing
   ASGI app on the same uvicorn (a constant answer of the same size: what the client, the kernel
   and uvicorn cost without any server work), alternated twice in the same run; p50/p99 and the
   server's CPU per request.
5. the acceptance check's NDJSON loop (its client's json.dumps of each event, the round trip, its
   json.loads of each answer line; 1,000 events a request) against `okl serve --learner linear` and
   against a do-nothing app answering a line an event (the bound any server can reach), beside auto
   and linear in-process per event, alternated twice in the same run.
Prints tables (markdown); the numbers in docs/results/serve.md come from this script.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

DIM = 8


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(port, proc, timeout=180):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode()[-400:]}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("server did not start")


def rss_tree(pid) -> int:
    pids, total = [pid], 0
    while pids:
        p = pids.pop()
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            pids += [int(k) for k in open(f"/proc/{p}/task/{p}/children").read().split()]
        except OSError:
            pass
    return total


def post(conn, path, body: bytes, ctype="application/json"):
    conn.request("POST", path, body=body, headers={"Content-Type": ctype})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"{path} answered {r.status}: {data[:200]!r}")
    return data


# ---- 1. frameworks --------------------------------------------------------------------------

def framework_server(kind: str, port: int) -> None:
    """One of the three stacks, serving POST /v1/predict over one linear shard."""
    import uvicorn

    from okl.serve.app import App
    from okl.serve.shards import Template

    okl_app = App(Template("linear"), tempfile.mkdtemp(prefix="okl-fw-"))
    okl_app.shards[0].apply([(0, ("learn", "k", None, np.ones(DIM), 1.0))], time.time())
    okl_app.shards[0].commit()
    if kind == "floor":
        answer = b'{"decision":0.0,"prediction":1,"proba":{"-1":0.5,"1":0.5},"new_key":true}'

        lines = ((b'{"decision":-3.91981162050801,"prediction":-1,"proba":{"-1":0.99873656315428,'
                  b'"1":0.0012634368457198914},"new_key":false}\n'),
                 b'{"learned":true,"duplicate":false,"id":"e1-1234"}\n')

        async def app(scope, receive, send):  # does nothing: the client's, the kernel's and uvicorn's cost
            if scope["type"] != "http":
                return
            body, more = [], True
            while more:
                msg = await receive()
                body.append(msg.get("body", b""))
                more = msg.get("more_body", False)
            out = answer
            if scope["path"] == "/v1/events":  # an answer line an event, of okl serve's sizes (predict, learn)
                n = b"".join(body).count(b"\n")
                out = lines[0] * ((n + 1) // 2) + lines[1] * (n // 2)
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())]})
            await send({"type": "http.response.body", "body": out})

        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off",
                    server_header=False, date_header=False)
        return
    if kind == "plain":
        app = okl_app
    elif kind == "starlette":
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def predict(request: Request):
            return JSONResponse((await okl_app.run_events([await request.json()], "predict"))[0])

        app = Starlette(routes=[Route("/v1/predict", predict, methods=["POST"]),
                                Route("/healthz", okl_app.healthz, methods=["GET"])])
    else:
        from fastapi import FastAPI
        from pydantic import BaseModel, ConfigDict

        class Predict(BaseModel):
            model_config = ConfigDict(extra="forbid")
            key: str | None = None
            id: str | None = None
            x: list[float]

        app = FastAPI()

        async def predict(body):
            return (await okl_app.run_events([body.model_dump(exclude_none=True)], "predict"))[0]

        predict.__annotations__ = {"body": Predict}  # (a local class: resolved here, not from a string)
        app.post("/v1/predict")(predict)

        @app.get("/healthz")
        async def healthz():
            return {"ok": True}

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def frameworks(n: int) -> None:
    print("\n## Single-event predict path by ASGI stack (uvicorn, sequential requests, one client)\n")
    print("| stack | requests | p50 ms | p99 ms |\n|---|---:|---:|---:|")
    body = json.dumps({"key": "k", "x": [0.1] * DIM}).encode()
    for kind in ("plain", "starlette", "fastapi"):
        port = free_port()
        proc = subprocess.Popen([sys.executable, __file__, "--framework-server", kind, "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            wait_up(port, proc)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for _ in range(200):
                post(conn, "/v1/predict", body)
            lat = []
            for _ in range(n):
                t0 = time.perf_counter()
                post(conn, "/v1/predict", body)
                lat.append((time.perf_counter() - t0) * 1e3)
            print(f"| {kind} | {n} | {np.percentile(lat, 50):.3f} | {np.percentile(lat, 99):.3f} |")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)


# ---- 2. load ----------------------------------------------------------------------------------

def workload(n, n_keys, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n_keys, DIM))
    keys = np.minimum(rng.zipf(1.3, size=n) - 1, n_keys - 1)
    X = rng.normal(size=(n, DIM))
    y = np.where(np.einsum("ij,ij->i", X, w[keys]) > 0, 1, -1)
    pending, events = [], []
    for i in range(n):
        k, eid = f"k{keys[i]}", f"e{seed}-{i}"
        events.append({"op": "predict", "key": k, "id": eid, "x": X[i].tolist()})
        pending.append((i + int(rng.integers(0, 50)), k, eid, int(y[i])))
        due = [p for p in pending if p[0] <= i]
        pending = [p for p in pending if p[0] > i]
        events += [{"op": "learn", "key": k2, "id": e2, "y": y2} for _, k2, e2, y2 in due]
    return events + [{"op": "learn", "key": k2, "id": e2, "y": y2} for _, k2, e2, y2 in pending]


def in_process(learner, events) -> float:
    import okl

    m = okl.make(learner, random_state=0)
    m.learn_one(np.zeros(DIM), 1.0)
    for e in events[:200]:  # the compiled loops loaded before the clock starts
        if e["op"] == "predict":
            m.predict_one(np.asarray(e["x"]))
    m = okl.make(learner, random_state=0)
    kept = {}
    t0 = time.perf_counter()
    for e in events:
        if e["op"] == "predict":
            x = np.asarray(e["x"])
            m.predict_one(x)
            kept[e["id"]] = x
        else:
            m.learn_one(kept.pop(e["id"]), float(e["y"]))
    return len(events) / (time.perf_counter() - t0)


def load(learner, n, clients, rate, n_keys) -> list:
    events = workload(n, n_keys, seed=7)
    port = free_port()
    store = tempfile.mkdtemp(prefix="okl-serve-bench-")
    proc = subprocess.Popen(["okl", "serve", "--learner", learner, "--store", store, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    rows = []
    try:
        wait_up(port, proc)
        # single events: each client sends its share in order (a key belongs to one client, so
        # a label never overtakes its prediction)
        mine = [[e for e in events if int(e["key"][1:]) % clients == c] for c in range(clients)]
        lat = {"predict": [], "learn": []}

        def client(c):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            nxt = time.time()
            for e in mine[c]:
                nxt += 1.0 / rate
                e = dict(e)
                op = e.pop("op")
                t0 = time.perf_counter()
                post(conn, f"/v1/{op}", json.dumps(e).encode())
                lat[op].append((time.perf_counter() - t0) * 1e3)
                time.sleep(max(0.0, nxt - time.time()))

        t0 = time.perf_counter()
        ts = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        single = len(events) / (time.perf_counter() - t0)
        for op in ("predict", "learn"):
            rows.append((learner, f"/v1/{op} ({clients} clients, <= {rate}/s each)", single,
                         np.percentile(lat[op], 50), np.percentile(lat[op], 99)))
        # NDJSON batches of 500, one client, new keys (fresh ids)
        events2 = workload(n, n_keys, seed=8)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        lat_b = []
        t0 = time.perf_counter()
        for i in range(0, len(events2), 500):
            body = ("\n".join(json.dumps(e) for e in events2[i:i + 500]) + "\n").encode()
            t1 = time.perf_counter()
            post(conn, "/v1/events", body, "application/x-ndjson")
            lat_b.append((time.perf_counter() - t1) * 1e3)
        rows.append((learner, "/v1/events (NDJSON, 500 a request, 1 client)", len(events2) / (time.perf_counter() - t0),
                     np.percentile(lat_b, 50), np.percentile(lat_b, 99)))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    rows.append((learner, "in-process predict_one + learn_one (same events)", in_process(learner, events), None, None))
    return rows


# ---- the acceptance check's NDJSON ratio, and what bounds it ----------------------------------

def check_client(port, events) -> float:
    """Seconds for the acceptance check's timed loop exactly: per request of 1,000 events its
    client's ``json.dumps`` of each event, the HTTP round trip, ``decode`` + ``splitlines`` and
    ``json.loads`` of each answer line."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    for i in range(0, len(events), 1000):
        body = ("\n".join(json.dumps(e) for e in events[i:i + 1000]) + "\n").encode()
        out = post(conn, "/v1/events", body, "application/x-ndjson")
        lines = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
        assert len(lines) == min(1000, len(events) - i)
    return time.perf_counter() - t0


def client_floor(n_pairs: int) -> None:
    """The acceptance check times its client's loop against ``okl serve`` (``check_client``)
    beside ``predict_one`` + ``learn_one`` in-process. The same loop against a do-nothing server
    (uvicorn, an answer line an event of okl serve's sizes, no work) is the bound any server can
    reach: printed beside okl serve and the learners in-process, same run, alternated twice."""
    import okl

    rng = np.random.default_rng(1)
    X = rng.normal(size=(n_pairs, DIM))
    events = []
    for i in range(n_pairs):
        events.append({"op": "predict", "id": f"e{i}", "x": X[i].tolist()})
        events.append({"op": "learn", "id": f"e{i}", "y": 1 if X[i, 0] > 0 else -1})
    print("\n## The acceptance check's NDJSON loop (1,000 events a request, 1 client) and what bounds it\n")
    print("| what | events/s | load average |\n|---|---:|---:|")
    for rnd in range(2):
        for learner in ("auto", "linear"):
            m = okl.make(learner, random_state=0)
            m.learn_one(np.zeros(DIM), 1.0)
            m.predict_one(np.zeros(DIM))  # (the compiled code loaded before the clock, as in a long run)
            t0 = time.perf_counter()
            for e in events:
                if e["op"] == "predict":
                    x = np.asarray(e["x"])
                    m.predict_one(x)
                else:
                    m.learn_one(x, float(e["y"]))
            print(f"| {learner} in-process, predict_one + learn_one | "
                  f"{len(events) / (time.perf_counter() - t0):,.0f} | {os.getloadavg()[0]:.2f} |")
        for kind in ("floor", "okl"):
            port = free_port()
            cmd = ["okl", "serve", "--learner", "linear", "--store", tempfile.mkdtemp(prefix="okl-serve-tp-"),
                   "--port", str(port)] if kind == "okl" else [sys.executable, __file__, "--framework-server",
                                                                "floor", "--port", str(port)]
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            try:
                wait_up(port, proc)
                check_client(port, events[:200])
                cpu0 = proc_cpu(proc.pid)
                t = check_client(port, events)
                cpu = (proc_cpu(proc.pid) - cpu0) / len(events) * 1e6
                name = ("okl serve --learner linear" if kind == "okl" else "do-nothing ASGI app (the bound)")
                print(f"| {name}: the check's client loop (server CPU {cpu:.1f} us an event) | "
                      f"{len(events) / t:,.0f} | {os.getloadavg()[0]:.2f} |")
            finally:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)


# ---- 4. predict latency against a do-nothing server ----------------------------------------------

def latency_floor(seconds: float) -> None:
    print("\n## Predict latency at 500 requests/s from 16 client threads (the acceptance check's load)\n")
    print("| server | requests | p50 ms | p99 ms | server CPU us/request | load average |\n|---|---:|---:|---:|---:|---:|")
    xs = np.random.default_rng(2).normal(size=(64, DIM)).tolist()
    for kind in ("floor", "okl", "floor", "okl"):
        port = free_port()
        cmd = ["okl", "serve", "--learner", "linear", "--store", tempfile.mkdtemp(prefix="okl-serve-lat-"),
               "--port", str(port)] if kind == "okl" else [sys.executable, __file__, "--framework-server", "floor",
                                                            "--port", str(port)]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            wait_up(port, proc)
            post(http.client.HTTPConnection("127.0.0.1", port, timeout=30), "/v1/learn",
                 json.dumps({"key": "k0", "x": xs[0], "y": 1}).encode())
            lat, stop = [], time.time() + seconds

            def client(j):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                nxt = time.time()
                while time.time() < stop:
                    nxt += 16 / 500
                    t0 = time.perf_counter()
                    post(conn, "/v1/predict", json.dumps({"key": f"k{j}", "x": xs[j % 64]}).encode())
                    lat.append((time.perf_counter() - t0) * 1e3)
                    time.sleep(max(0.0, nxt - time.time()))

            cpu0 = proc_cpu(proc.pid)
            threads = [threading.Thread(target=client, args=(j,)) for j in range(16)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            cpu = (proc_cpu(proc.pid) - cpu0) / len(lat) * 1e6
            print(f"| {'okl serve (linear)' if kind == 'okl' else 'do-nothing ASGI app'} | {len(lat)} | "
                  f"{np.percentile(lat, 50):.2f} | {np.percentile(lat, 99):.2f} | {cpu:.0f} | {os.getloadavg()[0]:.2f} |")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)


def proc_cpu(pid) -> float:
    """CPU seconds (user + system) a process has used (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---- 3. memory per key -------------------------------------------------------------------------

def memory(learner, n_keys) -> tuple:
    port = free_port()
    store = tempfile.mkdtemp(prefix="okl-serve-mem-")
    proc = subprocess.Popen(["okl", "serve", "--learner", learner, "--store", store, "--port", str(port),
                             "--max-memory", "64GiB"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        wait_up(port, proc)
        rng = np.random.default_rng(3)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        post(conn, "/v1/events", (json.dumps({"op": "learn", "key": "warm", "x": [0.1] * DIM, "y": 1}) + "\n").encode(),
             "application/x-ndjson")
        base = rss_tree(proc.pid)
        for start in range(0, n_keys, 100):
            ev = [{"op": "learn", "key": f"u{k}", "x": rng.normal(size=DIM).tolist(), "y": int(rng.integers(0, 2)) * 2 - 1}
                  for k in range(start, min(n_keys, start + 100)) for _ in range(60)]
            post(conn, "/v1/events", ("\n".join(json.dumps(e) for e in ev) + "\n").encode(), "application/x-ndjson")
        conn.request("GET", "/v1/keys/u0")
        info = json.loads(conn.getresponse().read())
        return learner, (rss_tree(proc.pid) - base) / n_keys, info["state_bytes"]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--learners", default="linear,fogd,auto")
    ap.add_argument("--frameworks-only", action="store_true")
    ap.add_argument("--latency-only", action="store_true")
    ap.add_argument("--ndjson-only", action="store_true")
    ap.add_argument("--framework-server")
    ap.add_argument("--port", type=int)
    args = ap.parse_args()
    if args.framework_server:
        framework_server(args.framework_server, args.port)
        return
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    if args.latency_only:
        latency_floor(4 if args.quick else 8)
        return
    if args.ndjson_only:
        client_floor(4000 if args.quick else 20000)
        return
    frameworks(500 if args.quick else 2000)
    if args.frameworks_only:
        return
    client_floor(4000 if args.quick else 20000)
    print("\n## Load (127.0.0.1, keys Zipf(1.3), delayed labels by id)\n")
    print("| learner | path | events/s | p50 ms | p99 ms |\n|---|---|---:|---:|---:|")
    for learner in args.learners.split(","):
        n = 600 if args.quick else 3000
        for row in load(learner, n if learner != "auto" else n // 2, clients=8, rate=100, n_keys=50):
            p50 = "" if row[3] is None else f"{row[3]:.2f}"
            p99 = "" if row[4] is None else f"{row[4]:.2f}"
            print(f"| {row[0]} | {row[1]} | {row[2]:,.0f} | {p50} | {p99} |")
    print("\n## Memory per key after 60 learns (resident memory over the server's baseline / keys)\n")
    print("| learner | keys | KiB per key (resident) | state KiB (arrays) |\n|---|---:|---:|---:|")
    for learner in args.learners.split(","):
        nk = (200 if args.quick else 2000) if learner != "auto" else (20 if args.quick else 100)
        name, per, state = memory(learner, nk)
        print(f"| {name} | {nk} | {per / 1024:.1f} | {state / 1024:.1f} |")
    latency_floor(4 if args.quick else 8)


if __name__ == "__main__":
    main()
