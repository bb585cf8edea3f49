"""The views of a series the Forecaster's members learn on, and each member's kernel width
(:func:`member_specs`), for :class:`okl.timeseries.Forecaster`."""

from __future__ import annotations

import math

import numpy as np


def member_specs(y, period: int, orders, pool, log_views: bool, linear_only: bool,
                 kept: dict | None = None, linear_orders=()) -> list[tuple]:
    """Every member as (season, order, learner name, width or None, params, log).

    The views: the values (season 0), their first differences (season 1: y_{u+h} relative to y_u)
    and their seasonal differences (season ``period`` > 1), each of the values and, with
    ``log_views``, of their logs. Each ``pool`` entry (name, width in units or None, params) at each
    order; with ``linear_only`` the seasonal and log views take the affine (linear autoregression)
    entries only: the kernel grid on the values (the nonlinear dynamics, KAFBOX's setting), the
    linear autoregression on every other view (Box and Jenkins' differences and log make a trend and
    a multiplicative season linear; AirlinePassengers MAE 10.00 / 16.81 / 18.37 at +1 / +6 / +12
    against 10.11 / 17.35 / 20.36 with the whole grid on every view, at a quarter of the members:
    the grid on six views cost Lorenz 20 times the time). A width unit is the view's spread (std of
    its differences, or of its values) times sqrt(order), the typical distance of two embedded rows.
    ``kept`` (:func:`kept_widths`): the widths of earlier members of the views without a season (0
    and 1), used in their order instead of measured ones. ``linear_orders``: more orders for the
    affine entries only (the low orders of Box and Jenkins' autoregressions, cheap beside the grid)."""
    kept = kept or {}
    seasons = (0, 1, period) if period > 1 else (0, 1)
    specs = []
    for log in ((False, True) if log_views else (False,)):
        v = np.log(y) if log else np.asarray(y, dtype=np.float64)
        for season in seasons:
            spread = float(np.std(v[season:] - v[:-season])) if season and len(v) > season else 0.0
            spread = spread or float(np.std(v)) or 1.0
            for order in sorted(set(orders) | set(linear_orders)):
                unit = spread * math.sqrt(order)
                for name, width, params in pool:
                    linear = params.get("kernel") == "affine"
                    if not linear and ((season > 1 or log) and linear_only or order not in orders):
                        continue
                    same = kept.get(_width_key(log, season, order, name, params)) if season < 2 else None
                    sigma = same.pop(0) if same else None if width is None else width * unit
                    specs.append((season, order, name, sigma, params, log))
    return specs


def kept_widths(specs) -> dict:
    """The widths of the members of the views without a season, keyed for :func:`member_specs`."""
    kept: dict = {}
    for season, order, name, sigma, params, log in specs:
        if season < 2:
            kept.setdefault(_width_key(log, season, order, name, params), []).append(sigma)
    return kept


def _width_key(log: bool, season: int, order: int, name: str, params: dict) -> tuple:
    """Which member a kept width belongs to (the pool's entries of one name and params differ in
    width only, so several widths share a key, in the pool's order)."""
    return log, season, order, name, repr(params)


__all__ = ["kept_widths", "member_specs"]
