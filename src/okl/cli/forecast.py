"""``okl forecast``: okl's :class:`okl.timeseries.Forecaster` on a series, one value at a time,
beside a linear autoregression and the last value, per horizon: MSE (dB), MAE, and the coverage and
mean width of its intervals (90 % unless ``--alpha``); a PNG of the series, the forecasts and the band."""

from __future__ import annotations

import math

import numpy as np

from okl.cli._common import add_data_dir_options


#: the values of a registered series used by default (KAFBOX's demo_prediction length)
KAFBOX_LENGTH = 3000


def read_series(spec: str, data_dir: str | None = None, column: str | None = None) -> tuple[str, np.ndarray]:
    """A registered series' values (okl.data.series.SERIES), or a file's
    (:func:`okl.data.series.read_series_file`: one value a line, or a column of a delimited file,
    ``column`` or the only one of numbers); a bad value raises ValueError naming file, line and column."""
    from okl.data.series import SERIES, load_series, read_series_file

    if spec in SERIES:
        if column is not None:
            raise ValueError(f"--column: {spec} is a registered series of one column")
        return spec, load_series(spec, data_dir)
    try:
        values, which = read_series_file(spec, column)
    except OSError as exc:
        raise ValueError(f"--series {spec!r}: neither a registered series ({', '.join(SERIES)}) nor a readable "
                         f"file ({exc.strerror or exc})") from None
    if len(values) < 20:
        raise ValueError(f"{spec}: {len(values)} values; a forecast needs at least 20")
    return (f"{spec} ({which})" if which else spec), values


def linear_ar(s: np.ndarray, order: int, H: int, ridge: float = 1e-6) -> np.ndarray:
    """Direct linear autoregressions (least squares on the lags and an intercept, refit every
    round on all pairs seen): P[t, h - 1] forecasts s[t + h] from s[..t]. Cost O(n H order^3)."""
    from okl.timeseries.embedding import lags

    n = len(s)
    P = np.full((n, H), np.nan)
    A = np.zeros((H, order + 1, order + 1))
    b = np.zeros((H, order + 1))
    for t in range(n):
        x_t = np.r_[1.0, lags(s, t, order)]
        for h in range(1, H + 1):
            if t - h >= 0:
                x = np.r_[1.0, lags(s, t - h, order)]
                A[h - 1] += np.outer(x, x)
                b[h - 1] += x * s[t]
                w = np.linalg.solve(A[h - 1] + ridge * np.trace(A[h - 1]) / (order + 1) * np.eye(order + 1),
                                    b[h - 1])
                P[t, h - 1] = x_t @ w
            else:
                P[t, h - 1] = s[t]
    return P


