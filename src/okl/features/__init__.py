"""Explicit feature maps (ALGORITHMS.md section 1): the SkeGD/FORKS sketched map, ...

Modules are imported directly (``from okl.features.sketched import sketched_map``); this package
re-exports the sketched map for convenience.
"""

from okl.features.sketched import sketched_map
from okl.features.kors import KORS  # noqa: F401

__all__ = ["sketched_map"]
