"""The service's ASGI application (Starlette): routing, authentication, body limits, JSON, group commit.

``App(template, store)`` is an ASGI app (``uvicorn.run(App(...))``, or ``okl serve``). Every
event goes through :func:`okl.serve.inputs.check_event` (shapes, finite numbers, known fields)
and its shard's :meth:`~okl.serve.shards.Shard.check` (the key's columns) for the whole request
before any of it is applied, so a refused request changes no model. Learns and kept ids are
staged in the shards' logs; the answer waits for the group commit that runs once per event-loop
tick for every request that staged something (one SQLite transaction for all of them), so an
acknowledged learn is in the log. Predicts without an id are answered at once.

Statuses: 400 malformed JSON (line and column, the event's index in NDJSON), 401 no or wrong
token (``Authorization: Bearer <token>``; ``/healthz`` and the dashboard page need none), 413 a
body over ``max_body`` (refused from its Content-Length before it is read, or as it streams),
422 a wrong shape, a non-finite number, an unknown field or a width the key does not take
(``{"error", "field", "index"}``), 503 a failed commit (nothing of the request acknowledged;
retry: a learn with an id is learned at most once).

Per request: about 0.1-0.3 ms of framework and JSON on top of the events' cost (docs/results/serve.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
import os
import time
import zlib
from collections import deque

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from okl.serve.dashboard import PAGE
from okl.serve.inputs import EventError, check_events
from okl.serve.openapi import schema as openapi_schema
from okl.serve.shards import Shard, Template

MiB = 1 << 20
ENDPOINTS = ("predict", "learn", "events", "keys", "model", "delete")


class Refusal(Exception):
    def __init__(self, status: int, message: str, field: str | None = None, index: int | None = None):
        super().__init__(message)
        self.status, self.field, self.index = status, field, index

    def response(self) -> Response:
        body = {"error": str(self)}
        if self.field is not None or self.index is not None:
            body.update(field=self.field, index=self.index)
        return Response(orjson.dumps(body), self.status, media_type="application/json")


def _json_error(exc: json.JSONDecodeError, what: str) -> str:
    return f"{what}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"


def parse_json(body: bytes, what: str = "body"):
    """The JSON document of ``body``; NaN/Infinity are parsed (and refused later as 422 by name)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            msg = _json_error(exc, what) if isinstance(exc, json.JSONDecodeError) else f"{what}: not UTF-8 ({exc})"
            raise Refusal(400, msg) from None


def parse_ndjson(body: bytes) -> list:
    """The events of an NDJSON body, one JSON object a line (blank lines skipped)."""
    text = body.strip()
    if not text:
        return []
    try:  # one parse for the whole batch; a failure is located by the line-by-line path below
        return orjson.loads(b"[" + text.replace(b"\n", b",") + b"]")
    except orjson.JSONDecodeError:
        pass
    out = []
    for line in text.split(b"\n"):
        if line.strip():
            try:
                out.append(parse_json(line, f"event {len(out)}"))
            except Refusal as r:
                raise Refusal(400, str(r), None, len(out)) from None
    return out


def ndjson_lines(answers: list) -> bytes:
    """The answers as NDJSON (one compact JSON object a line). One ``orjson.dumps`` of the list,
    its objects then split at ``},{"`` (4x cheaper than a call an answer): every answer is a
    non-empty object, so each of the n - 1 boundaries matches and nothing else does unless a string
    holds it, which makes more than n - 1 matches and takes the answer by answer path."""
    if not answers:
        return b""
    data = orjson.dumps(answers)[1:-1]
    if data.count(b'},{"') == len(answers) - 1:
        return data.replace(b'},{"', b'}\n{"') + b"\n"
    return b"\n".join(map(orjson.dumps, answers)) + b"\n"


