"""The declared state of a step (:mod:`okl.components`): its constants and arrays, by name and
shape, in the order a compiled path lays them out in its buffer. A step module exports its spec
(``CONSTANTS``, ``STATE``, ``WORK``) and a compiled function that takes its views from that
layout; the layout (:mod:`okl.engine.layout`) sizes and fills the block from the same spec, and
``tests/test_components.py`` holds the two against each other."""

from __future__ import annotations

from dataclasses import dataclass

#: the size symbol of a shape: the step's budget (the plan's ``budget``); ``"M+1"`` is one more
BUDGET_SIZE = "M"


def _extent(s, budget: int) -> int:
    if s == BUDGET_SIZE:
        return budget
    if isinstance(s, str) and s.startswith(BUDGET_SIZE + "+"):
        return budget + int(s[len(BUDGET_SIZE) + 1:])
    return int(s)


@dataclass(frozen=True)
class Field:
    """One array of a step's state: its name (the plan maps it to the learner's attribute), its
    shape (integers, :data:`BUDGET_SIZE` for the budget or ``"M+1"``) and its dtype. An ``int`` field is a
    counter array: a compiled path keeps it as floats (exact below 2^53) and writes it back to the
    learner's integers when the learner reads its state."""

    name: str
    shape: tuple
    dtype: str = "float"

    def size(self, budget: int) -> int:
        """The number of entries at this budget."""
        n = 1
        for s in self.shape:
            n *= _extent(s, budget)
        return n

    def dims(self, budget: int) -> tuple[int, ...]:
        """The shape at this budget."""
        return tuple(_extent(s, budget) for s in self.shape)


def block_size(constants: tuple[str, ...], state: tuple[Field, ...], work: tuple[Field, ...], budget: int) -> int:
    """The length of a step's block: its constants, its state, its work space."""
    return len(constants) + sum(f.size(budget) for f in state + work)
