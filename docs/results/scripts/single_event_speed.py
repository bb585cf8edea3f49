"""Single learners per event against their own run() (issue 24; docs/results/per-event-speed.md).

    python docs/results/scripts/single_event_speed.py [nogd,forks,skegd,fogd]

Part 1 is the official check's part: library defaults, ``okl.make(name, random_state=0)``, the
first 4,000 rows of codrna (permutation 0), predict_one + learn_one per row against run() on the
same rows, best of 3 in one process. Part 2 splits a stage-2 event (after 2,000 rows): the fast
plan's two compiled calls alone, the pair through the learner's methods, and run()'s round.
Part 3, the floor: an empty compiled call with the predict call's signature, and the decision's
arithmetic (input scale and decision) repeated inside one compiled loop against the compiled
predict call that does it once.
"""

from __future__ import annotations

import sys
import time

import numba as nb
import numpy as np

import okl
from okl.components.dispatch import event_decision
from okl.components.header import O_XS
from okl.engine.fastpath import _F, _ROW, _scale, compiled_entries
from okl.runtime.events import fast_plan_of

event_predict, event_learn = compiled_entries()  # the compiled calls (the module's names are their sources)

X0, y0 = okl.load_dataset("codrna")
X0, y0 = np.asarray(X0, float), np.asarray(y0, float)
p = np.random.default_rng(0).permutation(len(y0))
Xa, ya = np.ascontiguousarray(X0[p]), y0[p]
ROWS = 4000
X, y = Xa[:ROWS], ya[:ROWS]


def per_event(name):
    m = okl.make(name, random_state=0)
    f = np.empty(ROWS)
    t0 = time.perf_counter()
    for i in range(ROWS):
        f[i] = m.predict_one(X[i])
        m.learn_one(X[i], y[i])
    return ROWS / (time.perf_counter() - t0), f


def batch(name):
    m = okl.make(name, random_state=0)
    t0 = time.perf_counter()
    tr = m.run(X, y)
    return ROWS / (time.perf_counter() - t0), np.asarray(tr.decisions)


def best_ns(fn, k=20000):
    fn()
    b = np.inf
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        b = min(b, time.perf_counter() - t0)
    return b / k * 1e9


def stage2(name, warm=2000):
    m = okl.make(name, random_state=0)
    m.run(X[:warm], y[:warm])
    m.predict_one(X[warm])
    F, x, n, label = fast_plan_of(m).F, X[warm + 1].copy(), m.n_seen_, float(y[warm + 1])
    calls = best_ns(lambda: (event_predict(F, x, n), event_learn(F, x, 3.0, n)))  # (3.0: refused, no step)
    predict = best_ns(lambda: event_predict(F, x, n))

    def loop():
        mm = okl.make(name, random_state=0)
        mm.run(X[:warm], y[:warm])
        t0 = time.perf_counter()
        for i in range(warm, ROWS):
            mm.predict_one(X[i])
            mm.learn_one(X[i], y[i])
        t1 = time.perf_counter()
        mm = okl.make(name, random_state=0)
        mm.run(X[:warm], y[:warm])
        t2 = time.perf_counter()
        mm.run(X[warm:], y[warm:])
        return (t1 - t0) / (ROWS - warm) * 1e6, (time.perf_counter() - t2) / (ROWS - warm) * 1e6

    times = [loop() for _ in range(5)]
    pair = best_ns(lambda: (m.predict_one(x), m.learn_one(x, label)))
    return predict, calls, pair, min(t[0] for t in times), min(t[1] for t in times)


@nb.njit([nb.float64(_F, _ROW, nb.int64)])
def _empty(F, x, n):
    return F[0]


@nb.njit
def _decisions(F, x, reps):
    d = x.shape[0]
    xs = F[int(F[O_XS]):int(F[O_XS]) + d]
    s = 0.0
    for _ in range(reps):
        _scale(F, x, False, xs)
        s += event_decision(F, xs)
    return s


def floor(name, warm=2000, reps=100_000):
    m = okl.make(name, random_state=0)
    m.run(X[:warm], y[:warm])
    m.predict_one(X[warm])
    F, x, n = fast_plan_of(m).F, X[warm + 1].copy(), m.n_seen_
    empty = best_ns(lambda: _empty(F, x, n))
    _decisions(F, x, 10)
    t = min(_timed(lambda: _decisions(F, x, reps)) for _ in range(5)) / reps * 1e9
    return empty, t, best_ns(lambda: event_predict(F, x, n))


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else ["nogd", "forks", "skegd", "fogd"]
    for name in names:
        per_event(name)
        batch(name)
        ev = max(per_event(name)[0] for _ in range(3))
        rn = max(batch(name)[0] for _ in range(3))
        diff = np.max(np.abs(per_event(name)[1] - batch(name)[1]))
        print(f"{name}: per event {ev:,.0f}/s run {rn:,.0f}/s ratio {ev / rn:.3f} ({1e6 / ev:.2f} us/event, "
              f"{1e6 / rn:.2f} us/round); max |per-event - run| {diff:.2g}")
    for name in names:
        predict, calls, pair, event, run = stage2(name)
        print(f"{name} stage 2: compiled predict {predict / 1e3:.2f} us, predict + refused learn call "
              f"{calls / 1e3:.2f} us, predict_one + learn_one on one row {pair / 1e3:.2f} us, "
              f"per event over rows 2000-4000 {event:.2f} us, run() {run:.2f} us a round")
    for name in names:
        empty, inner, call = floor(name)
        print(f"{name} floor: empty compiled call {empty:.0f} ns; the decision's arithmetic in a compiled loop "
              f"{inner:.0f} ns, the compiled predict call {call:.0f} ns")
