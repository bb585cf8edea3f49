"""A resumable results store: one SQLite file (standard-library ``sqlite3``), one row per finished cell.

A *cell* is one run: (dataset, stream transform, learner, hyperparameters, seed, okl version).
Its key is stored as text — hyperparameters as canonical JSON (sorted keys, no spaces), the
stream as its canonical spec (:func:`okl.data.adversarial.parse_stream`) — under a UNIQUE
constraint, next to the metrics: task, headline metric, mistake rate (every round), the authors'
count (first stage skipped, divided by T; two-stage learners only), mean squared loss, the
learner's seconds, the number of rounds, learner diagnostics (JSON) and the cumulative-metric curve
subsampled to about 200 rounds.

Crash safety
------------
* WAL journal, ``synchronous=NORMAL``: a committed transaction survives the process being killed
  at any instant (it is in the WAL file; only an operating-system crash or power loss can drop the
  last few commits, never corrupt the file).
* One transaction per cell, committed as soon as the cell's result reaches the driver; the insert
  is ``INSERT OR IGNORE`` on the UNIQUE key, so a cell finished twice (a rerun racing another
  driver) is stored once. Killing a sweep loses only the cells in flight.
* Only the driver process writes; workers return results to it.

Identity checks
---------------
okl stores carry ``PRAGMA application_id`` = :data:`APPLICATION_ID` and ``user_version`` =
:data:`SCHEMA_VERSION`, plus an ``okl_meta`` table. Opening a file that is not SQLite, an SQLite
database of another program, a store from a newer okl, an empty (0-byte) file or a damaged or
truncated store raises :class:`StoreError` (a ``ValueError``) with a message that says which,
never a raw ``sqlite3`` traceback. On opening, the header's page count is compared with the file
size and ``PRAGMA quick_check`` is run (it reads every page once: ~0.1 s per 100 MB).
"""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

APPLICATION_ID = 0x6F6B6C72  # "oklr"
SCHEMA_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
KEY_FIELDS = ("dataset", "stream", "learner", "params", "seed", "okl_version")

_SCHEMA = """
CREATE TABLE okl_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cells (
    id INTEGER PRIMARY KEY,
    dataset TEXT NOT NULL,
    stream TEXT NOT NULL,
    learner TEXT NOT NULL,
    params TEXT NOT NULL,
    seed INTEGER NOT NULL,
    okl_version TEXT NOT NULL,
    task TEXT NOT NULL,
    metric REAL,
    mistake_rate REAL,
    authors_rate REAL,
    mse REAL,
    seconds REAL NOT NULL,
    n_rounds INTEGER NOT NULL,
    diagnostics TEXT NOT NULL,
    curve_rounds BLOB,
    curve_values BLOB,
    finished_at REAL NOT NULL,
    worker TEXT,
    UNIQUE (dataset, stream, learner, params, seed, okl_version)
);
"""
_CELL_COLUMNS = ("id", "dataset", "stream", "learner", "params", "seed", "okl_version", "task", "metric",
                 "mistake_rate", "authors_rate", "mse", "seconds", "n_rounds", "diagnostics", "curve_rounds",
                 "curve_values", "finished_at", "worker")


class StoreError(ValueError):
    """A results store that cannot be used: not SQLite, another program's database, damaged, newer."""


# ---- keys -----------------------------------------------------------------------------------

