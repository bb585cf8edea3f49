"""One BLAS thread for the small matrix products of the per-round learners.

The products inside ``run`` are thin (blocks of rows x a few hundred columns, SVDs of s_p x s_p
sketches). Multi-threaded OpenBLAS is slower on them, and on a busy machine by 10-30x (measured
on this project's 2-core machines: codrna features 1.69 s with 2 threads under load vs 0.063 s
with 1). ``Learner.run`` therefore holds BLAS to one thread while it runs; parallelism belongs to
the experiment layer (one process per cell).
"""

from __future__ import annotations

import contextlib

_CONTROLLER = None


def one_blas_thread():
    """Context limiting BLAS/LAPACK to one thread (threadpoolctl; ~10 us to enter)."""
    global _CONTROLLER
    try:
        if _CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER = ThreadpoolController()
        return _CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing or unable to inspect the BLAS
        return contextlib.nullcontext()
