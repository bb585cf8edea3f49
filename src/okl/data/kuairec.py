"""KuaiRec as a stream: the streaming-recommendation task of FORKS 5.3 / App. F (ALGORITHMS.md 8).

Files (KuaiRec 2.0, ``data/`` folder; ~400 MB, not shipped): ``small_matrix.csv``,
``user_features.csv``, ``item_categories.csv``, ``item_daily_features.csv``. They are looked up in
``data_dir``, ``$OKL_DATA`` and ``~/.okl/data``, each directly or under ``kuairec/``,
``KuaiRec/data/``, ``KuaiRec 2.0/data/`` or ``data/``.

Rows and labels (the authors' notebook ``Statistics_KuaiRec.ipynb`` of Henry-ruc/FORKS)
----------------------------------------------------------------------------------------
* rows of ``small_matrix.csv`` missing any of user_id, video_id, timestamp, watch_ratio, date
  are dropped (4,676,570 -> 4,494,578 rows);
* label y = +1 if watch_ratio > 0.75 else -1;
* the rows are presented in timestamp order (no permutation). The file is *not* sorted by
  timestamp (it is grouped by user), so :class:`KuaiRecStream` sorts — see "Memory" below. Equal
  timestamps keep their file order (a stable sort; the notebook's pandas quicksort leaves ties in
  an unspecified order).

Features (212 columns in this order, as the notebook's ``final_df``)
--------------------------------------------------------------------
1. user: ``is_lowactive_period``, ``is_live_streamer``, ``is_video_author`` (0/1), then one-hot
   columns (pandas ``get_dummies`` order: categories sorted, numerically for numeric columns) of
   ``user_active_degree``, ``follow_user_num_range``, ``fans_user_num_range``,
   ``friend_user_num_range``, ``register_days_range`` and ``onehot_feat0-2, 4-7, 9-17``; a missing
   value has all its one-hot columns 0 (175 columns on the real file);
2. video tags: multi-hot counts over the tags of ``item_categories.csv`` (``feat`` = "[27, 9]"),
   one column per tag in increasing tag order (31 columns);
3. daily item statistics of (video_id, date): ``play_progress`` and ``like_user_num``,
   ``share_user_num``, ``comment_user_num``, ``follow_user_num``, ``reduce_similar_user_num``
   each divided by ``play_user_num`` (6 columns).

Values are not rescaled (the authors feed them as they are). Our choices where the notebook
leaves NaN/inf (a user or video missing from its table, a (video, date) without statistics, or
``play_user_num`` = 0): the value is 0.

Memory
------
The raw log is never held: ``small_matrix.csv`` is read in chunks of ``chunk_rows`` lines, and
only five compact columns are kept per row (user index int32, video id int32, timestamp float64,
date int32, label int8: 21 bytes per row, ~95 MB for the real file) to sort by timestamp
(``numpy.argsort(kind="stable")``). Feature rows are built block by block in
:meth:`KuaiRecStream.blocks` (a full 4.5 M x 212 float64 matrix would take 7.6 GB). With
``order="file"`` no index is kept at all: the file is streamed as it is and a timestamp that
goes backwards raises :class:`~okl.data.readers.DataFormatError` naming the line (for a file that
was sorted beforehand, e.g. with ``sort -t, -k7,7g``).
"""

from __future__ import annotations

import csv
import functools
import math
import os
import re
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from okl.data.readers import DataFormatError
from okl.data.registry import data_dirs

SMALL_MATRIX = "small_matrix.csv"
USER_FEATURES = "user_features.csv"
ITEM_CATEGORIES = "item_categories.csv"
ITEM_DAILY_FEATURES = "item_daily_features.csv"
FILES = (SMALL_MATRIX, USER_FEATURES, ITEM_CATEGORIES, ITEM_DAILY_FEATURES)
SUBDIRS = ("", "kuairec", "KuaiRec", "KuaiRec/data", "KuaiRec 2.0/data", "kuairec/data", "data")

LOG_COLUMNS = ("user_id", "video_id", "timestamp", "watch_ratio", "date")
USER_BINARY = ("is_lowactive_period", "is_live_streamer", "is_video_author")
USER_ONE_HOT = ("user_active_degree", "follow_user_num_range", "fans_user_num_range", "friend_user_num_range",
                "register_days_range") + tuple(f"onehot_feat{i}" for i in (0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12,
                                                                         13, 14, 15, 16, 17))
DAILY_RATIOS = ("like_user_num", "share_user_num", "comment_user_num", "follow_user_num", "reduce_similar_user_num")
DAILY_NAMES = ("play_progress", "like_ratio", "share_ratio", "comment_ratio", "follow_ratio", "reduce_similar_ratio")
#: label threshold on watch_ratio (FORKS App. F)
WATCH_RATIO_THRESHOLD = 0.75


