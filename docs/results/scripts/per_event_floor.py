# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
"""Where the per-event time goes (issue 17): for forks, nogd, skegd and fogd at the settings of
../shared/checks/events.py (budget 200, sigma 1, library defaults otherwise; 20,000 codrna rows of
permutation 0), the microseconds per event of predict_one + learn_one, the microseconds per round
of run() on the same rows (the arithmetic with no per-event overhead), and the per-event time of a
tiny model of the same learner (budget 5; fogd also 4 directions), which is the per-event overhead
(validation, the feature cache, two compiled calls); River's LogisticRegression beside them."""
import time

import numpy as np
import okl
from river import linear_model

X, y = okl.load_dataset("codrna")
p = np.random.default_rng(0).permutation(len(y))[:20000]
X, y = np.asarray(X, float)[p], np.asarray(y, float)[p]


def per_event(m, lo=5000, hi=20000):
    for i in range(lo - 200, lo):
        m.predict_one(X[i]); m.learn_one(X[i], y[i])
    t0 = time.perf_counter()
    for i in range(lo, hi):
        m.predict_one(X[i]); m.learn_one(X[i], y[i])
    return (time.perf_counter() - t0) / (hi - lo) * 1e6


dicts = [dict(enumerate(r)) for r in X]
lr = linear_model.LogisticRegression()
t0 = time.perf_counter()
for d, t in zip(dicts, y):
    lr.predict_proba_one(d); lr.learn_one(d, bool(t > 0))
print(f"river LogisticRegression: {(time.perf_counter() - t0) / len(y) * 1e6:.2f} us/event")
for name in ("forks", "nogd", "skegd", "fogd"):
    kw = dict(budget=200, kernel=okl.RBF(sigma=1.0), random_state=0)
    okl.make(name, **kw).run(X[:3000], y[:3000])
    t0 = time.perf_counter()
    okl.make(name, **kw).run(X, y)
    run_us = (time.perf_counter() - t0) / len(y) * 1e6
    m = okl.make(name, **kw)
    m.run(X[:4800], y[:4800])
    event_us = per_event(m)
    tiny = dict(kw, budget=5, **({"n_components": 4} if name == "fogd" else {}))
    t = okl.make(name, **tiny)
    t.run(X[:4800], y[:4800])
    floor_us = per_event(t)
    print(f"{name}: per event {event_us:.2f} us, run() {run_us:.2f} us/round, "
          f"per-event overhead (tiny model) {floor_us:.2f} us")
