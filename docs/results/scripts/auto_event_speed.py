# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
"""auto per event in steady state (issue 24; docs/results/per-event-speed.md): auto at library
defaults learns 20,000 codrna rows (permutation 0) with run(), then the next 4,000 rows three ways,
each from the same state, best of 3, in microseconds per row:

* predict_one + learn_one (what a live stream calls);
* the engine's two compiled calls alone on the already scaled rows (the floor of the per-event
  arithmetic: every member's features computed for one row at a time);
* run() on the same rows (the kernel maps' features four rows a pass over the map);

then the same event through River's adapter (``OKLRiverClassifier``, dicts with string keys)
against the learner's own predict_one + learn_one on the first 4,000 rows."""
import time

import numpy as np
import okl
from okl.engine.roots import call_learn, call_predict
from okl.runtime.events import event_state
from okl.river import OKLRiverClassifier

X0, y0 = okl.load_dataset("codrna")
p = np.random.default_rng(0).permutation(len(y0))
X, y = np.ascontiguousarray(np.asarray(X0, float)[p]), np.asarray(y0, float)[p]
W, N = 20000, 4000


def warm():
    m = okl.make("auto", random_state=0)
    m.run(X[:W], y[:W])
    return m


def per_event():
    m = warm()
    t0 = time.perf_counter()
    for i in range(W, W + N):
        m.predict_one(X[i])
        m.learn_one(X[i], y[i])
    return (time.perf_counter() - t0) / N * 1e6


def engine_calls():
    m = warm()
    XS = m.inputs.scaled_rows(m, X[W:W + N], commit=False)
    ev = event_state(m)
    t0 = time.perf_counter()
    for i in range(N):
        eng = m._engine(ev)
        call_predict(eng, XS[i])
        _, _, k = call_learn(eng, XS[i], y[W + i], True)
        if k:
            m._python_steps(eng, XS[i], y[W + i])
        m.n_seen_ += 1
    return (time.perf_counter() - t0) / N * 1e6


def batch():
    m = warm()
    t0 = time.perf_counter()
    m.run(X[W:W + N], y[W:W + N])
    return (time.perf_counter() - t0) / N * 1e6


dicts = [{f"f{j}": float(v) for j, v in enumerate(r)} for r in X[:N]]
labels = [bool(t > 0) for t in y[:N]]


def river():
    m = OKLRiverClassifier(seed=0)
    t0 = time.perf_counter()
    for d, t in zip(dicts, labels):
        m.predict_one(d)
        m.learn_one(d, t)
    return (time.perf_counter() - t0) / N * 1e6


def arrays():
    m = okl.make("auto", random_state=0)
    t0 = time.perf_counter()
    for i in range(N):
        m.predict_one(X[i])
        m.learn_one(X[i], y[i])
    return (time.perf_counter() - t0) / N * 1e6


for fn in (per_event, engine_calls, batch, river, arrays):
    fn()  # loads compiled code
rates = {fn.__name__: min(fn() for _ in range(3)) for fn in (per_event, engine_calls, batch, river, arrays)}
print(f"auto, rows {W}-{W + N}: predict_one + learn_one {rates['per_event']:.2f} us, the engine's two calls alone "
      f"{rates['engine_calls']:.2f} us, run() {rates['batch']:.2f} us a row")
print(f"auto, rows 0-{N}: OKLRiverClassifier (dicts) {rates['river']:.2f} us an event, the learner on arrays "
      f"{rates['arrays']:.2f} us")
