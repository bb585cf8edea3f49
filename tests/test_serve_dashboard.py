"""The dashboard page of okl serve in a real browser (headless Chromium through the DevTools
protocol): it loads, draws the running metric, and updates itself while events arrive."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
ws_sync = pytest.importorskip("websockets.sync.client", reason="the DevTools client needs websockets")

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevTools:
    """A headless Chromium and one page, driven by Runtime.evaluate."""

    def __init__(self, browser: str):
        self.dir = tempfile.mkdtemp(prefix="okl-chromium-")
        self.port = _free_port()
        self.proc = subprocess.Popen([browser, "--headless=new", "--no-sandbox", "--disable-gpu",
                                      "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={self.dir}",
                                      f"--remote-debugging-port={self.port}", "--remote-allow-origins=*",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.time()
        while True:
            try:
                targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=2).read())
                page = next(t for t in targets if t.get("type") == "page")
                break
            except (OSError, StopIteration, ValueError):
                if time.time() - t0 > 60 or self.proc.poll() is not None:
                    raise RuntimeError("Chromium's DevTools endpoint did not come up")
                time.sleep(0.3)
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(ws_sync.connect(page["webSocketDebuggerUrl"], max_size=None,
                                                            open_timeout=30))
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg["result"]

    def eval(self, expr):
        return self.call("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")

    def close(self):
        try:
            self._stack.close()
        finally:
            self.proc.terminate()
            self.proc.wait(20)
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def browser():
    path = _browser()
    if path is None:
        pytest.skip("no Chromium or Chrome on PATH (Debian: apt-get install chromium; .ci/run installs it)")
    tools = DevTools(path)
    yield tools
    tools.close()


@pytest.fixture
def server(tmp_path):
    import uvicorn

    from okl.serve.app import App
    from okl.serve.shards import Template

    port = _free_port()
    app = App(Template("linear"), str(tmp_path))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    t0 = time.time()
    while not srv.started:
        assert time.time() - t0 < 60
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    th.join(30)


def _send(url, n, seed):
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        x = rng.normal(size=4)
        lines.append(json.dumps({"op": "learn", "key": f"k{int(rng.integers(3))}", "x": x.tolist(),
                                 "y": 1 if x[0] > 0 else -1}))
    req = urllib.request.Request(url + "/v1/events", data=("\n".join(lines) + "\n").encode(), method="POST",
                                 headers={"Content-Type": "application/x-ndjson"})
    assert urllib.request.urlopen(req, timeout=60).status == 200


def _wait(tools, expr, timeout=20):
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = tools.eval(expr)
        if v:
            return v
        time.sleep(0.25)
    raise AssertionError(f"never true in the page: {expr}")


def test_dashboard_loads_draws_the_metric_and_updates_live(browser, server):
    _send(server, 200, seed=0)
    time.sleep(1.3)  # the server's sampler has a point with the running metric
    browser.call("Page.enable")
    browser.call("Page.navigate", url=server + "/")
    _wait(browser, "document.readyState === 'complete' && +(document.body.dataset.ticks || 0) >= 1")
    assert browser.eval("document.title") == "okl serve"
    first = int(browser.eval("document.body.dataset.firstEvents"))
    assert first == 200
    # the running metric is drawn: points on the canvas, and non-white pixels
    _wait(browser, "+document.getElementById('chart-metric').dataset.points >= 2")
    inked = browser.eval("""(() => { const c = document.getElementById('chart-metric');
        const d = c.getContext('2d').getImageData(0, 20, c.width, c.height - 20).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i + 2] > d[i] + 60) n++; return n; })()""")
    assert inked > 20, "no line drawn on the metric chart"
    metric = float(browser.eval("document.getElementById('metric').textContent"))
    assert 0.0 <= metric <= 1.0
    # events arrive while the page is open: it updates without a reload
    ticks = int(browser.eval("document.body.dataset.ticks"))
    _send(server, 300, seed=1)
    _wait(browser, "+document.body.dataset.lastEvents === 500")
    assert int(browser.eval("document.body.dataset.ticks")) > ticks
    assert browser.eval("document.getElementById('events').textContent") == "500"
    assert int(browser.eval("document.body.dataset.firstEvents")) == first  # the same page, not a reload
