"""File readers: svmlight/LIBSVM, delimited text (CSV/TSV) and ARFF, plain or compressed.

Every reader raises :class:`DataFormatError` naming the file and line of the first bad line, so a
user can open the file at the right place. Nothing is unpickled.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os

import numpy as np


class DataFormatError(ValueError):
    """A data file that cannot be parsed; the message names the file and line."""


#: largest svmlight feature index accepted (scikit-learn's reader overflows beyond it)
MAX_FEATURE_INDEX = 2**31 - 1


def open_text(path: str | os.PathLike):
    """Open a text file, transparently decompressing ``.gz``, ``.xz`` and ``.bz2``."""
    path = os.fspath(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    if path.endswith(".xz"):
        return lzma.open(path, "rt", encoding="utf-8", newline="")
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8", newline="")
    return open(path, "rt", encoding="utf-8", newline="")


def parse_svmlight_line(line: str, where: str = "<line>") -> tuple[float | None, dict[int, float]]:
    """Parse one svmlight line ``label idx:val idx:val ... [# comment]``.

    Returns (label or None when the line has no label, {0-based index: value}). Indices are
    1-based in the file and must increase.
    """
    body = line.split("#", 1)[0].strip()
    if not body:
        raise DataFormatError(f"{where}: empty line")
    tokens = body.split()
    label = None
    if ":" not in tokens[0]:
        try:
            label = float(tokens[0])
        except ValueError:
            raise DataFormatError(f"{where}: label {tokens[0]!r} is not a number") from None
        if not np.isfinite(label):
            raise DataFormatError(f"{where}: label {tokens[0]!r} is not finite")
        tokens = tokens[1:]
    feats: dict[int, float] = {}
    last = 0
    for tok in tokens:
        if tok.startswith("qid:"):
            continue
        idx, sep, val = tok.partition(":")
        if not sep:
            raise DataFormatError(f"{where}: token {tok!r} is not index:value")
        try:
            i = int(idx)
        except ValueError:
            raise DataFormatError(f"{where}: feature index {idx!r} is not an integer") from None
        if i < 1:
            raise DataFormatError(f"{where}: feature index {i} must be >= 1")
        if i > MAX_FEATURE_INDEX:
            raise DataFormatError(f"{where}: feature index {i} is too large (at most {MAX_FEATURE_INDEX})")
        if i <= last:
            raise DataFormatError(f"{where}: feature index {i} does not increase (after {last})")
        try:
            v = float(val)
        except ValueError:
            raise DataFormatError(f"{where}: value {val!r} of feature {i} is not a number") from None
        if not np.isfinite(v):
            raise DataFormatError(f"{where}: value {val!r} of feature {i} is not finite")
        feats[i - 1] = v
        last = i
    return label, feats


def read_svmlight(path: str | os.PathLike, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read an svmlight/LIBSVM file (plain, .gz, .xz, .bz2) into a dense matrix and label vector.

    The fast path is scikit-learn's reader; on any failure the file is re-read line by line to
    report the first bad line as ``file:line: problem``.
    """
    from sklearn.datasets import load_svmlight_file

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    try:
        opener = lzma.open if path.endswith(".xz") else (bz2.open if path.endswith(".bz2") else gzip.open
                                                          if path.endswith(".gz") else open)
        with opener(path, "rb") as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=np.float64, zero_based=False)
        if X.shape[0] and X.shape[1] <= MAX_FEATURE_INDEX:  # else: the slow path names the problem
            X = X.toarray()
            if np.isfinite(X).all() and np.isfinite(y).all():
                return X, y
    except (ValueError, RuntimeError, OSError, EOFError, OverflowError):
        pass
    return _read_svmlight_slow(path, n_features)


def _read_svmlight_slow(path, n_features):
    labels, rows = [], []
    with open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.split("#", 1)[0].strip():
                    continue
                label, feats = parse_svmlight_line(line, f"{path}:{lineno}")
                if label is None:
                    raise DataFormatError(f"{path}:{lineno}: missing label")
                if n_features is not None and feats and max(feats) >= n_features:
                    raise DataFormatError(f"{path}:{lineno}: feature index {max(feats) + 1} exceeds "
                                          f"n_features={n_features}")
                labels.append(label)
                rows.append(feats)
        except (EOFError, OSError, UnicodeDecodeError) as exc:
            raise DataFormatError(f"{path}: unreadable ({exc})") from None
    if not rows:
        raise DataFormatError(f"{path}: no data lines")
    width = n_features if n_features is not None else max((max(r) + 1 for r in rows if r), default=0)
    X = np.zeros((len(rows), width))
    for r, feats in enumerate(rows):
        for c, v in feats.items():
            X[r, c] = v
    return X, np.asarray(labels)


def read_delimited(path: str | os.PathLike, sep: str = ",", header: bool = False,
                   skip_blank: bool = True) -> tuple[list[str] | None, list[list[str]], list[int]]:
    """Read a delimited text file into string fields; returns (header, rows, line numbers)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    names = None
    rows, linenos = [], []
    with open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                line = line.rstrip("\r\n")
                if skip_blank and not line.strip():
                    continue
                fields = [f.strip() for f in line.split(sep)]
                if header and names is None:
                    names = fields
                    continue
                rows.append(fields)
                linenos.append(lineno)
        except (EOFError, OSError, UnicodeDecodeError) as exc:
            raise DataFormatError(f"{path}: unreadable ({exc})") from None
    if not rows:
        raise DataFormatError(f"{path}: no data lines")
    return names, rows, linenos


def numeric_table(path, rows: list[list[str]], linenos: list[int]) -> np.ndarray:
    """Convert string fields to a float matrix, naming file, line and column of a bad field."""
    width = len(rows[0])
    out = np.empty((len(rows), width))
    for r, (fields, lineno) in enumerate(zip(rows, linenos)):
        if len(fields) != width:
            raise DataFormatError(f"{path}:{lineno}: {len(fields)} fields, expected {width} (as on line {linenos[0]})")
        for c, f in enumerate(fields):
            try:
                v = float(f)
            except ValueError:
                raise DataFormatError(f"{path}:{lineno}: column {c + 1} value {f!r} is not a number") from None
            if not np.isfinite(v):
                raise DataFormatError(f"{path}:{lineno}: column {c + 1} value {f!r} is not finite")
            out[r, c] = v
    return out


def read_csv(path: str | os.PathLike, label_column: int = -1, sep: str = ",",
             header: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Read a numeric delimited file; the label/target is column ``label_column`` (default last)."""
    _, rows, linenos = read_delimited(path, sep=sep, header=header)
    table = numeric_table(os.fspath(path), rows, linenos)
    y = table[:, label_column]
    X = np.delete(table, label_column % table.shape[1], axis=1)
    return X, y


def read_arff(path: str | os.PathLike):
    """Read an ARFF file with SciPy; returns (record array, attribute names)."""
    from scipy.io import arff

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    with open_text(path) as fh:
        text = fh.read()
    try:
        data, meta = arff.loadarff(io.StringIO(text))
    except Exception as exc:  # scipy raises several parser-specific types
        raise DataFormatError(f"{path}: ARFF parse error ({exc})") from None
    return data, list(meta.names())
