# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
"""Where auto's round goes (issue 24): auto at library defaults learns 6,000 codrna rows
(permutation 0, every member past its transition), then its engine runs the next 30,000 rows with
the members of one family after another switched on (FORKS's update rounds held off, so the
number is the stage-2 arithmetic), best of 3, in microseconds per row; then the floor of a Python
predict_one + learn_one pair: two empty methods, and two methods each reaching one compiled call
with five arrays and a feature cache keyed on x's bytes."""
import time

import numba as nb
import numpy as np
import okl
from okl._validation import MAX_ABS_FEATURE
from okl.engine.roots import ROWS, compiled_engine
from okl.components.columns import RHO

X0, y0 = okl.load_dataset("codrna")
p = np.random.default_rng(0).permutation(len(y0))
X, y = np.ascontiguousarray(np.asarray(X0, float)[p]), np.asarray(y0, float)[p]
m = okl.make("auto", random_state=0)
m.run(X[:6000], y[:6000])
eng = m._engine()
Xs, Y = m.inputs.scaled_rows(m, X[6000:36000], commit=False), y[6000:36000]
names = [member.name for member in m.pool_]


def engine_us(families):
    best = np.inf
    for _ in range(3):
        F, I, S = eng.F.copy(), eng.I.copy(), eng.S.copy()
        I[:, RHO] = 10 ** 9
        N = len(names)
        S[N:2 * N] = [1.0 if n in families else 0.0 for n in names]  # alive
        D, out = np.full((len(Y), N), np.nan), np.empty((len(Y), 1))
        t0 = time.perf_counter()
        r, _, _ = compiled_engine(False)(ROWS, F, I, eng.R, S, np.zeros(0), Xs, Y, D, out, eng.todo.copy(),
                                         MAX_ABS_FEATURE, True, 0, np.zeros(0), 0.0, 0)
        assert r == len(Y)
        best = min(best, (time.perf_counter() - t0) / len(Y) * 1e6)
    return best


engine_us(("linear",))
prev = 0.0
for fams in [("linear",), ("linear", "nogd"), ("linear", "nogd", "forks"), ("linear", "nogd", "forks", "fogd")]:
    v = engine_us(fams)
    print(f"+ {fams[-1]:6s} {v:6.2f} us per row (+{v - prev:.2f})")
    prev = v


@nb.njit(cache=True)
def _one_call(a, b, c, d, x):
    return a[0] + x[0]


class Skeleton:
    def __init__(self):
        self.a, self.b, self.c, self.d = (np.zeros(10) for _ in range(4))
        self.n, self.cache = 0, None

    def predict_one(self, x):
        f = _one_call(self.a, self.b, self.c, self.d, x)
        self.cache = (x.tobytes(), self.n)
        return f

    def learn_one(self, x, y):
        c = self.cache
        _ = c is not None and c[1] == self.n and c[0] == x.tobytes()
        _one_call(self.a, self.b, self.c, self.d, x)
        self.n += 1
        return self


class Empty:
    def predict_one(self, x):
        return 0.0

    def learn_one(self, x, y):
        return self


for cls in (Empty, Skeleton):
    s = cls()
    for i in range(1000):
        s.predict_one(X[i]); s.learn_one(X[i], y[i])
    t0 = time.perf_counter()
    for i in range(20000):
        s.predict_one(X[i]); s.learn_one(X[i], y[i])
    print(f"{cls.__name__}: {(time.perf_counter() - t0) / 20000 * 1e6:.2f} us per predict_one + learn_one")
