"""Time series of the kernel adaptive filtering literature, and the one-step prediction protocol.

The series are the data files that KAFBOX (steven2358/kafbox, FreeBSD licence) ships and the
literature's figures use (``../shared/datasets/README.md`` section E): one value per line, looked
up as ``kaf/NAME.dat.gz`` (or flat) in the data directories of :func:`okl.data.registry.data_dirs`.

Protocol (KAFBOX's ``demo_prediction.m``): the input at time t is the last p values (a *time
embedding* of order p, zero-padded before the first value), the target is the next value; a
learner predicts each target before it learns it, in time order (rows are never permuted: a
permutation would hand the learner the future), and the score is the mean squared error in dB over
the samples after the first ``skip`` = 1000.

>>> import numpy as np
>>> X, y = embed(np.arange(1.0, 6.0), 2)
>>> X.tolist(), y.tolist()
([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0], [4.0, 3.0]], [2.0, 3.0, 4.0, 5.0])
>>> round(mse_db(np.zeros(4), np.full(4, 10.0), skip=0), 6)
20.0
"""

from __future__ import annotations

import gzip
import hashlib
import math
import re
import zlib
from pathlib import Path

import numpy as np

from okl.data.readers import DataFormatError, finite_float, has_header, number_problem, open_text, read_delimited
from okl.data.registry import data_dirs

#: a number written with a decimal comma (1,5 or -0,25e3), as a semicolon-separated file holds it
DECIMAL_COMMA = re.compile(r"^([+-]?\d*),(\d+(?:[eE][+-]?\d+)?)$")

#: name -> sha256 of the decompressed file (../shared/datasets/README.md section E): a series read
#: for a reproduction is checked against it, so a truncated or edited copy is named, not compared
#: with the published numbers
SERIES_SHA256 = {
    "lorenz": "187050758c1faaa3f7c3e6b6031a43efe9bbbdc901cf3b1342d023d4ebbc2337",
    "mg30": "729e59a5f0251b352c155bb29b55c2c613dda93abd2e126f0dd6031d3ac3b5e7",
    "santafe": "2445f3df2b91cfb41c3f4f1143e8882e8329b9449ec7ffc739c6d4bd5c6650a0",
}
#: where the series come from (the fix a damaged copy's error names)
KAFBOX_SOURCE = "steven2358/kafbox @ 694cf94 (data/NAME.dat, gzipped)"

#: name -> (file, the embedding the literature uses, what it is)
SERIES = {
    "lorenz": ("lorenz.dat.gz", 6, "Lorenz attractor, x coordinate (10,001 values)"),
    "mg30": ("mg30.dat.gz", 7, "Mackey-Glass, delay 30 (5,000 values)"),
    "santafe": ("santafe.dat.gz", 6, "Santa Fe competition laser series A (10,093 values)"),
}
#: samples left out of the score (KAFBOX's Lorenz demo: the MSE after the first 1000)
SKIP = 1000


def find_series(name: str, data_dir=None) -> Path | None:
    """The file of series ``name`` in the data directories (``kaf/`` or flat), or None."""
    if name not in SERIES:
        raise ValueError(f"unknown series {name!r}; available: {', '.join(SERIES)}")
    for d in data_dirs(data_dir):
        for cand in (d / "kaf" / SERIES[name][0], d / SERIES[name][0]):
            if cand.is_file():
                return cand
    return None


def load_series(name: str, data_dir=None) -> np.ndarray:
    """The values of series ``name`` (the first column of each line), as float64; the file's
    content checked against :data:`SERIES_SHA256` (a :class:`DataFormatError` naming the file and
    the fix otherwise: a truncated gzip, or a copy cut at a line end, would be scored against the
    published numbers)."""
    path = find_series(name, data_dir)
    if path is None:
        raise FileNotFoundError(f"series {name!r}: {SERIES[name][0]} is in none of "
                                f"{', '.join(str(d) for d in data_dirs(data_dir))} (or their kaf/ folders)")
    fix = (f"replace it with the series as published ({KAFBOX_SOURCE.replace('NAME', name)}; the staged datasets' "
           f"kaf/{SERIES[name][0]})")
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read()
    except (EOFError, OSError, zlib.error) as exc:
        raise DataFormatError(f"{path}: truncated or damaged gzip file ({exc}); {fix}") from None
    values = []
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        field = line.split(",")[0].strip()
        try:
            v = float(field)
        except ValueError:
            raise DataFormatError(f"{path}, line {lineno}: {field[:40]!r} is not a number") from None
        if not math.isfinite(v):
            raise DataFormatError(f"{path}, line {lineno}: the value {field[:40]!r} is not finite")
        values.append(v)
    digest = hashlib.sha256(data).hexdigest()
    if digest != SERIES_SHA256[name]:
        raise DataFormatError(f"{path}: checksum does not match: sha256 of its content is {digest}, expected "
                              f"{SERIES_SHA256[name]} ({len(values):,} values read): the copy is damaged, cut "
                              f"short or edited; {fix}")
    return np.array(values)


