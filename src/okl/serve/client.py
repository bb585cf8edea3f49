"""``okl.serve.Client``: the service's API from Python (standard library only: ``http.client``).

Retries: a request that fails before its answer (connection refused or reset, a 503) is sent
again up to ``retries`` times with a growing pause (0.1 s doubling, at most 2 s). A learn is made
idempotent first: a learn without an ``id`` gets a random one (``uuid4``), so a retry of a learn
the server had logged but not answered is answered ``"duplicate": true`` and learned once.
Predicts change no model and are retried as they are. An answer 4xx is never retried: it raises
:class:`ServeError` with the server's message.

>>> c = Client("http://127.0.0.1:8000")            # doctest: +SKIP
>>> c.learn([0.1, 0.2], 1, key="user-7")            # doctest: +SKIP
>>> c.predict([0.1, 0.2], key="user-7")["decision"] # doctest: +SKIP
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from urllib.parse import quote, urlsplit


class ServeError(RuntimeError):
    """An answer that is not 200: ``status`` and the server's ``body`` (its JSON when it sent one)."""

    def __init__(self, status: int, body):
        self.status, self.body = status, body
        msg = body.get("error") if isinstance(body, dict) else body
        super().__init__(f"okl serve answered {status}: {msg}")


class Client:
    """A client of one ``okl serve``; not shared between threads (one connection)."""

    def __init__(self, url: str = "http://127.0.0.1:8000", token: str | None = None, timeout: float = 60.0,
                 retries: int = 5):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be http(s)://host:port, got {url!r}")
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname, parts.port or (443 if self.https else 80)
        self.token, self.timeout, self.retries = token, timeout, retries
        self._conn = None

    def _connection(self):
        if self._conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            self._conn = cls(self.host, self.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"):
        """(status, bytes) of one request, retried as the module docstring says."""
        headers = {"Content-Type": content_type}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        pause = 0.1
        for attempt in range(self.retries + 1):
            try:
                conn = self._connection()
                conn.request(method, path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                if r.status == 503 and attempt < self.retries:
                    raise ConnectionError("503")
                if r.status != 200:
                    try:
                        raise ServeError(r.status, json.loads(data))
                    except ValueError:
                        raise ServeError(r.status, data.decode(errors="replace")) from None
                return data
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == self.retries:
                    raise
                time.sleep(pause)
                pause = min(2.0, pause * 2)
        raise AssertionError("unreachable")

    @staticmethod
    def _event(key, eid, x, y=None) -> dict:
        e = {}
        if key is not None:
            e["key"] = key
        if eid is not None:
            e["id"] = eid
        if x is not None:
            e["x"] = x.tolist() if hasattr(x, "tolist") else x
        if y is not None:
            e["y"] = y.item() if hasattr(y, "item") else y
        return e

    def predict(self, x, key: str | None = None, id: str | None = None) -> dict:  # noqa: A002
        """``{"decision", "prediction", "proba"?, "new_key"}``; with ``id`` the features are kept for its label."""
        return json.loads(self.request("POST", "/v1/predict", json.dumps(self._event(key, id, x)).encode()))

    def learn(self, x=None, y=None, key: str | None = None, id: str | None = None) -> dict:  # noqa: A002
        """Learn ``y`` for ``x``, or for the features kept under ``id`` (``x=None``); at most once."""
        if y is None:
            raise ValueError("learn needs a label y")
        e = self._event(key, id or str(uuid.uuid4()), x, y)
        return json.loads(self.request("POST", "/v1/learn", json.dumps(e).encode()))

    def events(self, events: list[dict]) -> list[dict]:
        """NDJSON: ``[{"op": "predict"|"learn", ...}]`` answered in order; learns without an id get one."""
        lines = []
        for e in events:
            if e.get("op") == "learn" and "id" not in e:
                e = {**e, "id": str(uuid.uuid4())}
            lines.append(json.dumps(e))
        out = self.request("POST", "/v1/events", ("\n".join(lines) + "\n").encode(), "application/x-ndjson")
        return [json.loads(line) for line in out.decode().splitlines() if line.strip()]

    def key(self, key: str) -> dict:
        return json.loads(self.request("GET", "/v1/keys/" + quote(key, safe="")))

    def model_file(self, key: str, path: str) -> str:
        """Write the key's okl model file to ``path`` (load it with ``okl.Learner.load``)."""
        data = self.request("GET", "/v1/keys/" + quote(key, safe="") + "/model")
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def delete(self, key: str) -> dict:
        return json.loads(self.request("DELETE", "/v1/keys/" + quote(key, safe="")))

    def health(self) -> bool:
        try:
            self.request("GET", "/healthz")
            return True
        except (OSError, ServeError, http.client.HTTPException):
            return False
