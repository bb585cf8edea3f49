"""docs/results/target-centring.md, "What one outlier target does": one target of 1e30 in a synthetic
regression stream, and the same stream's targets times 1e-200, at the library defaults.

    python docs/results/scripts/outlier_target.py
"""
import numpy as np, okl
r = np.random.default_rng(0)
X = r.normal(size=(3000, 4)); y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * r.normal(size=3000)
for name in ("linear", "nogd", "auto"):
    base = okl.make(name, loss="squared", random_state=0).run(X, y).decisions
    yo = y.copy(); yo[500] = 1e30
    out = okl.make(name, loss="squared", random_state=0).run(X, yo).decisions
    print(name, "clean mse after 500:", f"{np.mean((base[501:]-y[501:])**2):.3g}",
          "| with one 1e30 at row 500: prediction at 501, 1000, 2999:", " ".join(f"{out[t]:.3g}" for t in (501, 1000, 2999)))
    s = 1e-200
    tiny = okl.make(name, loss="squared", random_state=0).run(X, y * s).decisions / s
    print(name, f"targets x1e-200: mse ratio to unscaled {np.mean((tiny-y)**2)/np.mean((base-y)**2):.2f}")
