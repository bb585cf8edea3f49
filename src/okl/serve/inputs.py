"""Checking the service's events and turning their features into a learner's input row.

An event is a JSON object: ``{"op": "predict", "key"?, "id"?, "x"}`` or ``{"op": "learn", "key"?,
"id"?, "x"?, "y"}`` (a learn needs ``x`` or an ``id`` whose features were kept by a prediction).
``x`` is a list of numbers, or a dict of named features as okl's River adapter takes them: a
missing name is 0, ``true``/``false`` are 1/0, a string is a category level (its column is a
``categorical=`` column of the key's learner, the level's code is the CRC-32 of the string, so
levels are one-hot inside the learner by :mod:`okl.categories`), ``null`` is 0.

A key's columns are fixed at its first event: arrays fix the width; a dict fixes the names (the
template's ``features`` when given, else the event's names in sorted order) and which of them are
categorical (string-valued ones and the template's ``categorical``). A later name outside them is
refused (422) rather than silently dropped: declare the names with ``--features``.

Every refusal is an :class:`EventError` naming the field and the event's index in a batch;
checking costs O(len(x)) per event and changes nothing. :func:`check_events` checks a request's
events at once (about 1 us an event of 8 numbers: a pass of dict tests, then every list row in one
NumPy conversion); any irregularity sends the request through :func:`check_event` event by event,
so the refusal is always the first refused event's.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from okl._validation import MAX_ABS_FEATURE

OPS = ("predict", "learn")
FIELDS = {"predict": frozenset(("op", "key", "id", "x")), "learn": frozenset(("op", "key", "id", "x", "y"))}
FIELDS_OF = {op: {op: fields - {"op"}} for op, fields in FIELDS.items()}  # the single-event endpoints' (no "op")
MAX_NAME = 256  # characters in a key or an id
MAX_WIDTH = 1 << 20  # features in one row
MAX_ABS = MAX_ABS_FEATURE  # the largest feature magnitude okl's learners take
GLOBAL_KEY = ""  # the model of events without a "key"
FLOAT = float
LIST = list
DICT = dict
STR = str


class EventError(ValueError):
    """A refused event: ``field`` names what is wrong, ``index`` the event's place in a batch."""

    def __init__(self, message: str, field: str | None = None, index: int | None = None):
        self.field, self.index, self.reason = field, index, message
        where = f"event {index}: " if index is not None else ""
        super().__init__(f"{where}{field + ': ' if field else ''}{message}")

    @classmethod
    def from_payload(cls, d: dict) -> "EventError":
        """The refusal :meth:`payload` describes (a shard actor's answer)."""
        exc = cls.__new__(cls)
        ValueError.__init__(exc, d["error"])
        exc.field, exc.index, exc.reason = d.get("field"), d.get("index"), d["error"]
        return exc

    def payload(self) -> dict:
        return {"error": str(self), "field": self.field, "index": self.index}


def _name(value, field: str, index) -> str:
    if type(value) is not STR:
        raise EventError(f"must be a string, got {type(value).__name__}", field, index)
    if len(value) > MAX_NAME:
        raise EventError(f"is longer than {MAX_NAME} characters", field, index)
    return value


