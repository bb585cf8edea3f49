"""File readers: svmlight/LIBSVM, delimited text (CSV/TSV) and ARFF, plain or compressed.

Every reader raises :class:`DataFormatError` naming the file and line of the first bad line, so a
user can open the file at the right place. Nothing is unpickled.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import math
import os

import numpy as np


class DataFormatError(ValueError):
    """A data file that cannot be parsed; the message names the file and line."""


#: largest svmlight feature index accepted (scikit-learn's reader overflows beyond it)
MAX_FEATURE_INDEX = 2**31 - 1


#: text encoding of every data file: UTF-8, with a leading byte-order mark dropped. Excel's "CSV
#: UTF-8" starts the file with one; read as plain ``utf-8`` it glues ``\ufeff`` to the first
#: field, which then is "not a number" and made a header-less file's first row its "header".
TEXT_ENCODING = "utf-8-sig"


def open_text(path: str | os.PathLike):
    """Open a text file (:data:`TEXT_ENCODING`), transparently decompressing ``.gz``, ``.xz`` and
    ``.bz2``. A directory is refused by name (``open`` would say only "Is a directory")."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory, not a data file")
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding=TEXT_ENCODING, newline="")
    if path.endswith(".xz"):
        return lzma.open(path, "rt", encoding=TEXT_ENCODING, newline="")
    if path.endswith(".bz2"):
        return bz2.open(path, "rt", encoding=TEXT_ENCODING, newline="")
    return open(path, "rt", encoding=TEXT_ENCODING, newline="")


def check_data_path(path: str) -> None:
    """A missing path or a directory, named as such before any reader opens it."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: is a directory, not a data file")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")


def finite_float(text) -> float | None:
    """``float(text)`` when it is a finite number, else None (:func:`number_problem` says why)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


#: the CSV dialect of every reader (quoted fields, spaces after a separator skipped)
CSV_DIALECT = dict(quotechar='"', skipinitialspace=True)


def split_fields(line: str, sep: str = ",") -> list[str]:
    """One delimited line's fields in the dialect of :func:`read_delimited` (every CSV reader of
    okl: ``okl run``, ``okl stream``, ``okl sweep``): fields may be quoted (``"0.1","a, b",1``;
    ``""`` inside quotes is a quote), spaces around fields are stripped. Raises DataFormatError on
    unbalanced quotes."""
    line = line.rstrip("\r\n")
    if '"' not in line:  # (the common case, without the csv module's cost)
        return [f.strip() for f in line.split(sep)]
    try:
        records = list(csv.reader([line], delimiter=sep, strict=True, **CSV_DIALECT))
    except csv.Error as exc:
        raise DataFormatError(f"{exc} (unbalanced quotes?)") from None
    return [f.strip() for f in records[0]] if records else [""]


def number_problem(text) -> str:
    """Why :func:`finite_float` refused ``text``: ``"is not a number"`` or ``"is not finite"``."""
    try:
        float(text)
    except ValueError:
        return "is not a number"
    return "is not finite"


def split_labelled(line: str, where: str) -> tuple[float | None, list[str]]:
    """(label or None, the ``key:value`` tokens) of a line ``[label] key:value ... [# comment]``:
    a line without a label starts with ``key:value``; DataFormatError for an empty line or a label
    that is not a finite number."""
    body = line.split("#", 1)[0].strip()
    if not body:
        raise DataFormatError(f"{where}: empty line")
    tokens = body.split()
    label = None
    if ":" not in tokens[0]:
        label = finite_float(tokens[0])
        if label is None:
            raise DataFormatError(f"{where}: label {tokens[0]!r} {number_problem(tokens[0])}")
        tokens = tokens[1:]
    return label, tokens


def parse_svmlight_line(line: str, where: str = "<line>") -> tuple[float | None, dict[int, float]]:
    """Parse one svmlight line ``label idx:val idx:val ... [# comment]``.

    Returns (label or None when the line has no label, {0-based index: value}). Indices are
    1-based in the file and must increase.
    """
    label, tokens = split_labelled(line, where)
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
        v = finite_float(val)
        if v is None:
            raise DataFormatError(f"{where}: value {val!r} of feature {i} {number_problem(val)}")
        feats[i - 1] = v
        last = i
    return label, feats


