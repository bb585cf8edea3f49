"""KRLS-T (okl.learners.krlst) on the KAF benchmarks: Lorenz 1-step prediction in time order (the
kaf_series.py protocol: embedding 6, MSE in dB over samples 1001..end), at okl's defaults and at
KAFBOX's demo settings, and the KRLS-T paper's Fig. 3 channel (a Wiener system whose linear part
switches at iteration 500 of 1500; KAFBOX demo/literature/vanvaerenbergh2012kernel/fig3.m): test
MSE on 500 fresh points of the current channel after each iteration; then the coverage of the
95 % predictive interval on two stationary streams, and the per-event speed against run().

    PYTHONPATH=$PWD/src python docs/results/scripts/krlst.py [--data ../shared/datasets] [--runs 10]
"""
import argparse
import os
import statistics
import time

import numpy as np

import okl
from okl.checks import friedman_regression

from okl.data.series import embed, load_series, mse_db
from okl.experiments.kaf import CHANNEL_B1, CHANNEL_B2, CHANNEL_SNR_DB, CHANNEL_SWITCH, channel_data

PAPER = dict(loss="squared", forgetting=0.999, budget=50, noise=1e-2, kernel=okl.RBF(sigma=1.0), scale=None,
             center_targets=False)


def lorenz(data):
    X, y = embed(load_series("lorenz", data), 6)
    settings = {
        "defaults (lambda 0.999, sn2 1e-2, M 100, width and input map from the stream, centred)": {},
        "defaults at M = 50": {"budget": 50},
        "KAFBOX demo_prediction_kstep's settings (lambda 1, sn2 1e-6, M 100, width 32, raw)":
            {"forgetting": 1.0, "noise": 1e-6, "kernel": okl.RBF(sigma=32.0), "scale": None, "center_targets": False},
        "paper_params (lambda 0.999, sn2 1e-2, raw, uncentred) with width 32":
            {**okl.learner_class("krls-t").paper_params(100), "kernel": okl.RBF(sigma=32.0)},
    }
    s = load_series("lorenz", data)
    Xk, yk = embed(s[:-9], 6)[0][:5000], s[10:][:5000]  # the input at t, the value 10 steps later
    demo = okl.make("krls-t", loss="squared", forgetting=1.0, noise=1e-6, kernel=okl.RBF(sigma=32.0), scale=None,
                    center_targets=False)
    print(f"KAFBOX demo_prediction_kstep as written (10-step, 5,000 samples, lambda 1, sn2 1e-6, M 100, width "
          f"32): MSE after the first 1000 samples {mse_db(demo.run(Xk, yk).decisions, yk):.2f} dB; at okl's "
          f"defaults {mse_db(okl.make('krls-t', loss='squared').run(Xk, yk).decisions, yk):.2f} dB\n")
    print(f"Lorenz 1-step, embedding 6, {len(y):,} samples; variance after sample 1000: "
          f"{10 * np.log10(np.var(y[1000:])):.2f} dB")
    print("| setting | MSE dB (1001..) | diagnostics |\n|---|---|---|")
    for label, params in settings.items():
        m = okl.make("krls-t", loss="squared", **params)
        tr = m.run(X, y)
        print(f"| {label} | {mse_db(tr.decisions, y):.2f} | {m.diagnostics()} |")


def channel(seed):
    """fig3.m's data (okl.experiments.kaf.channel_data) and its noise variance, the test MSE floor."""
    train, y, test, y_test1, y_test2 = channel_data(seed)
    switch = CHANNEL_SWITCH
    clean = np.tanh(np.concatenate([train[:switch] @ CHANNEL_B1, train[switch:] @ CHANNEL_B2]))
    return train, y, test, y_test1, y_test2, switch, 10 ** (-CHANNEL_SNR_DB / 10) * np.var(clean)


