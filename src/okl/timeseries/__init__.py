"""Time series: the embedding (:func:`embed`) and the :class:`Forecaster` (River's forecaster
protocol, direct forecasts at every horizon, calibrated intervals)."""

from okl.timeseries.embedding import embed
from okl.timeseries.forecaster import Forecaster
from okl.timeseries.season import detect_period

__all__ = ["Forecaster", "detect_period", "embed"]