def find_kuairec_dir(data_dir=None) -> Path:
    """The directory holding all four KuaiRec files; FileNotFoundError naming the missing ones."""
    best, best_count, searched = None, -1, []
    for base in data_dirs(data_dir):
        for sub in SUBDIRS:
            d = base / sub if sub else base
            searched.append(d)
            count = sum((d / f).is_file() for f in FILES)
            if count == len(FILES):
                return d
            if count > best_count:
                best, best_count = d, count
    if best_count > 0:
        missing = [f for f in FILES if not (best / f).is_file()]
        raise FileNotFoundError(f"KuaiRec: {best} lacks {', '.join(missing)} (needs {', '.join(FILES)})")
    raise FileNotFoundError(
        f"KuaiRec files not found: need {', '.join(FILES)} (KuaiRec 2.0, data/ folder, "
        "https://kuairec.com) in --data-dir, $OKL_DATA or ~/.okl/data (directly or under kuairec/, "
        f"KuaiRec/data/); searched {', '.join(str(s) for s in searched[:3])}, ...")


def _header_index(path: Path, header: list[str], names: Sequence[str]) -> list[int]:
    missing = [n for n in names if n not in header]
    if missing:
        raise DataFormatError(f"{path}: missing column(s) {', '.join(missing)} (header: {', '.join(header)})")
    return [header.index(n) for n in names]


def _number(text: str) -> float:
    text = text.strip()
    if not text:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return math.nan


def read_csv_chunks(path: Path, columns: Sequence[str], chunk_rows: int, stats: dict | None = None
                    ) -> Iterator[tuple[int, list[list[str]]]]:
    """Yield (first data line number, rows) blocks of at most ``chunk_rows`` rows, only ``columns``.

    Never holds more than one block of the file. ``stats`` (if given) records ``chunks`` and
    ``largest_chunk``.
    """
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1, got {chunk_rows}")
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise DataFormatError(f"{path}: empty file") from None
        idx = _header_index(path, header, columns)
        width = max(idx) + 1
        block: list[list[str]] = []
        first = 2
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) < width:
                raise DataFormatError(f"{path}:{lineno}: {len(row)} fields, expected {len(header)}")
            if not block:
                first = lineno
            block.append([row[i] for i in idx])
            if len(block) == chunk_rows:
                if stats is not None:
                    stats["chunks"] = stats.get("chunks", 0) + 1
                    stats["largest_chunk"] = max(stats.get("largest_chunk", 0), len(block))
                yield first, block
                block = []
        if block:
            if stats is not None:
                stats["chunks"] = stats.get("chunks", 0) + 1
                stats["largest_chunk"] = max(stats.get("largest_chunk", 0), len(block))
            yield first, block


def _category_key(value: str):
    """Category identity: numbers by value ("1" and "1.0" are one category, as in pandas)."""
    try:
        return float(value)
    except ValueError:
        return value


def _category_order(values: set[str]) -> list:
    """pandas get_dummies order: numeric sort when every value is a number, else string sort."""
    keys = {_category_key(v) for v in values}
    if all(isinstance(k, float) for k in keys):
        return sorted(keys)
    return sorted(str(v) for v in values)


def _category_label(key) -> str:
    return str(key)