def parse_svmlight_block(data: bytes, n_features: int, n_lines: int, sparse: bool = False):
    """Parse a block of ``n_lines`` labelled svmlight lines (no blank or comment lines) at once
    with scikit-learn's reader; returns (X, labels), or None when the block is not plainly well
    formed (then parse its lines one by one with :func:`parse_svmlight_line`, which names the bad
    line). X is dense, or with ``sparse=True`` a ``scipy.sparse.csr_matrix`` (float64, sorted
    indices, never densified: O(non-zeros) memory). Used by ``okl stream`` on blocks of events."""
    from sklearn.datasets import load_svmlight_file

    if b":" not in data:
        return None
    try:
        Xs, y = load_svmlight_file(io.BytesIO(data), n_features=n_features, dtype=np.float64,
                                   zero_based=False)
    except (ValueError, RuntimeError, OverflowError, TypeError, IndexError):
        return None
    if Xs.shape[0] != n_lines or Xs.shape[1] != n_features:
        return None
    X = canonical_csr(Xs) if sparse else Xs.toarray()
    if not (np.isfinite(X.data if sparse else X).all() and np.isfinite(y).all()):
        return None
    return X, np.asarray(y, dtype=np.float64)


def canonical_csr(X):
    """``X`` (a SciPy sparse matrix) as a ``csr_matrix`` of float64 with sorted indices, a value
    written twice for one index summed (what ``toarray`` gives), zeros that the file wrote kept
    as stored entries; O(non-zeros)."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()  # (sorts the indices too)
    return X


#: files up to this size on disk are read by okl's line parser (see :func:`read_svmlight`)
SMALL_SVMLIGHT_BYTES = 64 * 1024


def read_svmlight(path: str | os.PathLike, n_features: int | None = None,
                  sparse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Read an svmlight/LIBSVM file (plain, .gz, .xz, .bz2) into a matrix and label vector.

    X is dense by default; ``sparse=True`` returns a ``scipy.sparse.csr_matrix`` instead (float64,
    sorted indices, the values the file writes, a zero written as ``j:0`` kept as a stored entry),
    built from the parsed indices and values without a dense matrix at any point: O(non-zeros)
    memory where the dense one takes rows x features. Both hold the same numbers.

    The fast path is scikit-learn's reader; on any failure the file is re-read line by line to
    report the first bad line as ``file:line: problem``. A file of at most
    :data:`SMALL_SVMLIGHT_BYTES` on disk (the bundled german) is read line by line at once:
    importing scikit-learn cost a fresh process about 1.9 s here, parsing german's 1,000 lines 0.05 s
    (both readers give the same numbers: correctly rounded decimal parsing, tested).
    """
    path = os.fspath(path)
    check_data_path(path)
    if os.path.getsize(path) <= SMALL_SVMLIGHT_BYTES:
        return _read_svmlight_slow(path, n_features, sparse)
    from sklearn.datasets import load_svmlight_file

    try:
        opener = lzma.open if path.endswith(".xz") else (bz2.open if path.endswith(".bz2") else gzip.open
                                                          if path.endswith(".gz") else open)
        with opener(path, "rb") as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=np.float64, zero_based=False)
        # else (and when no value is stored: a file without any idx:val) the slow path names the problem
        if X.shape[0] and X.nnz and X.shape[1] <= MAX_FEATURE_INDEX:
            X = canonical_csr(X) if sparse else X.toarray()
            if np.isfinite(X.data if sparse else X).all() and np.isfinite(y).all():
                return X, y
    except (ValueError, RuntimeError, OSError, EOFError, OverflowError):
        pass
    return _read_svmlight_slow(path, n_features, sparse)