def _row(x, index) -> np.ndarray | dict:
    if type(x) is LIST:
        if not x or len(x) > MAX_WIDTH:
            raise EventError(f"must hold 1 to {MAX_WIDTH} numbers, got {len(x)}", "x", index)
        try:  # Python's sum of a short list is far cheaper than NumPy's, and refuses non-numbers
            s = sum(x)
            row = np.array(x, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            bad = next((j for j, v in enumerate(x) if type(v) not in (int, FLOAT, bool)), 0)
            raise EventError(f"must be numbers, got {type(x[bad]).__name__} at position {bad}", "x", index) from None
        if s - s != 0.0:  # NaN or infinite somewhere (or a finite sum that overflowed)
            bad = next((j for j, v in enumerate(x) if not math.isfinite(v)), None)
            if bad is not None or not np.isfinite(row).all():
                bad = bad or 0
                raise EventError(f"must be finite, got {x[bad]} at position {bad}", "x", index)
        if not (-MAX_ABS <= min(x) and max(x) <= MAX_ABS):
            bad = next(j for j, v in enumerate(x) if abs(v) > MAX_ABS)
            raise EventError(f"has {x[bad]} at position {bad}; features must be at most {MAX_ABS:g} in magnitude "
                             "(okl's learners refuse more: scale them)", "x", index)
        return row
    if type(x) is DICT:
        if not x or len(x) > MAX_WIDTH:
            raise EventError(f"must name 1 to {MAX_WIDTH} features, got {len(x)}", "x", index)
        for name, v in x.items():
            if v is None or type(v) in (STR, bool):
                continue
            if type(v) not in (int, FLOAT) or not math.isfinite(v):
                raise EventError(f"feature {name!r} must be a finite number, a string, a boolean or null, got {v!r}",
                                 "x", index)
        return x
    raise EventError(f"must be a list of numbers or an object of named features, got {type(x).__name__}", "x", index)


def check_event(e, index, task: str, op: str | None = None) -> tuple:
    """(op, key, id, row or dict or None, y or None) of one event, or :class:`EventError`.
    ``op`` given (the single-event endpoints): the event has no ``op`` field."""
    if type(e) is not DICT:
        raise EventError(f"must be a JSON object, got {type(e).__name__}", None, index)
    if op is None:
        op = e.get("op")
        if op not in OPS:
            raise EventError(f"must be 'predict' or 'learn', got {op!r}", "op", index)
        allowed = FIELDS[op]
    else:
        allowed = FIELDS[op] - {"op"}
    if len(e) > len(allowed) or not allowed.issuperset(e):
        extra = sorted(set(e) - allowed)
        if extra:
            raise EventError(f"unknown field (a {op} takes {', '.join(sorted(allowed))})", extra[0], index)
    key = e.get("key", GLOBAL_KEY)
    if type(key) is not STR or len(key) > MAX_NAME:
        _name(key, "key", index)
    eid = e.get("id")
    if eid is not None and (type(eid) is not STR or len(eid) > MAX_NAME):
        _name(eid, "id", index)
    x = e.get("x")
    if x is not None:
        x = _row(x, index)
    if op == "predict":
        if x is None:
            raise EventError("is required for a predict", "x", index)
        return op, key, eid, x, None
    y = e.get("y", _MISSING)
    if x is None and eid is None:
        raise EventError("a learn needs x, or an id whose features a predict kept", "x", index)
    if type(y) is int and (y == 1 or y == -1):  # the common label, checked without a call
        return op, key, eid, x, float(y)
    if y is _MISSING:
        raise EventError("is required for a learn", "y", index)
    return op, key, eid, x, label(y, task, index)


_MISSING = object()
_NUMERIC = frozenset("fiub")  # NumPy kinds of a matrix of numbers (a string or None makes another kind)


class _Irregular(Exception):
    """The fast path of :func:`check_events` gives way to :func:`check_event`."""


def check_events(raw: list, task: str, op: str | None = None) -> list:
    """``[(index, checked event)]`` of a request's events, as :func:`check_event` gives them one by
    one (its refusal is the first refused event's). The list rows of one width are converted by one
    NumPy call (each event's row is a view of that matrix) and tested finite at once."""
    if len(raw) == 1:  # (one event: the per-event path is the cheaper one)
        return [(0, check_event(raw[0], 0, task, op))]
    try:
        return _check_fast(raw, task, op)
    except (_Irregular, EventError, TypeError, ValueError, OverflowError):
        return [(i, check_event(e, i, task, op)) for i, e in enumerate(raw)]


def _check_fast(raw: list, task: str, op: str | None) -> list:
    items, lists = [], []
    fields = FIELDS if op is None else FIELDS_OF[op]
    for i, e in enumerate(raw):
        if type(e) is not DICT:
            raise _Irregular
        o = e.get("op") if op is None else op
        allowed = fields.get(o)
        if allowed is None or not allowed.issuperset(e):
            raise _Irregular
        key = e.get("key", GLOBAL_KEY)
        eid = e.get("id")
        if type(key) is not STR or len(key) > MAX_NAME or (eid is not None and (type(eid) is not STR
                                                                                or len(eid) > MAX_NAME)):
            raise _Irregular
        x = e.get("x")
        if type(x) is LIST:
            lists.append(x)
        elif x is not None:
            x = _row(x, i)
        if o == "predict":
            if x is None:
                raise _Irregular
            items.append((i, o, key, eid, x, None))
            continue
        if x is None and eid is None:
            raise _Irregular
        y = e.get("y", _MISSING)
        items.append((i, o, key, eid, x, float(y) if type(y) is int and (y == 1 or y == -1) else label(y, task, i)))
    if not lists:
        return [(i, (o, key, eid, x, y)) for i, o, key, eid, x, y in items]
    M = np.array(lists)
    if M.ndim != 2 or M.dtype.kind not in _NUMERIC or not 0 < M.shape[1] <= MAX_WIDTH:
        raise _Irregular
    M = M.astype(np.float64, copy=False)
    if not (np.isfinite(M).all() and np.abs(M).max() <= MAX_ABS):
        raise _Irregular
    rows = iter(M)
    return [(i, (o, key, eid, next(rows) if type(x) is LIST else x, y)) for i, o, key, eid, x, y in items]


def label(y, task: str, index) -> float:
    """The learner's target of a JSON label: classification takes -1/+1 (0 and false are -1, true
    is +1), regression any finite number."""
    if type(y) is bool:
        return 1.0 if y else -1.0
    if type(y) not in (int, FLOAT) or not math.isfinite(y):
        raise EventError(f"must be a finite number, got {y!r}", "y", index)
    if task == "classification":
        if y not in (1, -1, 0):
            raise EventError(f"a binary label must be -1/+1 (or 0/1, false/true), got {y!r}", "y", index)
        return 1.0 if y == 1 else -1.0
    return float(y)


class Schema:
    """A key's named columns (None for a key fed arrays): names in column order, categorical ones."""

    __slots__ = ("names", "index", "categorical")

    def __init__(self, names: list, categorical: list):
        self.names = list(names)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.categorical = frozenset(categorical)

    @classmethod
    def first(cls, x: dict, features: list | None, categorical: list) -> "Schema":
        names = list(features) if features else sorted(x)
        cats = [n for n in names if n in categorical or isinstance(x.get(n), str)]
        return cls(names, cats)

    def meta(self) -> dict:
        return {"names": self.names, "categorical": sorted(self.categorical)}

    def columns(self) -> list[int]:
        return sorted(self.index[n] for n in self.categorical)

    def row(self, x: dict, index) -> np.ndarray:
        out = np.zeros(len(self.names))
        for name, v in x.items():
            j = self.index.get(name)
            if j is None:
                raise EventError(f"unknown feature {name!r} for this key (its features: "
                                 f"{', '.join(map(repr, self.names[:20]))}{' ...' if len(self.names) > 20 else ''}; "
                                 "declare every name with --features)", "x", index)
            if type(v) is STR:
                if name not in self.categorical:
                    raise EventError(f"feature {name!r} is numeric for this key, got the string {v!r}", "x", index)
                out[j] = float(zlib.crc32(v.encode("utf-8")))
            elif v is not None:
                out[j] = float(v)
        return out
