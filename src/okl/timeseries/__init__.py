"""Time series: the embedding (:func:`embed`) and the :class:`Forecaster` (River's forecaster
protocol, direct forecasts at every horizon, calibrated intervals), and :func:`forecasts_along`:
every forecast a forecaster makes along a series, for scoring it."""

from okl.timeseries.embedding import embed
from okl.timeseries.evaluation import Forecasts, forecasts_along
from okl.timeseries.forecaster import Forecaster
from okl.timeseries.season import detect_period

__all__ = ["Forecaster", "Forecasts", "detect_period", "embed", "forecasts_along"]
