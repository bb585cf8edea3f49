"""The declared state of a step (:mod:`okl.components`): its constants and arrays, by name and
shape, in the order a compiled path lays them out in its buffer. A step module exports its spec
(``CONSTANTS``, ``STATE``, ``WORK``) and a compiled function that takes its views from that
layout; the layout (:mod:`okl.engine.layout`) sizes and fills the block from the same spec, and
``tests/test_components.py`` holds the two against each other.

Every member round has one signature, ``round(F, o, rows, alpha, m, kind, a, b, c, x, y, f, lkind)``
(its block at offset o of F; the map's stored rows, coefficients and count; the kernel's spec; the
row, its label or target, the map's decision and the loss code) and returns the new count, or
:data:`ROUND_FAILED` / :data:`ROUND_IN_PYTHON`.

A shape's entries are integers or size symbols: ``"M"`` the plan's budget (the rows its map
stores), ``"d"`` the input width, the name of one of the step's integer constants (KAP's order
``"p"``), or one of these plus an integer (``"M+1"``)."""

from __future__ import annotations

from dataclasses import dataclass

#: the size symbols every layout knows: the plan's budget and the input width
BUDGET_SIZE, WIDTH_SIZE = "M", "d"

#: what a member round returns besides the new dictionary size: the round failed (no usable state
#: is left: the member leaves auto's pool), or the learner's Python must take the round (nothing
#: was learned: e.g. a buffer of random draws used up)
ROUND_FAILED, ROUND_IN_PYTHON = -1, -2


def _extent(s, sizes: dict) -> int:
    if isinstance(s, int):
        return s
    name, _, extra = s.partition("+")
    return int(sizes[name]) + (int(extra) if extra else 0)


@dataclass(frozen=True)
class Field:
    """One array of a step's state: its name (the plan maps it to the learner's attribute), its
    shape (see the module docstring; ``()``: a scalar) and its dtype. An ``int`` field is a
    counter: a compiled path keeps it as floats (exact below 2^53) and writes it back to the
    learner's integers when the learner reads its state; so is a scalar (:attr:`shared`)."""

    name: str
    shape: tuple
    dtype: str = "float"

    @property
    def shared(self) -> bool:
        """Whether a compiled path shares the learner's array (a float array: the learner's
        attribute becomes a view of the path's buffer), else it copies the value in and writes it
        back (an int array, a scalar)."""
        return self.dtype == "float" and bool(self.shape)

    def size(self, sizes: dict) -> int:
        """The number of entries at these sizes (a scalar: 1)."""
        n = 1
        for s in self.shape:
            n *= _extent(s, sizes)
        return n

    def dims(self, sizes: dict) -> tuple[int, ...]:
        """The shape at these sizes."""
        return tuple(_extent(s, sizes) for s in self.shape)


def block_size(constants: tuple[str, ...], state: tuple[Field, ...], work: tuple[Field, ...], sizes: dict) -> int:
    """The length of a step's block: its constants, its state, its work space."""
    return len(constants) + sum(f.size(sizes) for f in state + work)