def _read_svmlight_slow(path, n_features, sparse=False):
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
    if n_features is None and not any(rows):
        raise DataFormatError(f"{path}: no line has a feature (an svmlight line is 'label index:value ...'); "
                              "nothing to learn from")
    width = n_features if n_features is not None else max((max(r) + 1 for r in rows if r), default=0)
    if sparse:
        return _csr_of_rows(rows, width), np.asarray(labels)
    X = np.zeros((len(rows), width))
    for r, feats in enumerate(rows):
        for c, v in feats.items():
            X[r, c] = v
    return X, np.asarray(labels)


def _csr_of_rows(rows: list[dict[int, float]], width: int):
    """The rows ({0-based index: value}, indices increasing as :func:`parse_svmlight_line` checks
    them) as a ``csr_matrix`` of ``width`` columns, from their indices and values."""
    import scipy.sparse as sp

    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    nnz = int(indptr[-1])
    indices = np.fromiter((c for r in rows for c in r), dtype=np.int64, count=nnz)
    values = np.fromiter((v for r in rows for v in r.values()), dtype=np.float64, count=nnz)
    if width <= np.iinfo(np.int32).max and nnz <= np.iinfo(np.int32).max:  # (SciPy's usual index type)
        indptr, indices = indptr.astype(np.int32), indices.astype(np.int32)
    return sp.csr_matrix((values, indices, indptr), shape=(len(rows), width))


def read_delimited(path: str | os.PathLike, sep: str = ",", header: bool = False,
                   skip_blank: bool = True) -> tuple[list[str] | None, list[list[str]], list[int]]:
    """Read a delimited text file into string fields; returns (header, rows, line numbers).

    Fields may be quoted (``"0.1","a, b",1``; ``""`` inside quotes is a quote), as the ``csv``
    module reads them; spaces around fields are stripped. The line number of a row is the line it
    starts on.
    """
    path = os.fspath(path)
    check_data_path(path)
    names = None
    rows, linenos = [], []
    with open_text(path) as fh:
        reader = csv.reader(fh, delimiter=sep, **CSV_DIALECT)
        start = 1
        try:
            for record in reader:
                lineno, start = start, reader.line_num + 1
                if any("\n" in f or "\r" in f for f in record):
                    raise DataFormatError(f"{path}:{lineno}: a quoted field runs from line {lineno} to line "
                                          f"{reader.line_num} (unbalanced quotes?)")
                fields = [f.strip() for f in record]
                if skip_blank and not any(fields):
                    continue
                if header and names is None:
                    names = fields
                    continue
                rows.append(fields)
                linenos.append(lineno)
        except csv.Error as exc:
            raise DataFormatError(f"{path}:{start}: {exc} (unbalanced quotes?)") from None
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
            v = finite_float(f)
            if v is None:
                raise DataFormatError(f"{path}:{lineno}: column {c + 1} value {f!r} {number_problem(f)}")
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
    check_data_path(path)
    with open_text(path) as fh:
        text = fh.read()
    try:
        data, meta = arff.loadarff(io.StringIO(text))
    except Exception as exc:  # scipy raises several parser-specific types
        raise DataFormatError(f"{path}: ARFF parse error ({exc})") from None
    return data, list(meta.names())


# ---- the user's own files ------------------------------------------------------------------------

_COMPRESSED = (".gz", ".bz2", ".xz")
_SVMLIGHT_EXT = (".svm", ".svmlight", ".libsvm", ".scale")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def has_header(rows: list[list[str]], named: bool = False) -> bool:
    """Whether the first of ``rows`` (string fields) is a header: a column is chosen by name
    (``named``), or the first row has a non-number where the second has a number, or the file is
    one line of names only (a header without data)."""
    first = rows[0]
    second = rows[1] if len(rows) > 1 else first
    header = named or any(not _is_number(a) and _is_number(b) for a, b in zip(first, second))
    return header or (len(rows) == 1 and not any(_is_number(f) for f in first))


