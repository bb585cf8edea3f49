"""Plain-text / Markdown tables of mean ± std, with published numbers beside ours."""

from __future__ import annotations

import csv
import os
from typing import Sequence

import numpy as np


def mean_std(values, digits: int = 2) -> str:
    """'mean ± std' (population std, as the papers' tables) of a sequence; '-' when empty."""
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.all(np.isnan(values)):
        return "-"
    return f"{np.nanmean(values):.{digits}f} ± {np.nanstd(values):.{digits}f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table whose columns are padded so it also reads well as plain text."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(cells[0]), sep] + [fmt(r) for r in cells[1:]])


def write_csv(path: str | os.PathLike, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
