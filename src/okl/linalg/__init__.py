"""Numerical building blocks: SJLT / column-sampling sketches, the incremental randomized sketch
(SkeGD), rank-k and randomized SVD, pseudo-inverse (ALGORITHMS.md section 1)."""

from okl.linalg.sketch import (IncrementalSketch, sample_columns, selection_matrix, sjlt, sjlt_entries,
                               sjlt_row)
from okl.linalg.svd import PINV_RTOL, SVD_METHODS, pinv, rank_k_svd, top_k_symmetric
from okl.linalg.tisvd import TruncatedIncrementalSVD, tisvd_update, tisvd_update_code, truncated_svd
from okl.linalg.inverse import sherman_morrison_update, sherman_morrison_symmetric

__all__ = ["IncrementalSketch", "sample_columns", "selection_matrix", "sjlt", "sjlt_entries", "sjlt_row",
           "PINV_RTOL", "SVD_METHODS", "pinv", "rank_k_svd", "top_k_symmetric"]
__all__ += ["TruncatedIncrementalSVD", "tisvd_update", "tisvd_update_code", "truncated_svd",
            "sherman_morrison_update", "sherman_morrison_symmetric"]