def _plain(value: Any) -> Any:
    """JSON-ready copy: numpy scalars/arrays to Python, tuples to lists; NaN/inf are rejected."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def canonical_params(params: dict[str, Any]) -> str:
    """Canonical JSON of a hyperparameter dict: the same dict always gives the same text.

    >>> canonical_params({"eta": 0.1, "budget": np.int64(100), "loss": "hinge"})
    '{"budget":100,"eta":0.1,"loss":"hinge"}'
    """
    try:
        return json.dumps(_plain(params), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"hyperparameters must be JSON numbers/strings/lists, got {params!r} ({exc})") from None


@dataclass(frozen=True, order=True)
class CellKey:
    """What identifies one finished run in the store (hashable, picklable)."""

    dataset: str
    stream: str
    learner: str
    params: str  # canonical JSON
    seed: int
    okl_version: str

    @classmethod
    def make(cls, dataset: str, stream: str, learner: str, params: dict[str, Any], seed: int,
             okl_version: str | None = None) -> "CellKey":
        if okl_version is None:
            from okl._version import __version__ as okl_version
        return cls(dataset, stream, learner, canonical_params(params), int(seed), okl_version)

    @property
    def param_dict(self) -> dict[str, Any]:
        return json.loads(self.params)

    def describe(self) -> str:
        return f"{self.dataset} [{self.stream}] {self.learner} {self.params} seed {self.seed}"


@dataclass
class CellResult:
    """Metrics of one finished cell (what a worker sends back to the driver)."""

    task: str
    metric: float
    seconds: float
    n_rounds: int
    mistake_rate: float | None = None
    authors_rate: float | None = None
    mse: float | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    curve_rounds: np.ndarray | None = None
    curve_values: np.ndarray | None = None
    worker: str | None = None

    def same_numbers(self, other: "CellResult") -> bool:
        """Equal in everything but wall time and worker (what must not depend on the backend)."""
        def eq(a, b):
            if a is None or b is None:
                return a is b
            return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
        arrays_equal = all(
            (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
            for a, b in ((self.curve_rounds, other.curve_rounds), (self.curve_values, other.curve_values)))
        return (self.task == other.task and eq(self.metric, other.metric) and self.n_rounds == other.n_rounds
                and eq(self.mistake_rate, other.mistake_rate) and eq(self.authors_rate, other.authors_rate)
                and eq(self.mse, other.mse) and arrays_equal
                and _plain(self.diagnostics) == _plain(other.diagnostics))


def _float_or_none(v):
    return None if v is None else float(v)


# ---- the store ------------------------------------------------------------------------------

def _row_problem(key, task, diagnostics, n_curve_rounds, n_curve_values, n_rounds) -> str | None:
    """Why a stored cell does not decode (None if it does)."""
    if not all(isinstance(v, str) for v in key[:4] + key[5:]) or not isinstance(key[4], int):
        return "a key field has the wrong type"
    if any("\ufffd" in v for v in key[:4] + key[5:]) or (isinstance(task, str) and "\ufffd" in task):
        return "a key field is not UTF-8 text"
    try:
        if not isinstance(json.loads(key[3]), dict):
            return "its hyperparameters are not a JSON object"
        json.loads(diagnostics)
    except (TypeError, ValueError):
        return "its hyperparameters or diagnostics are not JSON"
    if task not in ("classification", "regression"):
        return f"task {str(task)[:40]!r}"
    if not isinstance(n_rounds, int) or n_rounds < 0:
        return "its number of rounds is not a count"
    if (n_curve_rounds is None) != (n_curve_values is None) or (
            n_curve_rounds is not None and (n_curve_rounds != n_curve_values or n_curve_rounds % 8)):
        return "its curve arrays do not match"
    return None


def _check_file(path: Path) -> None:
    """Cheap checks before sqlite3 sees the file: directory, empty, foreign, truncated header."""
    if path.is_dir():
        raise StoreError(f"{path}: is a directory, not an okl results store")
    size = path.stat().st_size
    if size == 0:
        raise StoreError(f"{path}: empty file (0 bytes), not an okl results store; remove it to start a new one")
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header.startswith(SQLITE_MAGIC):
        raise StoreError(f"{path}: not an SQLite database (so not an okl results store); "
                         "was it written by another program?")
    if len(header) < 100:
        raise StoreError(f"{path}: truncated SQLite file ({size} bytes, shorter than its 100-byte header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    change_counter = int.from_bytes(header[24:28], "big")
    n_pages = int.from_bytes(header[28:32], "big")
    valid_for = int.from_bytes(header[92:96], "big")
    # With a non-empty write-ahead log beside it the main file's header need not match its size:
    # a checkpoint that stopped on a full disk wrote page 1 but not the pages after it, and SQLite
    # reads every committed page from the WAL. quick_check (run on opening) judges such a store;
    # calling it "truncated" made users delete a store whose cells were all intact.
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        return
    if n_pages and change_counter == valid_for and size < n_pages * page_size:
        raise StoreError(f"{path}: truncated store: the header says {n_pages} pages of {page_size} bytes "
                         f"({n_pages * page_size} bytes) but the file has {size}; restore a copy or remove it")


class ResultStore:
    """The results store at ``path`` (created if missing). Use as a context manager or ``close()``.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "r.sqlite")
    >>> key = CellKey.make("german", "permutation", "nogd", {"budget": 100}, seed=0, okl_version="x")
    >>> with ResultStore(path) as store:
    ...     store.add(key, CellResult("classification", 30.0, 0.1, 1000, mistake_rate=30.0))
    ...     store.add(key, CellResult("classification", 31.0, 0.1, 1000, mistake_rate=31.0))
    ...     (len(store), store.done_keys() == {key}, store.get(key).metric)
    True
    False
    (1, True, 30.0)
    """

    def __init__(self, path: str | os.PathLike, create: bool = True, check: bool = True):
        self.path = Path(path)
        exists = self.path.exists()
        if not exists and not create:
            raise StoreError(f"{self.path}: no such results store")
        if exists:
            _check_file(self.path)
        elif self.path.parent and not self.path.parent.exists():
            raise StoreError(f"{self.path}: directory {self.path.parent} does not exist")
        try:
            self._con = sqlite3.connect(str(self.path), timeout=60.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open as SQLite ({exc})") from None
        # bytes that are not UTF-8 inside a damaged text field read as U+FFFD (see damaged())
        self._con.text_factory = lambda b: b.decode("utf-8", "replace")
        try:
            if exists:
                self._validate(check)
            else:
                self._create()
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=NORMAL")
        except StoreError:
            self._con.close()
            raise
        except sqlite3.DatabaseError as exc:
            self._con.close()
            if not exists:  # a new store that could not be written: say so, and leave no empty file
                for suffix in ("", "-wal", "-shm", "-journal"):
                    try:
                        os.unlink(f"{self.path}{suffix}")
                    except OSError:
                        pass
                raise StoreError(f"{self.path}: cannot create the store ({exc}); is the disk full or the "
                                 "directory read-only?") from None
            raise StoreError(f"{self.path}: damaged or not an okl results store ({exc})") from None

    # -- opening ---------------------------------------------------------------------------------

    def _create(self) -> None:
        from okl._version import __version__

        con = self._con
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(f"PRAGMA application_id={APPLICATION_ID}")
            con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            for stmt in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                con.execute(stmt)
            con.executemany("INSERT INTO okl_meta VALUES (?, ?)", [
                ("format", "okl-results"), ("schema_version", str(SCHEMA_VERSION)),
                ("created_by", f"okl {__version__}"), ("created_at", time.strftime("%Y-%m-%d %H:%M:%S"))])
            con.execute("COMMIT")
        except BaseException:
            try:  # a failed COMMIT (full disk) may have ended the transaction already
                con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise

    def _validate(self, check: bool) -> None:
        con = self._con
        app_id = con.execute("PRAGMA application_id").fetchone()[0]
        version = con.execute("PRAGMA user_version").fetchone()[0]
        tables = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        if app_id != APPLICATION_ID:
            what = f"tables: {', '.join(tables)}" if tables else "no tables"
            raise StoreError(f"{self.path}: an SQLite database of another program, not an okl results store "
                             f"(application_id {app_id:#x}, {what}); choose another --store path")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: written by a newer okl (store schema {version}, this okl reads "
                             f"{SCHEMA_VERSION}); upgrade okl")
        if check:
            problems = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreError(f"{self.path}: damaged store ({'; '.join(problems[:3])}); "
                                 "restore a copy or remove it")
        columns = {r[1] for r in con.execute("PRAGMA table_info(cells)")}
        if "okl_meta" not in tables or not set(_CELL_COLUMNS) <= columns:
            raise StoreError(f"{self.path}: okl store with a missing or altered 'cells' table "
                             f"(tables: {', '.join(tables)})")

    # -- use ------------------------------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if getattr(self, "_con", None) is not None:
            self._con.close()
            self._con = None

    def _query(self, sql: str, args: Iterable = ()) -> list[tuple]:
        try:
            return self._con.execute(sql, tuple(args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: damaged store ({exc})") from None

    def __len__(self) -> int:
        return self._query("SELECT COUNT(*) FROM cells")[0][0]

    def done_keys(self) -> set[CellKey]:
        """Keys of every finished cell that reads back whole (:meth:`damaged` lists the others)."""
        bad = {cell_id for cell_id, _, _ in self.damaged()}
        return {CellKey(*r[1:]) for r in self._query(f"SELECT id, {', '.join(KEY_FIELDS)} FROM cells")
                if r[0] not in bad}

    def damaged(self) -> list[tuple[int, str, str]]:
        """(id, cell, problem) of every stored cell whose content does not decode: random bytes
        inside a record keep the file's structure, so ``PRAGMA quick_check`` passes, and such a
        cell counted as done while only ``okl report`` failed on it. Reads no curves (their
        lengths only)."""
        out = []
        sql = (f"SELECT id, {', '.join(KEY_FIELDS)}, task, diagnostics, length(curve_rounds), "
               "length(curve_values), n_rounds FROM cells")
        for r in self._query(sql):
            cell_id, key = r[0], r[1:7]
            problem = _row_problem(key, *r[7:])
            if problem:
                out.append((cell_id, " ".join(str(v) for v in key[:5]), problem))
        return out

    def drop_damaged(self) -> list[tuple[int, str, str]]:
        """Delete the :meth:`damaged` cells (one transaction), so a sweep runs them again; returns
        them."""
        bad = self.damaged()
        if bad:
            try:
                with self._transaction():
                    self._con.executemany("DELETE FROM cells WHERE id = ?", [(b[0],) for b in bad])
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"{self.path}: cannot write ({exc})") from None
        return bad

    def add(self, key: CellKey, result: CellResult) -> bool:
        """Commit one finished cell (one transaction); False if the key was already stored."""
        rounds = None if result.curve_rounds is None else np.asarray(result.curve_rounds, "<i8").tobytes()
        values = None if result.curve_values is None else np.asarray(result.curve_values, "<f8").tobytes()
        row = (key.dataset, key.stream, key.learner, key.params, key.seed, key.okl_version, result.task,
               _float_or_none(result.metric), _float_or_none(result.mistake_rate),
               _float_or_none(result.authors_rate), _float_or_none(result.mse), float(result.seconds),
               int(result.n_rounds), json.dumps(_plain(result.diagnostics), sort_keys=True), rounds, values,
               time.time(), result.worker or socket.gethostname())
        sql = (f"INSERT OR IGNORE INTO cells ({', '.join(_CELL_COLUMNS[1:])}) "
               f"VALUES ({', '.join('?' * (len(_CELL_COLUMNS) - 1))})")
        try:
            with self._transaction():
                cur = self._con.execute(sql, row)
            return cur.rowcount == 1
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot write ({exc})") from None

    def _transaction(self):
        con = self._con

        class _Tx:
            def __enter__(self_):
                con.execute("BEGIN IMMEDIATE")

            def __exit__(self_, exc_type, *rest):
                con.execute("ROLLBACK" if exc_type else "COMMIT")
                return False

        return _Tx()

    @staticmethod
    def _result(row: dict) -> CellResult:
        rounds = None if row["curve_rounds"] is None else np.frombuffer(row["curve_rounds"], "<i8").copy()
        values = None if row["curve_values"] is None else np.frombuffer(row["curve_values"], "<f8").copy()
        return CellResult(row["task"], row["metric"], row["seconds"], row["n_rounds"], row["mistake_rate"],
                          row["authors_rate"], row["mse"], json.loads(row["diagnostics"]), rounds, values,
                          row["worker"])

    def rows(self, curves: bool = False, **where: Any) -> list[dict[str, Any]]:
        """Stored cells as dicts (key fields, metrics, ``params`` decoded as ``param_dict``), filtered
        by equality on key fields, e.g. ``rows(dataset="german", learner="nogd")``."""
        cols = [c for c in _CELL_COLUMNS if curves or not c.startswith("curve")]
        bad = set(where) - set(KEY_FIELDS)
        if bad:
            raise ValueError(f"can filter on {KEY_FIELDS}, not {sorted(bad)}")
        sql = f"SELECT {', '.join(cols)} FROM cells"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        out = []
        for r in self._query(sql + " ORDER BY id", where.values()):
            d = dict(zip(cols, r))
            try:
                d["param_dict"] = json.loads(d["params"])
                d["diagnostics"] = json.loads(d["diagnostics"])
            except (TypeError, ValueError):
                raise StoreError(f"{self.path}: stored cell {d['id']} is damaged (its content does not decode); "
                                 "rerunning its okl sweep command runs it again") from None
            if curves:
                d["curve_rounds"] = None if d["curve_rounds"] is None else np.frombuffer(d["curve_rounds"], "<i8")
                d["curve_values"] = None if d["curve_values"] is None else np.frombuffer(d["curve_values"], "<f8")
            out.append(d)
        return out

    def get(self, key: CellKey) -> CellResult | None:
        rows = self._query(f"SELECT {', '.join(_CELL_COLUMNS)} FROM cells WHERE "
                           + " AND ".join(f"{k} = ?" for k in KEY_FIELDS),
                           (key.dataset, key.stream, key.learner, key.params, key.seed, key.okl_version))
        if not rows:
            return None
        d = dict(zip(_CELL_COLUMNS, rows[0]))
        return self._result(d)

    def results(self, keys: Iterable[CellKey]) -> Iterator[tuple[CellKey, CellResult]]:
        """(key, result) for each of ``keys`` that is stored."""
        for key in keys:
            res = self.get(key)
            if res is not None:
                yield key, res

    def meta(self) -> dict[str, str]:
        return dict(self._query("SELECT key, value FROM okl_meta"))


__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "CellKey", "CellResult", "ResultStore", "StoreError",
           "canonical_params"]
