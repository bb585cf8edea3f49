"""Numerical building blocks: SJLT / column-sampling sketches, the incremental randomized sketch
(SkeGD), rank-k and randomized SVD, pseudo-inverse (ALGORITHMS.md section 1)."""

from okl.linalg.sketch import (IncrementalSketch, sample_columns, selection_matrix, sjlt, sjlt_entries,
                               sjlt_row)
from okl.linalg.svd import PINV_RTOL, SVD_METHODS, pinv, rank_k_svd, top_k_symmetric

__all__ = ["IncrementalSketch", "sample_columns", "selection_matrix", "sjlt", "sjlt_entries", "sjlt_row",
           "PINV_RTOL", "SVD_METHODS", "pinv", "rank_k_svd", "top_k_symmetric"]
