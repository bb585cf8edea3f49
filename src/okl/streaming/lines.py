"""Input lines of ``okl stream``: parsing one event line into (x, y) and reading a (growing) file as
lines or blocks with their byte offsets (see :mod:`okl.streaming.runner`)."""

from __future__ import annotations

import io
import os
import time
from typing import BinaryIO, Iterator

import numpy as np

from okl.categories import signed_bucket
from okl.data.readers import (DataFormatError, finite_float, number_problem, parse_svmlight_line, split_fields,
                              split_labelled)
from okl.streaming.checkpoint import CheckpointError


POLL_SECONDS = 0.05
#: bytes asked from the input at a time: whatever is available up to this is read at once
#: (``read1``), so a live stream's events are processed as they arrive
BLOCK_BYTES = 1 << 17
#: most events learned in one call of the learner's compiled loop
SEGMENT_EVENTS = 4096



class _Stop(Exception):
    """Raised by the SIGINT/SIGTERM handler while the runner is blocked reading input."""



# --------------------------------------------------------------------------------------------
# Line parsing


def _label(text: str, where: str) -> float | str:
    """A CSV label: a finite number, else (not a number at all) a class name, as ``okl run``
    reads it; ``nan`` / ``inf`` are refused (how programs write a missing value)."""
    value = finite_float(text)
    if value is None:
        if number_problem(text) == "is not finite":
            raise DataFormatError(f"{where}: label {text!r} is not finite (a missing label? leave the field empty)")
        return text
    return value


def check_label_column(label_column: int, width: int, where: str) -> None:
    """``--label-column`` must name one of the ``width`` fields (a ValueError, not a bad line:
    every line would be refused the same way, so ``--skip-bad`` must not skip them all). Taken
    modulo the width, 7 on 3 fields silently became column 1."""
    if not -width <= label_column < width:
        raise ValueError(f"--label-column {label_column} is out of range for {width} fields ({where}); give "
                         f"0..{width - 1}, or -{width}..-1 counted from the end")


def parse_event(line: str, where: str, fmt: str, dim: int | None, sep: str = ",",
                label_column: int = -1) -> tuple[np.ndarray, float | str | None]:
    """One data line -> (dense feature vector, label or None). A CSV label that is not a number is
    returned as it is written (a class name; the runner maps it). Raises DataFormatError."""
    if fmt == "svmlight":
        if dim is None:
            raise ValueError("svmlight input needs --dim (the feature dimension)")
        label, feats = parse_svmlight_line(line, where)
        x = np.zeros(dim)
        for i, v in feats.items():
            if i >= dim:
                raise DataFormatError(f"{where}: feature index {i + 1} exceeds --dim {dim}")
            x[i] = v
        return x, label
    try:
        fields = split_fields(line, sep)
    except DataFormatError as exc:
        raise DataFormatError(f"{where}: {exc}") from None
    width = len(fields) if dim is None else dim + 1
    if len(fields) != width:
        raise DataFormatError(f"{where}: {len(fields)} fields, expected {width} "
                              f"({width - 1} features and the label)")
    if width < 2:
        raise DataFormatError(f"{where}: a CSV event needs at least one feature and the label")
    check_label_column(label_column, width, where)
    col = label_column % width
    raw = fields.pop(col)
    label = None if raw in ("", "?") else _label(raw, where)
    x = np.empty(width - 1)
    for c, f in enumerate(fields):
        v = finite_float(f)
        if v is None:
            raise DataFormatError(f"{where}: field {c + 1 if c < col else c + 2} value {f!r} "
                                  f"{number_problem(f)}")
        x[c] = v
    return x, label


def parse_hashed_line(line: str, where: str, n_hashed: int) -> tuple[float | None, np.ndarray, np.ndarray]:
    """One ``--n-hashed`` line ``[label] name:value name:value ... [# comment]`` -> (label or None,
    column indices ascending, values): each feature name (any text without spaces; the value is after
    its last ``:``) goes to column c with sign s of :func:`okl.categories.signed_bucket` (name,
    n_hashed), the key of a River dict's feature of that name, and adds s * value there (names in any
    order; a name written twice, or two names in one column, add up). Signed feature hashing
    (Weinberger et al., ICML 2009). A line without a label starts with ``name:value``. O(tokens)."""
    label, tokens = split_labelled(line, where)
    row: dict[int, float] = {}
    for tok in tokens:
        name, sep, val = tok.rpartition(":")
        if not sep or not name:
            raise DataFormatError(f"{where}: token {tok!r} is not name:value")
        v = finite_float(val)
        if v is None:
            raise DataFormatError(f"{where}: value {val!r} of feature {name!r} {number_problem(val)}")
        col, sign = signed_bucket(name, n_hashed)
        row[col] = row.get(col, 0.0) + sign * v
    cols = sorted(row)
    return label, np.array(cols, dtype=np.int64), np.array([row[c] for c in cols], dtype=np.float64)


def parse_sparse_event(line: str, where: str, dim: int, n_hashed: int | None = None):
    """One svmlight line -> (1 x dim ``scipy.sparse.csr_matrix`` row, label or None), from its
    indices and values (no dense row): numeric indices as :func:`parse_event` reads them (an
    index beyond ``dim`` refused), or with ``n_hashed`` names hashed by :func:`parse_hashed_line`
    (dim = n_hashed). Raises DataFormatError. O(non-zeros)."""
    import scipy.sparse as sp

    if n_hashed is not None:
        label, cols, values = parse_hashed_line(line, where, n_hashed)
    else:
        label, feats = parse_svmlight_line(line, where)
        if feats and max(feats) >= dim:
            beyond = next(i for i in feats if i >= dim)
            raise DataFormatError(f"{where}: feature index {beyond + 1} exceeds --dim {dim}")
        cols = np.fromiter(feats, dtype=np.int64, count=len(feats))
        values = np.fromiter(feats.values(), dtype=np.float64, count=len(feats))
    return sp.csr_matrix((values, cols, np.array([0, len(cols)])), shape=(1, dim)), label