def read_series_file(path, column: str | int | None = None) -> tuple[np.ndarray, str]:
    """A series from a file of one value a line, or from one column of a delimited file (commas,
    tabs, semicolons or spaces; plain or compressed), with its header detected as
    :func:`okl.data.readers.has_header` does (or given by ``column`` naming a column). Lines starting
    with ``#`` are comments; in a semicolon-separated file (a spreadsheet's export where the comma is
    the decimal point) ``112,5`` is 112.5.

    ``column``: a header name or a 1-based number; None: the file's only column, or its only column
    of numbers (a date column beside the values, as a spreadsheet exports a series). A file with
    several columns of numbers must say which. Returns (values, what was read: "" for a one-column
    file, else "column N 'name'"). A missing or non-finite value raises :class:`DataFormatError`
    naming the file, line and column: a forecaster needs every value, in order."""
    path = str(path)
    with open_text(path) as fh:
        first = next((line for line in fh if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        raise DataFormatError(f"{path}: no data lines")
    unquoted = re.sub(r'"[^"]*"', "", first)
    sep = next((c for c in ("\t", ";", ",") if c in unquoted), None)
    if sep is not None:
        _, rows, linenos = read_delimited(path, sep=sep)
        kept = [i for i, fields in enumerate(rows) if not fields[0].startswith("#")]
        rows, linenos = [rows[i] for i in kept], [linenos[i] for i in kept]
        if sep == ";":  # (a spreadsheet's export where the comma is the decimal point: 112,5)
            rows = [[DECIMAL_COMMA.sub(r"\1.\2", f) for f in fields] for fields in rows]
    else:  # (values apart by spaces, or one a line)
        rows, linenos = [], []
        with open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if line.split() and not line.lstrip().startswith("#"):
                    rows.append(line.split())
                    linenos.append(lineno)
    if not rows:
        raise DataFormatError(f"{path}: no data lines")
    named = isinstance(column, str) and not column.isdigit()
    names = None
    if has_header(rows, named):
        names, rows, linenos = rows[0], rows[1:], linenos[1:]
        if not rows:
            raise DataFormatError(f"{path}: a header line and no data lines")
    width = len(names) if names is not None else len(rows[0])

    def label(c: int) -> str:
        return f"column {c + 1}" + (f" {names[c]!r}" if names is not None and c < len(names) else "")

    if column is None:
        numeric = [c for c in range(min(width, len(rows[0]))) if finite_float(rows[0][c]) is not None]
        if width == 1 or len(numeric) == 1:
            col = 0 if width == 1 else numeric[0]
        else:
            have = (f"{len(numeric)} of its {width} columns hold numbers ({', '.join(label(c) for c in numeric)})"
                    if numeric else f"none of its {width} columns holds a number")
            raise DataFormatError(f"{path}: {have} on line {linenos[0]}; say which is the series "
                                  f"(okl forecast --column NAME or NUMBER)")
    elif named:
        if names is None or column not in names:
            raise DataFormatError(f"{path}: no column named {column!r} "
                                  f"({'columns: ' + ', '.join(names) if names else 'the file has no header'})")
        col = names.index(column)
    else:
        col = int(column) - 1
        if not 0 <= col < width:
            raise DataFormatError(f"{path}: column {column} is out of range (the file has {width} column"
                                  f"{'s' if width > 1 else ''})")
    values = np.empty(len(rows))
    for i, (fields, lineno) in enumerate(zip(rows, linenos)):
        where = f"{path}, line {lineno}" + (f", {label(col)}" if width > 1 else "")
        if len(fields) <= col or not fields[col]:
            raise DataFormatError(f"{where}: the value is missing (a forecaster needs every value, in order)")
        v = finite_float(fields[col])
        if v is None:
            problem = number_problem(fields[col])
            raise DataFormatError(f"{where}: {'the value ' if problem == 'is not finite' else ''}"
                                  f"{fields[col][:40]!r} {problem}")
        values[i] = v
    return values, (label(col) if width > 1 else "")


def embed(s: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of one-step prediction with a time embedding of order ``p``: row t holds
    s[t], s[t-1], ..., s[t-p+1] (zeros before the start), its target is s[t+1]."""
    s = np.asarray(s, dtype=np.float64)
    if p < 1 or len(s) < 2:
        raise ValueError(f"embed: needs an order p >= 1 (got {p}) and at least 2 values (got {len(s)})")
    X = np.zeros((len(s) - 1, p))
    for lag in range(p):
        X[lag:, lag] = s[:len(s) - 1 - lag]
    return X, s[1:].copy()


def mse_db(pred: np.ndarray, y: np.ndarray, skip: int = SKIP) -> float:
    """10 log10 of the mean squared error of ``pred`` over samples ``skip``.. (KAFBOX's score)."""
    err = np.asarray(pred)[skip:] - np.asarray(y)[skip:]
    return float(10.0 * np.log10(np.mean(err * err)))


__all__ = ["SERIES", "SERIES_SHA256", "SKIP", "embed", "find_series", "load_series", "mse_db", "read_series_file"]
