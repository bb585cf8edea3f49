"""``auto``: a pool of learners and widths mixed online (:mod:`~okl.ensemble.auto`), its default
pools (:mod:`~okl.ensemble.pool`) and its paths into the compiled engine
(:mod:`~okl.ensemble.paths`). Above the learners and the engine; nothing below imports it (the
runtime reaches ``auto`` by its registered name)."""

from okl.ensemble.auto import Auto

__all__ = ["Auto"]