class App:
    """The ``okl serve`` application; see the module docstring. ``shards`` in-process shards
    (one writer per key: a key's shard is CRC-32(key) mod ``shards``)."""

    def __init__(self, template: Template | None = None, store: str = "okl-serve-store", *, token: str | None = None,
                 max_body: int = 16 * MiB, max_memory: int = 1024 * MiB, shards: int = 1, fsync: bool = False,
                 snapshot_every: int = 10000, id_ttl: float = 86400.0, engine: str = "local",
                 snapshot_seconds: float = 300.0):
        if engine not in ("local", "ray"):
            raise ValueError(f"engine must be 'local' or 'ray', got {engine!r}")
        if shards < 1:
            raise ValueError(f"shards must be >= 1, got {shards}")
        if max_body < 1024:
            raise ValueError(f"max_body must be at least 1024 bytes, got {max_body}")
        if not snapshot_seconds > 0:
            raise ValueError(f"snapshot_seconds must be > 0, got {snapshot_seconds}")
        self.snapshot_seconds = snapshot_seconds
        self.template = template or Template()
        self.token = token or None
        self.max_body = max_body
        per = max(1, max_memory // shards)
        os.makedirs(store, exist_ok=True)
        names = [f"okl-serve-{i}-of-{shards}" for i in range(shards)]
        if engine == "ray":
            from okl.serve.ray_shards import RayShards

            self.remote = RayShards(self.template, store, names, fsync, per, snapshot_every, id_ttl)
            self.shards = self.remote.proxies
        else:
            self.remote = None
            self.shards = [Shard(self.template, store, name, fsync, per, snapshot_every, id_ttl) for name in names]
        self.started = time.time()
        self.latency = {name: deque(maxlen=20000) for name in ENDPOINTS}
        self.requests = dict.fromkeys(ENDPOINTS, 0)
        self.refused = {400: 0, 401: 0, 413: 0, 422: 0, 503: 0}
        self.series: deque = deque(maxlen=900)  # (t, events/s, running metric, keys in memory, memory bytes) a second
        self._waiters: list = []
        self._flush_due = False
        self._tasks: list = []
        self._bearer = f"Bearer {self.token}".encode() if self.token else b""
        self._fast = {"/v1/predict": "predict", "/v1/learn": "learn", "/v1/events": "events"}
        routes = [Route("/v1/keys/{key:path}", self.key, methods=["GET", "DELETE"]),
                  Route("/v1/stats", self.stats, methods=["GET"]),
                  Route("/healthz", self.healthz, methods=["GET"]),
                  Route("/metrics", self.metrics, methods=["GET"]),
                  Route("/openapi.json", self.openapi, methods=["GET"]),
                  Route("/", self.dashboard, methods=["GET"])]
        self.asgi = Starlette(routes=routes, lifespan=self._lifespan)

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            name = self._fast.get(scope["path"])
            if name is not None:
                await self._post(scope, receive, send, name)
                return
        await self.asgi(scope, receive, send)

    # ---- lifecycle -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _lifespan(self, app):
        loop = asyncio.get_running_loop()
        if self.remote is None:  # (a shard actor warms its own process up)
            self.template.warm_up()  # the compiled code loaded before the first request, not by it
        self._tasks = [loop.create_task(self._sample())]
        # the objects of the imports and of the loaded compiled code (NumPy, Numba: hundreds of
        # thousands) leave the collector's generations, so its collections while serving walk only
        # the service's own
        gc.freeze()
        try:
            yield
        finally:
            for t in self._tasks:
                t.cancel()
            self.close()

    def close(self) -> None:
        """Commit, snapshot keys far behind their snapshot, close the stores (a clean stop)."""
        for s in self.shards:
            s.flush()
            s.close()

    async def _sample(self):
        """Once a second: events/s, the running prequential metric since start, keys in memory and
        resident memory (the dashboard's series); every ``snapshot_seconds`` the keys far behind their
        snapshot are snapshotted; every minute, kept features past their time to live go."""
        last_n, tick = self._n_events(), 0
        while True:
            await asyncio.sleep(1.0)
            n, (scored, loss) = self._n_events(), self._score()
            self.series.append((round(time.time(), 3), n - last_n, loss / scored if scored else None,
                                self._keys_in_memory(), rss_bytes()))
            last_n = n
            tick += 1
            if tick % max(1, round(self.snapshot_seconds)) == 0:
                for s in self.shards:
                    s.flush()
            if tick % 60 == 0:
                now = time.time()
                for s in self.shards:
                    s.expire(now)

    # ---- the write path --------------------------------------------------------------------

    def shard_of(self, key: str) -> Shard:
        s = self.shards
        return s[0] if len(s) == 1 else s[zlib.crc32(key.encode("utf-8")) % len(s)]

    async def _durable(self) -> None:
        """Wait for the group commit of this event-loop tick."""
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)
        await fut

    def _flush(self) -> None:
        self._flush_due = False
        waiters, self._waiters = self._waiters, []
        try:
            for s in self.shards:
                s.commit()
        except Exception as exc:  # a full disk, a broken store: nothing of these requests is acknowledged
            for s in self.shards:
                s.rollback()
            err = Refusal(503, f"the log could not be written ({exc}); nothing of this request was acknowledged")
            for w in waiters:
                if not w.done():
                    w.set_exception(err)
            return
        for w in waiters:
            if not w.done():
                w.set_result(None)

    async def run_events(self, raw: list, op: str | None = None) -> list:
        """Check every event, then apply them in order and wait until their learns are logged."""
        task = self.template.task
        checked = check_events(raw, task, op)
        if self.remote is not None:
            return await self.remote.run(checked)
        seen: dict = {}
        if len(self.shards) == 1:
            self.shards[0].check(checked, seen)
        else:
            for i, ev in checked:
                self.shard_of(ev[1]).check([(i, ev)], seen)
        out = []
        staged = False
        if len(self.shards) == 1:
            out = self.shards[0].apply(checked, time.time())
        else:
            out = [None] * len(checked)
            parts: dict = {}
            for p, ev in enumerate(checked):
                parts.setdefault(self.shard_of(ev[1][1]), []).append(p)
            now = time.time()
            for shard, ps in parts.items():
                for p, r in zip(ps, shard.apply([checked[p] for p in ps], now)):
                    out[p] = r
        for i, (op_, key, eid, x, y) in checked:
            if op_ == "learn" or eid is not None:
                staged = True
                break
        if staged:
            await self._durable()
        return out

    # ---- endpoints -------------------------------------------------------------------------

    def _authorized(self, header: bytes | str | None) -> None:
        if self.token is None:
            return
        got = header.encode() if isinstance(header, str) else (header or b"")
        if not hmac.compare_digest(got, self._bearer):
            raise Refusal(401, "missing or wrong token: send 'Authorization: Bearer <token>'")

    def _too_large(self, n) -> None:
        if n is not None and n.isdigit() and int(n) > self.max_body:
            raise Refusal(413, f"request body of {int(n)} bytes is over the limit of {self.max_body} (--max-body)")

    async def _handle(self, name: str, request: Request, work) -> Response:
        """A Starlette endpoint: token, refusals as statuses, latency."""
        t0 = time.perf_counter()
        try:
            self._authorized(request.headers.get("authorization"))
            resp = await work()
        except Refusal as r:
            self.refused[r.status] = self.refused.get(r.status, 0) + 1
            resp = r.response()
        self.requests[name] += 1
        self.latency[name].append(time.perf_counter() - t0)
        return resp

    # ---- the event endpoints: plain ASGI, before Starlette's router -------------------------
    # (measured: Starlette's Request/Response/routing add ~0.1 ms a request on this path;
    # docs/results/serve.md)

    async def _post(self, scope, receive, send, name: str) -> None:
        t0 = time.perf_counter()
        auth = length = None
        for k, v in scope["headers"]:
            if k == b"authorization":
                auth = v
            elif k == b"content-length":
                length = v.decode("latin-1")
        try:
            self._authorized(auth)
            self._too_large(length)
            chunks, size, more = [], 0, True
            while more:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    return
                chunk = msg.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    raise Refusal(413, f"request body is over the limit of {self.max_body} bytes (--max-body)")
                chunks.append(chunk)
                more = msg.get("more_body", False)
            body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            if name == "events":
                out = await self.run_events(parse_ndjson(body))
                data = ndjson_lines(out)
                status, ctype = 200, b"application/x-ndjson"
            else:
                event = parse_json(body)
                if type(event) is not dict:
                    raise Refusal(422, f"the body must be a JSON object, got {type(event).__name__}")
                r = (await self.run_events([event], name))[0]
                status, data, ctype = (422 if "error" in r else 200), orjson.dumps(r), b"application/json"
        except Refusal as r:
            status, ctype = r.status, b"application/json"
            data = orjson.dumps({"error": str(r), **({"field": r.field, "index": r.index}
                                                     if r.field is not None or r.index is not None else {})})
        except EventError as exc:
            status, data, ctype = 422, orjson.dumps(exc.payload()), b"application/json"
        if status != 200:
            self.refused[status] = self.refused.get(status, 0) + 1
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype), (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})
        self.requests[name] += 1
        self.latency[name].append(time.perf_counter() - t0)

    async def key(self, request: Request) -> Response:
        key = request.path_params["key"]
        name = "delete" if request.method == "DELETE" else "keys"
        if key.endswith("/model") and request.method == "GET":
            key, name = key[:-len("/model")], "model"

        async def work():
            shard = self.shard_of(key)
            if name == "delete":
                if not shard.delete(key):
                    raise Refusal(404, f"no key {key!r}")
                return JSONResponse({"deleted": key})
            if name == "model":
                data = shard.model_bytes(key)
                if data is None:
                    raise Refusal(404, f"no key {key!r}")
                fname = f"{key or 'global'}.npz".replace("/", "_").replace('"', "_")
                return Response(data, media_type="application/octet-stream",
                                headers={"Content-Disposition": f'attachment; filename="{name}"'})
            info = shard.info(key)
            if info is None:
                raise Refusal(404, f"no key {key!r}")
            return Response(orjson.dumps(info), media_type="application/json")

        return await self._handle(name, request, work)

    async def healthz(self, request: Request) -> Response:
        return Response(b'{"ok":true}', media_type="application/json")

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_schema())

    async def dashboard(self, request: Request) -> Response:
        return HTMLResponse(PAGE)

    # ---- observing -------------------------------------------------------------------------

    def _n_events(self) -> int:
        c = self._counts()
        return c["predict"] + c["learn"]

    def _counts(self) -> dict:
        total: dict = {}
        for s in self.shards:
            for k, v in s.counts().items():
                total[k] = total.get(k, 0) + v
        return total

    def _score(self) -> tuple:
        c = self._counts()
        return c["scored"], c["loss"]

    def _keys_in_memory(self) -> int:
        return self._counts()["keys"]

    async def stats(self, request: Request) -> Response:
        async def work():
            n, loss = self._score()
            return JSONResponse({
                "learner": self.template.learner, "task": self.template.task,
                "metric": self.shards[0].metric_name(), "metric_since_start": loss / n if n else None,
                "events": self._n_events(), "keys_in_memory": self._keys_in_memory(), "memory_bytes": rss_bytes(),
                "uptime_seconds": time.time() - self.started,
                "series": [dict(zip(("t", "events_per_s", "metric", "keys", "memory_bytes"), row))
                           for row in self.series]})

        return await self._handle("keys", request, work)

    async def metrics(self, request: Request) -> Response:
        async def work():
            return Response(self.prometheus(), media_type="text/plain; version=0.0.4")

        return await self._handle("keys", request, work)

    def prometheus(self) -> str:
        """The Prometheus text exposition of the service's counters."""
        lines = ["# HELP okl_serve_events_total Events processed since start, by operation.",
                 "# TYPE okl_serve_events_total counter"]
        counts = self._counts()
        for op in ("predict", "learn", "duplicate"):
            lines.append(f'okl_serve_events_total{{op="{op}"}} {counts[op]}')
        lines += ["# HELP okl_serve_requests_total Requests answered, by endpoint.", "# TYPE okl_serve_requests_total counter"]
        lines += [f'okl_serve_requests_total{{endpoint="{k}"}} {v}' for k, v in self.requests.items()]
        lines += ["# HELP okl_serve_refused_total Requests refused, by status.", "# TYPE okl_serve_refused_total counter"]
        lines += [f'okl_serve_refused_total{{status="{k}"}} {v}' for k, v in self.refused.items()]
        lines += ["# HELP okl_serve_request_seconds Request latency over the last 20,000 requests per endpoint.",
                  "# TYPE okl_serve_request_seconds summary"]
        for name, d in self.latency.items():
            if d:
                xs = sorted(d)
                for q in (0.5, 0.9, 0.99):
                    lines.append(f'okl_serve_request_seconds{{endpoint="{name}",quantile="{q}"}} '
                                 f'{xs[min(len(xs) - 1, int(q * len(xs)))]:.6f}')
                lines.append(f'okl_serve_request_seconds_count{{endpoint="{name}"}} {len(xs)}')
        n, loss = self._score()
        metric = self.shards[0].metric_name()
        lines += [f"# HELP okl_serve_prequential_{metric} Prequential {metric.replace('_', ' ')} of learned events "
                  "(decision before learning) since start.", f"# TYPE okl_serve_prequential_{metric} gauge",
                  f"okl_serve_prequential_{metric} {loss / n if n else 'NaN'}",
                  "# HELP okl_serve_keys_in_memory Keys whose model is in memory.", "# TYPE okl_serve_keys_in_memory gauge",
                  f"okl_serve_keys_in_memory {self._keys_in_memory()}",
                  "# HELP okl_serve_resident_bytes Resident memory of the process.",
                  "# TYPE okl_serve_resident_bytes gauge", f"okl_serve_resident_bytes {rss_bytes()}"]
        return "\n".join(lines) + "\n"


def rss_bytes() -> int:
    """Resident memory of this process (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
