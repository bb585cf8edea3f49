"""Evaluation: progressive test-then-train runs over permutations, tables, progress."""

from okl.eval.progress import Progress
from okl.eval.progressive import RunSummary, evaluate, learner_params, majority_rate, mean_predictor_loss
from okl.eval.tables import markdown_table, mean_std, write_csv

__all__ = ["Progress", "RunSummary", "evaluate", "learner_params", "majority_rate", "mean_predictor_loss",
           "markdown_table", "mean_std", "write_csv"]
