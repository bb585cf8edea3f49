"""The service's durable state: a write-ahead log of learns and kept features (SQLite in WAL mode,
one transaction per group of requests) and model snapshots (okl model files, never pickles).

Layout of ``--store DIR``::

    DIR/okl-serve.sqlite        keys, the log, kept features, learned ids (one file per shard)
    DIR/models/ab/<sha1>-<seq>.npz   a key's snapshot: its model after log row <seq>

Tables (``seq`` is the log's row number, increasing):

- ``log(seq, last, key, ids, x, y, t)``: every acknowledged learn, in arrival order, a row per block
  of one key's consecutive learns (log numbers ``seq..last``): their features as one C-order float64
  matrix (a named-feature event already mapped to the key's columns), their labels as float64
  bytes, their ids as a JSON array (``null`` for a learn without one).
- ``keys(key, meta, snap_seq, snap_file, n_snap)``: a key's column schema (JSON), its latest
  snapshot (file and the last log row it contains) and the learns it holds.
- ``kept(id, key, x, expires)``: the features of a prediction made with an ``id``, kept for its
  delayed label until ``expires`` (Unix seconds).
- ``done(seq, ids, t)``: ids already learned whose log rows were compacted into a snapshot (a JSON
  array a compaction; the others are in the ``ids`` column of ``log``): a learn with such an id is
  a duplicate.

Checkpoints (the WAL moved into the database file, with its fsync) run in a thread of their own
on their own connection (:class:`Checkpointer`, PASSIVE: it never blocks the writer), at most every
half second after a commit, instead of inside every thousandth page's commit on the event loop
(measured: +25 ms on one commit in four when 2,000 keys learn a request).

Durability: ``synchronous=NORMAL`` in WAL mode makes a committed transaction survive a killed
process (the log is in the OS's page cache); ``fsync=True`` (``--fsync``) uses ``FULL``, which
also survives a lost machine, at one fsync per commit (group commit shares it across the
requests of one event-loop tick). Cost per learn: its share of one row insert per key and request
(measured 0.36 us a learn for blocks of 500, against 3.6 us with a row per learn).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time

import numpy as np
import orjson

SCHEMA = """
CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, last INTEGER NOT NULL, key TEXT NOT NULL, ids TEXT,
                                x BLOB NOT NULL, y BLOB NOT NULL, t REAL NOT NULL);
