"""Reproducible experiments: one registered function per paper table or figure.

``okl reproduce <id>`` calls the function registered under ``id``. Each experiment receives an
:class:`ExperimentContext` (data directory, number of runs, output directory, progress flag,
``quick`` for a tiny configuration used in tests) and returns an :class:`ExperimentResult`:
Markdown text (our mean +/- std beside the paper's number in every cell), and the paths of the
CSV and PNG files it wrote into ``ctx.out_dir``.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass
class ExperimentContext:
    data_dir: str | None = None
    runs: int = 20
    out_dir: Path = Path("okl-results")
    progress: bool = True
    quick: bool = False
    options: dict = field(default_factory=dict)
    #: ``okl reproduce --protocol``: "okl" (features scaled to [0, 1], widths recorded from the stream)
    #: or "published" (the file, features, width and budget the authors' code used); DESIGN.md
    protocol: str = "okl"

    def __post_init__(self):
        self.out_dir = Path(self.out_dir)
        os.makedirs(self.out_dir, exist_ok=True)


@dataclass
class ExperimentResult:
    markdown: str
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class Experiment:
    id: str
    description: str
    datasets: tuple[str, ...]
    func: Callable[[ExperimentContext], ExperimentResult]
    #: the ``ctx.options`` keys it reads (``okl reproduce ID --param NAME=VALUE``) -> what each does
    params: dict[str, str] = field(default_factory=dict)
    #: the ``--protocol`` values it implements
    protocols: tuple[str, ...] = ("okl",)


def check_options(exp: Experiment, options: dict) -> None:
    """Refuse ``options`` keys that ``exp`` does not declare (ValueError naming the nearest key):
    an experiment reads its options with defaults, so a misspelt key (``datsets=german``) would
    otherwise be ignored and the whole table run."""
    import difflib

    unknown = sorted(set(options) - set(exp.params))
    if not unknown:
        return
    key = unknown[0]
    near = difflib.get_close_matches(key, list(exp.params), n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    keys = ", ".join(sorted(exp.params)) if exp.params else "none"
    raise ValueError(f"unknown --param key {key!r} for {exp.id}: {hint}its keys: {keys} "
                     f"(okl reproduce {exp.id} --help describes them)")


EXPERIMENTS: dict[str, Experiment] = {}

#: modules that define experiments; imported lazily by :func:`experiments`
MODULES: list[str] = ["okl.experiments.forks", "okl.experiments.tables", "okl.experiments.skegd", "okl.experiments.opfes",
                     "okl.experiments.kons", "okl.experiments.defaults", "okl.experiments.river_streams",
                     "okl.experiments.kaf"]


def experiment(id: str, description: str, datasets: tuple[str, ...] = (), params: dict[str, str] | None = None,
               protocols: tuple[str, ...] = ("okl",)):
    """Decorator registering ``func(ctx) -> ExperimentResult`` as ``okl reproduce <id>``;
    ``params`` declares the ``ctx.options`` keys it reads (listed by ``okl reproduce ID --help``),
    ``protocols`` the ``--protocol`` values it implements."""

    def deco(func):
        if id in EXPERIMENTS:
            raise ValueError(f"experiment {id!r} already registered")
        EXPERIMENTS[id] = Experiment(id, description, tuple(datasets), func, dict(params or {}), tuple(protocols))
        return func

    return deco


def experiments() -> dict[str, Experiment]:
    for mod in MODULES:
        importlib.import_module(mod)
    return EXPERIMENTS