def cmd_forecast(args) -> int:
    from okl.data.series import SERIES
    from okl.timeseries import Forecaster, forecasts_along

    name, s = read_series(args.series, args.data_dir, args.column)
    if args.n is not None and args.n < 0:
        raise ValueError(f"--n must be >= 0 (0: every value), got {args.n}")
    # (the literature's series at KAFBOX's length, 3,000 values, unless told; a user's file whole)
    cut = args.n if args.n is not None else KAFBOX_LENGTH if args.series in SERIES else 0
    n = min(len(s), cut) if cut else len(s)
    if n < len(s):
        name = f"{name} (its first {n} of {len(s)} values; --n 0 for all)"
    s = s[:n]
    H = args.horizon
    skip = args.skip if args.skip is not None else n // 3
    if not 0 <= skip < n - H:
        raise ValueError(f"--skip must be in 0 .. {n - H - 1} (the series has {n} values), got {skip}")
    if not 0.0 < args.alpha < 1.0:
        raise ValueError(f"--alpha must be in (0, 1) (a 1 - alpha interval), got {args.alpha}")
    level = f"{100 * (1 - args.alpha):g} %"
    # (row t: the forecasts made from s[..t])
    P, lo, hi = forecasts_along(Forecaster(learner=args.learner, order=args.order), s, H, alpha=args.alpha,
                                progress=not args.quiet)
    AR = linear_ar(s, args.order or 6, H)
    rows = []
    print(f"series {name}: {n} values, forecasts scored on values {skip}..{n - 1}; okl Forecaster(learner="
          f"{args.learner!r}, order={args.order}); {level} intervals")
    print("| horizon | okl MSE (dB) | okl MAE | coverage % | mean width | linear AR MSE (dB) | linear AR MAE | "
          "last value MSE (dB) | last value MAE |")
    print("|---|---|---|---|---|---|---|---|---|")
    for h in range(1, H + 1):
        t = np.arange(max(skip - h, 0), n - h)
        y = s[t + h]

        def score(p):
            e = y - p
            return f"{10 * math.log10(np.mean(e * e)):.2f}", f"{np.mean(np.abs(e)):.4g}"

        inside = (lo[t, h - 1] <= y) & (y <= hi[t, h - 1])
        row = [str(h), *score(P[t, h - 1]), f"{100 * inside.mean():.1f}", f"{np.mean(hi[t, h - 1] - lo[t, h - 1]):.4g}",
               *score(AR[t, h - 1]), *score(s[t])]
        rows.append(row)
        print("| " + " | ".join(row) + " |")
    if args.png:
        plot(args.png, name, s, P, lo, hi, H, skip, level)
        print(f"figure: {args.png}")
    return 0


def plot(path, name, s, P, lo, hi, H, skip, level="90 %"):
    """The series, the 1-step and H-step forecasts and the H-step band over the last 300 scored
    values; colours and line styles cycled together, the legend outside the axes."""
    from okl.plotting import curve_style, pyplot

    plt = pyplot()  # (says what to install when matplotlib is missing)

    n = len(s)
    a = max(skip, n - 300)
    t = np.arange(a, n)
    fig, ax = plt.subplots(figsize=(10, 4))
    curves = [("series", t, s[a:n])]
    for h in sorted({1, H}):
        curves.append((f"forecast, {h} step{'s' if h > 1 else ''} ahead", t, P[t - h, h - 1]))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, x, v) in enumerate(curves):
        ax.plot(x, v, linewidth=1.2, label=label, **curve_style(i, colours))
    ax.fill_between(t, lo[t - H, H - 1], hi[t - H, H - 1], color="grey", alpha=0.25,
                    label=f"{level} interval, {H} step{'s' if H > 1 else ''} ahead")
    ax.set_xlabel("time")
    ax.set_title(f"{name}: okl Forecaster")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def add_parser(sub):
    s = sub.add_parser("forecast", help="forecast a series at every horizon beside a linear AR and the last value")
    s.add_argument("--series", required=True, help="lorenz, mg30, santafe, or a file: one value a line, or a "
                   "comma, tab or semicolon (decimal comma) separated file with or without a header (a date "
                   "column beside the values is fine; lines starting with # are comments)")
    s.add_argument("--column", help="the file's column holding the series: a header name or a 1-based number "
                   "(default: its only column of numbers)")
    s.add_argument("--horizon", type=int, default=10, help="the largest horizon H (default 10)")
    s.add_argument("--order", type=int, help="the embedding order (default: chosen by the Forecaster)")
    s.add_argument("--learner", default="auto", help="auto (the series pool) or a registered learner")
    s.add_argument("--n", type=int, help="values used, from the first (0: all; default: all of a file, "
                   f"the first {KAFBOX_LENGTH} of lorenz, mg30 and santafe, as KAFBOX's demos)")
    s.add_argument("--skip", type=int, help="values left out of the scores (default a third)")
    s.add_argument("--alpha", type=float, default=0.1, help="the intervals' miss rate (default 0.1: 90 %% intervals)")
    s.add_argument("--png", default="forecast.png", help="the figure's file (default forecast.png; '' for none)")
    add_data_dir_options(s)
    s.set_defaults(func=cmd_forecast)
    return s