CREATE INDEX IF NOT EXISTS log_key ON log (key, last);
CREATE TABLE IF NOT EXISTS keys (key TEXT PRIMARY KEY, meta TEXT NOT NULL, snap_seq INTEGER NOT NULL DEFAULT 0,
                                 snap_file TEXT, n_snap INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS kept (id TEXT PRIMARY KEY, key TEXT NOT NULL, x BLOB NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS done (seq INTEGER PRIMARY KEY, ids TEXT NOT NULL, t REAL NOT NULL);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
ABSENT_MAX = 1 << 16  # keys remembered as absent (then forgotten at once)
FORMAT = "2"  # the store's layout: 2 = a log row per block of a key's learns


class StoreError(ValueError):
    """The store directory does not fit the service's settings (named in the message)."""


def key_digest(key: str) -> str:
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


class Checkpointer(threading.Thread):
    """Moves a store's WAL into its database file off the writer's thread: after :attr:`due` is
    set (a commit), waits ``interval`` seconds (the commits of that time share one checkpoint),
    then runs a PASSIVE checkpoint on its own connection. ``last`` is its latest (busy, WAL pages,
    pages checkpointed)."""

    def __init__(self, path: str, interval: float = 0.5):
        super().__init__(name="okl-serve-checkpoint", daemon=True)
        self.path, self.interval = path, interval
        self.due, self.stopping = threading.Event(), threading.Event()
        self.last: tuple | None = None

    def run(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while True:
                self.due.wait()
                if self.stopping.wait(self.interval):
                    return
                self.due.clear()
                try:
                    self.last = tuple(db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
                except sqlite3.Error:  # (busy or locked: the next commit asks again)
                    pass
        finally:
            db.close()

    def stop(self) -> None:
        self.stopping.set()
        self.due.set()
        self.join(10)


class Store:
    """One shard's SQLite log and snapshot directory. Not thread-safe: one shard owns it."""

    def __init__(self, root: str, name: str = "okl-serve", fsync: bool = False):
        self.root = os.path.abspath(root)
        os.makedirs(os.path.join(self.root, "models"), exist_ok=True)
        self.path = os.path.join(self.root, f"{name}.sqlite")
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
        self.db.execute("PRAGMA wal_autocheckpoint=0")  # (the Checkpointer's, off this thread)
        self.checkpointer: Checkpointer | None = None
        self._check_format()
        self.db.executescript(SCHEMA)
        self._log: list[tuple] = []
        self._kept: list[tuple] = []
        self._keys: list[tuple] = []
        self._unkept: list[tuple] = []
        # keys looked up and not in the store (a predict for a key with no learn yet asks twice);
        # this store is their only writer, so only stage_key makes one known
        self._absent: set[str] = set()
        # the high-water mark: compaction may have emptied the log, never the snapshots' rows
        self._seq = max(self.db.execute("SELECT COALESCE(MAX(last), 0) FROM log").fetchone()[0],
                        self.db.execute("SELECT COALESCE(MAX(snap_seq), 0) FROM keys").fetchone()[0])

    def _check_format(self) -> None:
        """Record the layout in a new store; refuse one written in another layout (its log would be misread)."""
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "settings" in tables:
            row = self.db.execute("SELECT value FROM settings WHERE name='format'").fetchone()
            if row is None or row[0] != FORMAT:
                raise StoreError(f"{self.path}: this store was written by another version of okl serve (layout "
                                 f"{row[0] if row else 1}, this one reads {FORMAT}); start with another --store")
            return
        self.db.executescript(SCHEMA)
        self.db.execute("INSERT INTO settings VALUES ('format', ?)", (FORMAT,))

    # ---- settings (the template a store was made with) -------------------------------------

    def check_settings(self, settings: dict) -> None:
        """Record ``settings`` in a new store; refuse a store made with other ones (its keys'
        models would not be the template's)."""
        row = self.db.execute("SELECT value FROM settings WHERE name='template'").fetchone()
        text = json.dumps(settings, sort_keys=True)
        if row is None:
            self.db.execute("INSERT INTO settings VALUES ('template', ?)", (text,))
        elif row[0] != text:
            raise StoreError(f"{self.path}: this store was made with {row[0]}, not {text}; "
                             "start okl serve with those settings or another --store")

    # ---- the write-ahead log (rows are staged, then written by one commit) -----------------

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def mark(self) -> int:
        """The last log row number given out."""
        return self._seq

    def stage_learns(self, key: str, ids: list, X: np.ndarray, y: np.ndarray, t: float) -> None:
        """Stage a block of one key's learns, in order: their ids (None for a learn without one), the
        rows of ``X`` (float64) and the labels ``y``; one log row, numbered on by ``len(ids)``."""
        first = self._seq + 1
        self._seq += len(ids)
        ids_text = orjson.dumps(ids).decode() if any(i is not None for i in ids) else None
        self._log.append((first, self._seq, key, ids_text, np.ascontiguousarray(X, dtype=np.float64).tobytes(),
                          np.ascontiguousarray(y, dtype=np.float64).tobytes(), t, ids))

    def stage_unkept(self, eid: str) -> None:
        """A kept row whose label came: delete it with the next commit."""
        self._unkept.append((eid,))

    def stage_kept(self, eid: str, key: str, x: np.ndarray, expires: float) -> None:
        self._kept.append((eid, key, x.tobytes(), expires))

    def stage_key(self, key: str, meta: dict) -> None:
        self._absent.discard(key)
        self._keys.append((key, json.dumps(meta)))

    def pending(self) -> bool:
        return bool(self._log or self._kept or self._keys or self._unkept)

    def commit(self) -> None:
        """Write every staged row in one transaction (group commit)."""
        if not self.pending():
            return
        log, kept, keys, unkept = self._log, self._kept, self._keys, self._unkept
        self._log, self._kept, self._keys, self._unkept = [], [], [], []
        db = self.db
        db.execute("BEGIN")
        try:
            if keys:
                db.executemany("INSERT OR IGNORE INTO keys (key, meta) VALUES (?, ?)", keys)
            if kept and log:  # a label that came in the same commit as its prediction: nothing to keep
                done = {i for r in log if r[3] is not None for i in r[7]}
                kept = [k for k in kept if k[0] not in done]
            if kept:
                db.executemany("INSERT OR REPLACE INTO kept VALUES (?, ?, ?, ?)", kept)
            if unkept:
                db.executemany("DELETE FROM kept WHERE id=?", unkept)
            if log:
                db.executemany("INSERT INTO log VALUES (?, ?, ?, ?, ?, ?, ?)", [r[:7] for r in log])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._wrote()

    def _wrote(self) -> None:
        if self.checkpointer is None:
            self.checkpointer = Checkpointer(self.path)
            self.checkpointer.start()
        self.checkpointer.due.set()

    def discard(self) -> None:
        """Drop the staged rows (their events were refused or their models failed)."""
        self._log, self._kept, self._keys, self._unkept = [], [], [], []

    # ---- reading back ----------------------------------------------------------------------

    def key_row(self, key: str):
        """(meta dict, snap_seq, snap_file, n_snap) of a known key, else None."""
        if key in self._absent:
            return None
        row = self.db.execute("SELECT meta, snap_seq, snap_file, n_snap FROM keys WHERE key=?", (key,)).fetchone()
        if row is None:
            if len(self._absent) >= ABSENT_MAX:
                self._absent.clear()
            self._absent.add(key)
            return None
        return json.loads(row[0]), row[1], row[2], row[3]

    def log_after(self, key: str, seq: int):
        """The key's learns after log number ``seq``, in order, as blocks ``(X, y)`` (float64 arrays)."""
        for first, last, xb, yb in self.db.execute(
                "SELECT seq, last, x, y FROM log WHERE key=? AND last>? ORDER BY seq", (key, seq)):
            y = np.frombuffer(yb, dtype=np.float64)
            X = np.frombuffer(xb, dtype=np.float64).reshape(len(y), -1)
            skip = max(0, seq - first + 1)  # (a snapshot always holds whole blocks; kept for safety)
            if skip < len(y):
                yield X[skip:].copy(), y[skip:].copy()

    @staticmethod
    def _ids(rows) -> list:
        return [i for (text,) in rows if text is not None for i in orjson.loads(text) if i is not None]

    def _done(self, ids: list, now: float) -> None:
        if ids:
            self.db.execute("INSERT INTO done (ids, t) VALUES (?, ?)", (orjson.dumps(ids).decode(), now))

    def learned_ids(self) -> set:
        ids = set(self._ids(self.db.execute("SELECT ids FROM done")))
        ids.update(self._ids(self.db.execute("SELECT ids FROM log WHERE ids IS NOT NULL")))
        return ids

    def kept_rows(self, now: float):
        """(id, key, x bytes, expires) of kept features not yet expired."""
        return self.db.execute("SELECT id, key, x, expires FROM kept WHERE expires>?", (now,))

    def key_names(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT key FROM keys")]

    # ---- snapshots ------------------------------------------------------------------------

    def snapshot_path(self, key: str, seq: int) -> str:
        d = key_digest(key)
        os.makedirs(os.path.join(self.root, "models", d[:2]), exist_ok=True)
        return os.path.join("models", d[:2], f"{d}-{seq}.npz")

    def record_snapshot(self, key: str, seq: int, rel: str, n_events: int, old: str | None) -> None:
        """Point the key at its new snapshot (written before, under a name holding ``seq``, so a
        crash between the file and this row leaves the old snapshot in force), then compact: the
        log rows it holds go (their ids into ``done``) and the old file is removed."""
        db = self.db
        now = time.time()
        db.execute("BEGIN")
        try:
            db.execute("UPDATE keys SET snap_seq=?, snap_file=?, n_snap=? WHERE key=?", (seq, rel, n_events, key))
            self._done(self._ids(db.execute("SELECT ids FROM log WHERE key=? AND last<=?", (key, seq))), now)
            db.execute("DELETE FROM log WHERE key=? AND last<=?", (key, seq))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self._wrote()
        if old and old != rel:
            try:
                os.remove(os.path.join(self.root, old))
            except OSError:
                pass

    def forget(self, key: str) -> None:
        """Delete a key: its row, log and snapshot (its learned ids stay learned)."""
        row = self.key_row(key)
        db = self.db
        db.execute("BEGIN")
        now = time.time()
        self._done(self._ids(db.execute("SELECT ids FROM log WHERE key=?", (key,))), now)
        db.execute("DELETE FROM log WHERE key=?", (key,))
        db.execute("DELETE FROM kept WHERE key=?", (key,))
        db.execute("DELETE FROM keys WHERE key=?", (key,))
        db.execute("COMMIT")
        if row and row[2]:
            try:
                os.remove(os.path.join(self.root, row[2]))
            except OSError:
                pass

    def expire(self, now: float) -> None:
        """Drop kept features past their time to live (a kept row whose label came is deleted by
        the commit of that label)."""
        self.db.execute("DELETE FROM kept WHERE expires<=?", (now,))

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.stop()
        self.db.close()