def sniff_format(path: str | os.PathLike) -> str:
    """``"svmlight"``, ``"csv"`` or ``"tsv"``: from the extension (after .gz/.bz2/.xz), else from
    the first data line (``label idx:val ...`` is svmlight; a tab means TSV; else CSV)."""
    path = os.fspath(path)
    base = path
    for ext in _COMPRESSED:
        if base.endswith(ext):
            base = base[: -len(ext)]
    lower = base.lower()
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".tsv", ".tab")):
        return "tsv"
    if lower.endswith(_SVMLIGHT_EXT):
        return "svmlight"
    check_data_path(path)
    with open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                tokens = line.split("#", 1)[0].split()
                if not tokens:
                    continue
                if "," not in line and len(tokens) > 1 and all(":" in t for t in tokens[1:]):
                    return "svmlight"
                return "tsv" if "\t" in line else "csv"
        except (EOFError, OSError, UnicodeDecodeError) as exc:
            raise DataFormatError(f"{path}: unreadable ({exc})") from None
    raise DataFormatError(f"{path}: no data lines")


def read_labeled_table(path: str | os.PathLike, label: str | int | None = None, sep: str | None = None,
                       header: bool | None = None):
    """Read a CSV/TSV file whose label is one column; features must be numbers.

    ``label``: ``"first"``, ``"last"`` (default), a 1-based column number or a header name.
    ``header``: None detects it (the first row has a non-number where the second row has a number,
    or ``label`` is a name). Returns (X, labels as strings, label line numbers, description dict).
    """
    path = os.fspath(path)
    if sep is None:
        sep = "\t" if sniff_format(path) == "tsv" else ","
    _, rows, linenos = read_delimited(path, sep=sep, header=False)
    label = "last" if label is None else label
    named = isinstance(label, str) and label not in ("first", "last") and not label.isdigit()
    if header is None:
        # (one line of names only is a header without data, not "column 1 value 'a' is not a number")
        header = has_header(rows, named)
    names = None
    if header:
        names, rows, linenos = rows[0], rows[1:], linenos[1:]
        if not rows:
            raise DataFormatError(f"{path}: a header line and no data lines")
    width = len(names) if names is not None else len(rows[0])
    if width < 2:
        raise DataFormatError(f"{path}:{linenos[0]}: one column only; a label and at least one feature are "
                              f"needed (separator {sep!r}; pass --sep?)")
    if label == "first":
        col = 0
    elif label == "last":
        col = width - 1
    elif isinstance(label, int) or label.isdigit():
        col = int(label) - 1
        if not 0 <= col < width:
            raise DataFormatError(f"{path}: label column {label} is out of range (the file has {width} columns)")
    else:
        if names is None or label not in names:
            have = ", ".join(names) if names else "no header"
            raise DataFormatError(f"{path}: no column named {label!r} ({have})")
        col = names.index(label)
    X = np.empty((len(rows), width - 1))
    labels = []
    feature_cols = [c for c in range(width) if c != col]
    first_line = linenos[0] - (1 if header else 0)
    for r, (fields, lineno) in enumerate(zip(rows, linenos)):
        if len(fields) != width:
            raise DataFormatError(f"{path}:{lineno}: {len(fields)} fields, expected {width} "
                                  f"(as on line {first_line})")
        if not fields[col]:
            raise DataFormatError(f"{path}:{lineno}: the label (column {col + 1}) is empty")
        labels.append(fields[col])
        for j, c in enumerate(feature_cols):
            f = fields[c]
            try:
                v = float(f)
            except ValueError:
                what = f"column {c + 1}" + (f" ({names[c]!r})" if names else "")
                problem = "is empty" if not f else f"value {f!r} is not a number"
                raise DataFormatError(f"{path}:{lineno}: {what} {problem}") from None
            if not np.isfinite(v):
                raise DataFormatError(f"{path}:{lineno}: column {c + 1} value {f!r} is not finite")
            X[r, j] = v
    desc = {"format": "tsv" if sep == "\t" else "csv", "header": bool(header), "label_column": col + 1,
            "label_name": names[col] if names else None, "columns": width}
    return X, labels, linenos, desc