def rows_csr(rows: list[tuple[np.ndarray, np.ndarray]], dim: int):
    """(column indices ascending, values) per row as an n x dim ``csr_matrix`` (float64, sorted
    indices), from the indices and values; O(non-zeros)."""
    import scipy.sparse as sp

    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(c) for c, _ in rows])
    indices = np.concatenate([c for c, _ in rows]) if rows else np.zeros(0, dtype=np.int64)
    values = np.concatenate([v for _, v in rows]) if rows else np.zeros(0)
    out = sp.csr_matrix((values, indices, indptr), shape=(len(rows), dim))
    out.has_sorted_indices = True
    return out


# --------------------------------------------------------------------------------------------
# Input: lines with byte offsets, following a growing file


def _interruptible(state: dict, call, *args):
    """``call(*args)`` with ``state["waiting"]`` set: the SIGINT/SIGTERM handler may stop the
    runner (raise :class:`_Stop`) while it blocks."""
    state["waiting"] = True
    try:
        if state.get("stop"):
            raise _Stop
        return call(*args)
    finally:
        state["waiting"] = False


def _follow_fileno(fh: BinaryIO, follow: float | None) -> int | None:
    """The file descriptor the truncation check uses when following (None if there is none)."""
    if follow is None:
        return None
    try:
        return fh.fileno()
    except (OSError, io.UnsupportedOperation):
        return None


def _poll(fileno: int | None, state: dict, pending: int) -> None:
    """At the end of a followed file: refuse a file that shrank, then wait ``POLL_SECONDS``."""
    if fileno is not None and os.fstat(fileno).st_size < state["offset"] + pending:
        raise ValueError(f"{state['name']}: the file shrank below the position already read "
                         f"({state['offset'] + pending} bytes); truncated or rotated "
                         "files are not followed")
    _interruptible(state, time.sleep, POLL_SECONDS)


def _read_lines(fh: BinaryIO, follow: float | None, state: dict) -> Iterator[tuple[bytes, int]]:
    """Yield (raw line, bytes it occupies). ``follow``: None = stop at EOF, inf = wait forever,
    else stop after that many seconds without new data. ``state['waiting']`` is True while
    blocked, so the signal handler knows it may interrupt."""
    pending = b""
    last_data = time.monotonic()
    fileno = _follow_fileno(fh, follow)
    while True:
        chunk = _interruptible(state, fh.readline)
        if chunk:
            pending += chunk
            last_data = time.monotonic()
            if pending.endswith(b"\n"):
                yield pending, len(pending)
                pending = b""
            continue
        # at EOF
        if follow is None or time.monotonic() - last_data >= follow:
            _torn(state, pending)
            return
        _poll(fileno, state, len(pending))


def _torn(state: dict, pending: bytes) -> None:
    """At the end of the input: a last line without its newline is not an event. A producer that
    died mid-write leaves such a fragment (``-1 1:0.607694 ``: one feature of eight, still
    parseable); learning it would put it into the checkpoint, after which the complete stream
    could no longer be resumed. It is left unread (``state["torn"]`` = its size; the runner says
    so), so the checkpoint ends at the last complete line and feeding the whole stream again
    resumes exactly there."""
    if pending:
        state["torn"] = len(pending)


def _read_blocks(fh: BinaryIO, follow: float | None, state: dict) -> Iterator[list[bytes]]:
    """Yield lists of complete raw lines (each with its newline), as many as one read returned:
    :func:`_read_lines` a block at a time. The consumer must handle a block before asking for
    the next (the truncation check counts the bytes handed out as consumed)."""
    pending = b""
    last_data = time.monotonic()
    read = getattr(fh, "read1", None) or fh.read
    fileno = _follow_fileno(fh, follow)
    while True:
        chunk = _interruptible(state, read, BLOCK_BYTES)
        if chunk:
            last_data = time.monotonic()
            data = pending + chunk if pending else chunk
            cut = data.rfind(b"\n") + 1
            if cut:
                pending = data[cut:]
                parts = data[:cut].split(b"\n")
                parts.pop()
                yield [part + b"\n" for part in parts]
            else:
                pending = data
            continue
        # at EOF
        if follow is None or time.monotonic() - last_data >= follow:
            _torn(state, pending)
            return
        _poll(fileno, state, len(pending))


def _skip_bytes(fh: BinaryIO, n: int, name: str) -> None:
    """Position ``fh`` after its first ``n`` bytes (seek if possible, else read and discard)."""
    if n <= 0:
        return
    try:  # a file; an in-memory stream (no file descriptor) is read like a pipe
        size = os.fstat(fh.fileno()).st_size if fh.seekable() else None
    except (OSError, ValueError):
        size = None
    if size is not None:
        if size < n:
            raise CheckpointError(f"{name} has {size} bytes but the checkpoint was made after "
                                  f"{n} bytes of it; is it the same input?")
        fh.seek(n - 1)
        last = fh.read(1)
    else:
        left, last = n, b""
        while left:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                raise CheckpointError(f"{name} ended after {n - left} bytes but the checkpoint "
                                      f"was made after {n} bytes of it; feed the whole stream again")
            left -= len(chunk)
            last = chunk[-1:]
    if last != b"\n":
        raise CheckpointError(f"{name}: byte {n} is not the end of a line; the input differs from "
                              "the one the checkpoint was made on")