def channel_curve(seed, params):
    train, y, test, y1, y2, switch, _ = channel(seed)
    m = okl.make("krls-t", **params)
    curve = np.empty(len(y))
    for i in range(len(y)):
        target = y1 if i < switch else y2
        curve[i] = np.mean((m.predict_many(test) - target) ** 2)
        m.learn_one(train[i], float(y[i]))
    return curve


def fig3(runs):
    curves = np.array([channel_curve(seed, PAPER) for seed in range(runs)])
    mse = curves.mean(axis=0)
    db = 10 * np.log10(mse)
    before = 10 * np.log10(mse[400:500].mean())
    after = 10 * np.log10(mse[1400:].mean())
    level = before + 3.0
    back = next((i for i in range(500, len(db)) if db[i] <= level), None)
    floor = 10 * np.log10(np.mean([channel(seed)[-1] for seed in range(runs)]))
    print(f"\nKRLS-T paper Fig. 3 channel, {runs} runs (lambda 0.999, M 50, sn2 1e-2, width 1, raw, uncentred): "
          "test MSE (mean over runs) in dB")
    print(f"iteration 1: {db[0]:.2f}; 100: {db[99]:.2f}; 500 (last before the switch): {db[499]:.2f}; "
          f"501: {db[500]:.2f}; 600: {db[599]:.2f}; 1000: {db[999]:.2f}; 1500: {db[1499]:.2f}")
    print(f"mean over iterations 401..500: {before:.2f} dB; over 1401..1500: {after:.2f} dB; "
          f"back within 3 dB of the pre-switch level at iteration {None if back is None else back + 1}; "
          f"the test noise alone (the floor): {floor:.2f} dB")


def coverage(X, y, burn=500, confidence=0.95):
    m = okl.make("krls-t", loss="squared")
    hits = widths = 0.0
    for i in range(len(y)):
        iv = m.predict_interval_one(X[i], confidence)
        if i >= burn:
            hits += iv.lower <= y[i] <= iv.upper
            widths += iv.width
        m.learn_one(X[i], float(y[i]))
    return hits / (len(y) - burn), widths / (len(y) - burn)


def intervals():
    print("\nCoverage of the 95 % interval (defaults, predict-then-learn, 5,000 rounds, after 500)")
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-1, 1, size=(5000, 1))
        y = np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(5000)
        cov, width = coverage(x, y)
        print(f"sin(3x) + N(0, 0.1^2), seed {seed}: {100 * cov:.1f} % (mean width {width:.3f})")
    for seed in range(3):
        X, y = friedman_regression(5000, seed=seed)
        cov, width = coverage(X, y)
        print(f"Friedman #1 (okl.checks), seed {seed}: {100 * cov:.1f} % (mean width {width:.3f})")


def speed(data, repeats=3):
    X, y = embed(load_series("lorenz", data), 6)
    X, y = X[:10000], y[:10000]
    params = dict(loss="squared", budget=50)

    def whole():
        m = okl.make("krls-t", **params)
        t0 = time.perf_counter()
        m.run(X, y)
        return len(y) / (time.perf_counter() - t0)

    def events():
        m = okl.make("krls-t", **params)
        t0 = time.perf_counter()
        for i in range(len(y)):
            x = X[i]
            m.predict_one(x)
            m.learn_one(x, float(y[i]))
        return len(y) / (time.perf_counter() - t0)

    whole(), events()
    runs, evs = [], []
    for _ in range(repeats):
        runs.append(whole())
        evs.append(events())
    r, e = statistics.median(runs), statistics.median(evs)
    print(f"\nSpeed, Lorenz embedding 6, 10,000 rounds, M = 50, defaults: run() {r:,.0f} rounds/s, "
          f"predict_one + learn_one {e:,.0f} events/s (medians of {repeats}, alternated): {e / r:.2f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("OKL_DATA", "../shared/datasets"))
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    lorenz(args.data)
    fig3(args.runs)
    intervals()
    speed(args.data)


if __name__ == "__main__":
    main()