class KuaiRecStream:
    """The KuaiRec stream of ``directory``; see the module docstring.

    ``chunk_rows``: lines of ``small_matrix.csv`` read at a time; ``block_rows``: rows per
    (X, y) block yielded by :meth:`blocks`; ``order``: ``"sort"`` (default) or ``"file"``.
    """

    def __init__(self, directory: str | os.PathLike, chunk_rows: int = 200_000, block_rows: int = 50_000,
                 order: str = "sort"):
        self.directory = Path(directory)
        missing = [f for f in FILES if not (self.directory / f).is_file()]
        if missing:
            raise FileNotFoundError(f"KuaiRec: {self.directory} lacks {', '.join(missing)}")
        if order not in ("sort", "file"):
            raise ValueError(f"order must be 'sort' or 'file', got {order!r}")
        self.chunk_rows, self.block_rows, self.order = int(chunk_rows), int(block_rows), order
        self.stats: dict[str, int] = {}
        self._load_side_tables()
        self._index = None
        self._n_rows: int | None = None

    @classmethod
    def open(cls, data_dir=None, **kwargs) -> "KuaiRecStream":
        """The stream found under ``data_dir`` (cached per process and file set)."""
        d = find_kuairec_dir(data_dir)
        stamp = tuple((f, (d / f).stat().st_mtime_ns, (d / f).stat().st_size) for f in FILES)
        return _cached_stream(str(d), stamp, tuple(sorted(kwargs.items())))

    # -- side tables --------------------------------------------------------------------------

    def _load_side_tables(self) -> None:
        d = self.directory
        # users: small (7,176 rows)
        cols = ("user_id",) + USER_BINARY + USER_ONE_HOT
        rows = [r for _, block in read_csv_chunks(d / USER_FEATURES, cols, 100_000) for r in block]
        cats = []
        for j, name in enumerate(USER_ONE_HOT, start=1 + len(USER_BINARY)):
            present = {r[j].strip() for r in rows if r[j].strip() and r[j].strip().lower() != "nan"}
            cats.append(_category_order(present))
        names = list(USER_BINARY) + [f"{n}_{_category_label(c)}" for n, cs in zip(USER_ONE_HOT, cats) for c in cs]
        where = [{c: i for i, c in enumerate(cs)} for cs in cats]
        numeric = [bool(cs) and all(isinstance(c, float) for c in cs) for cs in cats]
        U = np.zeros((len(rows), len(names)))
        user_ids = np.empty(len(rows), dtype=np.int64)
        for i, r in enumerate(rows):
            user_ids[i] = int(float(r[0]))
            for j in range(len(USER_BINARY)):
                v = _number(r[1 + j])
                U[i, j] = 0.0 if math.isnan(v) else v
            offset = len(USER_BINARY)
            for k, cs in enumerate(cats):
                v = r[1 + len(USER_BINARY) + k].strip()
                key = _category_key(v) if numeric[k] else v
                if key in where[k]:
                    U[i, offset + where[k][key]] = 1.0
                offset += len(cs)
        self._user_ids, self._user_rows = _lookup_table(user_ids)
        self._users = np.vstack([U[self._user_rows], np.zeros((1, len(names)))])  # last row: unknown user
        self.user_feature_names = names

        # video tags (10,728 rows)
        rows = [r for _, block in read_csv_chunks(d / ITEM_CATEGORIES, ("video_id", "feat"), 100_000) for r in block]
        tags_of = [[int(t) for t in re.findall(r"-?\d+", r[1])] for r in rows]
        tags = sorted({t for ts in tags_of for t in ts})
        col = {t: i for i, t in enumerate(tags)}
        V = np.zeros((len(rows), len(tags)))
        video_ids = np.empty(len(rows), dtype=np.int64)
        for i, (r, ts) in enumerate(zip(rows, tags_of)):
            video_ids[i] = int(float(r[0]))
            for t in ts:
                V[i, col[t]] += 1.0
        self._video_ids, order = _lookup_table(video_ids)
        self._videos = np.vstack([V[order], np.zeros((1, len(tags)))])
        self.tag_feature_names = [f"video_tag_{t}" for t in tags]

        # daily item statistics (343,341 rows; kept as sorted keys + a small float matrix)
        cols = ("video_id", "date", "play_progress", "play_user_num") + DAILY_RATIOS
        keys, vals = [], []
        for _, block in read_csv_chunks(d / ITEM_DAILY_FEATURES, cols, self.chunk_rows, None):
            a = np.array([[_number(v) for v in r] for r in block], dtype=float).reshape(len(block), len(cols))
            ok = np.isfinite(a[:, 0]) & np.isfinite(a[:, 1])
            a = a[ok]
            with np.errstate(divide="ignore", invalid="ignore"):
                feats = np.column_stack([a[:, 2]] + [a[:, 4 + i] / a[:, 3] for i in range(len(DAILY_RATIOS))])
            feats[~np.isfinite(feats)] = 0.0
            keys.append(_daily_key(a[:, 0].astype(np.int64), a[:, 1].astype(np.int64)))
            vals.append(feats)
        keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
        vals = np.vstack(vals) if vals else np.zeros((0, len(DAILY_NAMES)))
        order = np.argsort(keys, kind="stable")
        self._daily_keys, self._daily = keys[order], np.vstack([vals[order], np.zeros((1, len(DAILY_NAMES)))])
        self.feature_names = self.user_feature_names + self.tag_feature_names + list(DAILY_NAMES)

    @property
    def n_features(self) -> int:
        return len(self.feature_names)

    # -- the log ------------------------------------------------------------------------------

    def _parse_log(self, block: list[list[str]]):
        a = np.array([[_number(v) for v in r] for r in block], dtype=float).reshape(len(block), len(LOG_COLUMNS))
        keep = np.all(np.isfinite(a), axis=1)
        return a[keep], np.flatnonzero(keep)

    def _build_index(self):
        users, videos, stamps, dates, labels = [], [], [], [], []
        for _, block in read_csv_chunks(self.directory / SMALL_MATRIX, LOG_COLUMNS, self.chunk_rows, self.stats):
            a, _ = self._parse_log(block)
            users.append(a[:, 0].astype(np.int32))
            videos.append(a[:, 1].astype(np.int32))
            stamps.append(a[:, 2])
            labels.append(np.where(a[:, 3] > WATCH_RATIO_THRESHOLD, 1, -1).astype(np.int8))
            dates.append(a[:, 4].astype(np.int32))
        cat = (lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dt))
        stamps = cat(stamps, float)
        order = np.argsort(stamps, kind="stable")
        self._index = (cat(users, np.int32)[order], cat(videos, np.int32)[order], stamps[order],
                       cat(dates, np.int32)[order], cat(labels, np.int8)[order])
        self._n_rows = len(stamps)

    @property
    def n_rows(self) -> int:
        """Rows after dropping incomplete ones (4,494,578 on the real file)."""
        if self._n_rows is None:
            if self.order == "sort":
                self._build_index()
            else:
                self._n_rows = sum(len(self._parse_log(b)[0]) for _, b in
                                   read_csv_chunks(self.directory / SMALL_MATRIX, LOG_COLUMNS, self.chunk_rows,
                                                   self.stats))
        return self._n_rows

    def features(self, user_ids: np.ndarray, video_ids: np.ndarray, dates: np.ndarray) -> np.ndarray:
        """Feature rows for (user, video, date) triples."""
        u = _find(self._user_ids, user_ids, len(self._users) - 1)
        v = _find(self._video_ids, video_ids, len(self._videos) - 1)
        k = _find(self._daily_keys, _daily_key(np.asarray(video_ids, np.int64), np.asarray(dates, np.int64)),
                  len(self._daily) - 1)
        return np.hstack([self._users[u], self._videos[v], self._daily[k]])

    def blocks(self, block_rows: int | None = None, max_rows: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(X, y) blocks of at most ``block_rows`` rows in timestamp order, ``max_rows`` rows in all."""
        block_rows = int(block_rows or self.block_rows)
        limit = self.n_rows if max_rows is None else min(max_rows, self.n_rows)
        if self.order == "sort":
            users, videos, _, dates, labels = self._index
            for start in range(0, limit, block_rows):
                s = slice(start, min(start + block_rows, limit))
                yield self.features(users[s], videos[s], dates[s]), labels[s].astype(float)
            return
        yield from self._file_order_blocks(block_rows, limit)

    def _file_order_blocks(self, block_rows: int, limit: int):
        last, done = -math.inf, 0
        for first, block in read_csv_chunks(self.directory / SMALL_MATRIX, LOG_COLUMNS, min(self.chunk_rows, block_rows),
                                            self.stats):
            a, kept = self._parse_log(block)
            if len(a):
                stamps = a[:, 2]
                prev = np.concatenate([[last], stamps[:-1]])
                bad = np.flatnonzero(stamps < prev)
                if bad.size:
                    raise DataFormatError(
                        f"{self.directory / SMALL_MATRIX}:{first + int(kept[bad[0]])}: timestamp {stamps[bad[0]]!r} is "
                        f"earlier than the previous row's; the file is not in timestamp order (use order='sort')")
                last = stamps[-1]
            take = a[: limit - done]
            if len(take):
                yield (self.features(take[:, 0].astype(np.int64), take[:, 1].astype(np.int64),
                                     take[:, 4].astype(np.int64)),
                       np.where(take[:, 3] > WATCH_RATIO_THRESHOLD, 1.0, -1.0))
                done += len(take)
            if done >= limit:
                return

    def load(self, max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The whole stream (or its first ``max_rows`` rows) as arrays: only for small prefixes."""
        parts = list(self.blocks(max_rows=max_rows))
        if not parts:
            return np.zeros((0, self.n_features)), np.zeros(0)
        return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _daily_key(video_ids: np.ndarray, dates: np.ndarray) -> np.ndarray:
    return np.asarray(video_ids, np.int64) * 100_000_000 + np.asarray(dates, np.int64)


def _lookup_table(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(ids, kind="stable")
    return ids[order], order


def _find(sorted_keys: np.ndarray, queries: np.ndarray, missing: int) -> np.ndarray:
    """Row of each query in ``sorted_keys`` (``missing`` where absent)."""
    queries = np.asarray(queries, np.int64)
    if len(sorted_keys) == 0:
        return np.full(len(queries), missing)
    pos = np.searchsorted(sorted_keys, queries)
    pos_c = np.minimum(pos, len(sorted_keys) - 1)
    return np.where(sorted_keys[pos_c] == queries, pos_c, missing)


@functools.lru_cache(maxsize=2)
def _cached_stream(directory: str, stamp, kwargs) -> KuaiRecStream:
    return KuaiRecStream(directory, **dict(kwargs))


def load_kuairec(data_dir=None, max_rows: int | None = None, **kwargs) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of the first ``max_rows`` rows of the KuaiRec stream (see :class:`KuaiRecStream`)."""
    return KuaiRecStream.open(data_dir, **kwargs).load(max_rows)


__all__ = ["FILES", "KuaiRecStream", "find_kuairec_dir", "load_kuairec", "read_csv_chunks"]
