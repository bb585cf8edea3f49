"""A shard of the service: the models of the keys hashed to it, their log and snapshots.

One shard is the only writer of its keys (the service hashes each key to one shard, CRC-32 of the
key modulo the shard count), so no two requests update one model at once. A key's model is
``okl.make(learner, random_state=0, **params)`` (the template) built at the key's first learn
and fed ``learn_one`` in the key's order, so its decisions are the library's: a restart rebuilds
it from its latest snapshot (an okl model file) and the learns logged after it, and it predicts
exactly as before.

Memory: a key in memory costs its learner's arrays plus about 32 KiB of Python objects and
per-event caches (:data:`OVERHEAD`: 17 KiB for ``fogd`` inside its 50-row warm-up, 35 KiB for
``linear`` after it, resident memory over 2,000 keys in benchmarks/serve.py). Beyond ``max_memory`` the least recently
used keys are evicted: a key with at most :data:`REPLAY_MAX` learns since its snapshot is simply
dropped (its log rebuilds it, O(those learns)), others are snapshotted first (one model file,
about 4 ms with its fsync). An evicted key comes back exactly, at its next event.

Cost per event: the learner's round, plus for a learn one staged log row and O(dim) bytes, plus
for a prequential metric one ``predict_one`` (skipped when the label joins a kept prediction,
whose decision is reused).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict

import numpy as np

from okl.learners import Learner, make
from okl.calibration import probabilities, probability
from okl.serve.inputs import GLOBAL_KEY, EventError, Schema
from okl.serve.store import Store

OVERHEAD = 32 * 1024  # bytes of Python objects per key in memory besides its arrays (measured, benchmarks/serve.py)
REPLAY_MAX = 256  # learns an evicted key may replay instead of being snapshotted
# a key's block of at most this many learns goes row by row (predict_one, learn_one): learn_many
# rebuilds the learner's per-event plan at the next predict (measured ~20 us: with delayed labels a
# key's blocks are of one or two rows); the decisions are the same either way
ONE_BY_ONE = 8
NDARRAY = np.ndarray


class Template:
    """How a key's model is made: the learner's name, task and hyperparameters, the named
    features and categorical names for dict inputs, and whether a new key starts from the global
    model (``warm_start="global"``)."""

    def __init__(self, learner: str = "linear", task: str = "classification", params: dict | None = None,
                 features: list | None = None, categorical: list | None = None, warm_start: str | None = None):
        if task not in ("classification", "regression"):
            raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
        if warm_start not in (None, "none", "global"):
            raise ValueError(f"warm_start must be 'none' or 'global', got {warm_start!r}")
        self.learner, self.task = learner, task
        self.params = dict(params or {})
        self.params.setdefault("random_state", 0)
        if task == "regression":
            self.params.setdefault("loss", "squared")
        self.features = list(features) if features else None
        self.categorical = list(categorical or [])
        self.warm_start = warm_start == "global"
        self.blank_decision: float | None = None  # a model's decision before any learn, when constant (warm_up)
        self.make()  # a bad name or hyperparameter fails here, before serving

    def make(self, categorical_columns: list | None = None):
        params = dict(self.params)
        if categorical_columns:
            params["categorical"] = categorical_columns
        return make(self.learner, **params)

    def warm_up(self, rows: int = 64) -> None:
        """Run throwaway models of the template through the calls a key's model gets (a predict on
        a model that never learned, predict_one and learn_one row by row, a learn_many block, a
        predict after it), so a process loads its compiled code here and not inside the first
        requests (measured: 0.5-1.3 s of loading at the first predict or block of a learner, which
        stalled every request behind it). O(rows) rounds of the learner; a learner that refuses
        these random rows is left to its first real event. Records :attr:`blank_decision` when an
        untrained model answers one constant on random rows (okl's learners: 0 before the first
        example)."""
        rng = np.random.default_rng(0)
        X = rng.normal(size=(rows, len(self.features) if self.features else 4))
        y = np.where(X[:, 0] > 0, 1.0, -1.0) if self.task == "classification" else X[:, 0] * 2.0
        try:
            blank = self.make()
            fs = {blank.predict_one(x) for x in X[:4]}
            if len(fs) == 1 and type(next(iter(fs))) is float and blank.calibration_ is None:
                self.blank_decision = fs.pop()  # (okl's learners: 0 before the first example)
            m = self.make()
            half = rows // 2
            for i in range(half):
                m.predict_one(X[i])
                m.learn_one(X[i], y[i])
            m.learn_many(X[half:], y[half:])
            m.predict_one(X[0])
        except (ValueError, ArithmeticError):
            pass

    def settings(self) -> dict:
        return {"learner": self.learner, "task": self.task, "params": self.params, "features": self.features,
                "categorical": self.categorical, "warm_start": self.warm_start}


class Entry:
    """A key in memory."""

    __slots__ = ("model", "dim", "schema", "snap_seq", "snap_file", "n_snap", "unsnapped", "bytes",
                 "n_predict", "n_learn", "n_scored", "loss_sum")

    def __init__(self, model, dim, schema, snap_seq=0, snap_file=None, n_snap=0, unsnapped=0):
        self.model, self.dim, self.schema = model, dim, schema
        self.snap_seq, self.snap_file, self.n_snap, self.unsnapped = snap_seq, snap_file, n_snap, unsnapped
        self.bytes = OVERHEAD
        self.n_predict = self.n_learn = self.n_scored = 0
        self.loss_sum = 0.0


def model_bytes(model) -> int:
    """Bytes of a model's arrays, its members' included (``auto`` keeps its pool's state in member
    objects): a walk over attributes, lists, tuples and dicts, each array counted once. The
    per-key cost besides :data:`OVERHEAD`; O(objects in the model)."""
    seen, total, stack = set(), 0, [model]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if type(obj) is NDARRAY:
            total += obj.nbytes if obj.base is None or id(obj.base) not in seen else 0
        elif isinstance(obj, (list, tuple)):
            stack.extend(v for v in obj if not isinstance(v, (int, float, str, bool, type(None))))
        elif isinstance(obj, dict):
            stack.extend(v for v in obj.values() if not isinstance(v, (int, float, str, bool, type(None))))
        elif hasattr(obj, "__dict__") and not isinstance(obj, type) and type(obj).__module__.startswith("okl"):
            stack.extend(v for v in vars(obj).values() if not isinstance(v, (int, float, str, bool, type(None))))
    return total


class Shard:
    """The keys of one shard: check, apply, commit, snapshot, evict. Not thread-safe (one owner)."""

    def __init__(self, template: Template, root: str, name: str = "okl-serve", fsync: bool = False,
                 max_memory: int = 1 << 30, snapshot_every: int = 10000, id_ttl: float = 86400.0):
        self.template = template
        self.store = Store(root, name, fsync)
        self.store.check_settings(template.settings())
        self.max_memory, self.snapshot_every, self.id_ttl = max_memory, snapshot_every, id_ttl
        self.entries: OrderedDict[str, Entry] = OrderedDict()
        self.bytes = 0
        self.learned = self.store.learned_ids()
        now = time.time()
        self.kept = {eid: (key, np.frombuffer(x).copy(), exp, None) for eid, key, x, exp in self.store.kept_rows(now)
                     if eid not in self.learned}
        self._to_snapshot: set[str] = set()
        self._blank = None
        self.n_events = {"predict": 0, "learn": 0, "duplicate": 0}
        self.score = [0, 0.0]  # events scored, loss sum (0/1 mistakes or squared error) since start
        self.classify = template.task == "classification"

    # ---- keys ------------------------------------------------------------------------------

    def entry(self, key: str) -> Entry | None:
        """The key in memory (loaded from its snapshot and log if evicted or after a restart)."""
        e = self.entries.get(key)
        if e is not None:
            self.entries.move_to_end(key)
            return e
        row = self.store.key_row(key)
        if row is None:
            return None
        meta, snap_seq, snap_file, n_snap = row
        schema = Schema(meta["names"], meta["categorical"]) if meta.get("names") else None
        if snap_file:
            model = Learner.load(os.path.join(self.store.root, snap_file))
        else:
            model = self.template.make(schema.columns() if schema else None)
        n = 0
        for X, y in self.store.log_after(key, snap_seq):  # the blocks as they were learned
            if len(y) <= ONE_BY_ONE:
                for i in range(len(y)):
                    model.learn_one(X[i], float(y[i]))
            else:
                model.learn_many(X, y)
            n += len(y)
        e = Entry(model, meta["dim"], schema, snap_seq, snap_file, n_snap, n)
        self._account(key, e)
        return e

    def _account(self, key: str, e: Entry) -> None:
        old = e.bytes if key in self.entries else 0
        e.bytes = OVERHEAD + model_bytes(e.model)
        self.entries[key] = e
        self.bytes += e.bytes - old

    def _create(self, key: str, x, index) -> Entry:
        if type(x) is dict:
            schema = Schema.first(x, self.template.features, self.template.categorical)
            dim = len(schema.names)
        else:
            schema, dim = None, len(x)
        model = None
        if self.template.warm_start and key != GLOBAL_KEY:
            g = self.entry(GLOBAL_KEY)
            if g is not None and g.dim == dim and (g.schema.names if g.schema else None) == (
                    schema.names if schema else None):
                model = g.model  # copied through a snapshot below
        meta = {"dim": dim, "names": schema.names if schema else None,
                "categorical": sorted(schema.categorical) if schema else []}
        self.store.stage_key(key, meta)
        if model is not None:
            # the warm start is the global model as it is now: the key's first snapshot
            self.store.commit()
            seq = self.store.next_seq()
            rel = self.store.snapshot_path(key, seq)
            model.save(os.path.join(self.store.root, rel))
            self.store.record_snapshot(key, seq, rel, 0, None)
            model = Learner.load(os.path.join(self.store.root, rel))
            e = Entry(model, dim, schema, seq, rel)
        else:
            e = Entry(self.template.make(schema.columns() if schema else None), dim, schema)
        self._account(key, e)
        return e

    # ---- events ----------------------------------------------------------------------------

    def check(self, events: list, seen: dict) -> None:
        """Refuse (EventError) what the keys' columns do not take; ``seen`` carries the columns a
        key gets from an earlier event of the same batch. Changes nothing."""
        for index, (op, key, eid, x, y) in events:
            if x is None:
                continue
            cols = seen.get(key)
            if cols is None:
                e = self.entries.get(key)
                if e is not None:
                    cols = (e.dim, e.schema)
                else:
                    row = self.store.key_row(key)
                    if row is not None:
                        meta = row[0]
                        cols = (meta["dim"], Schema(meta["names"], meta["categorical"]) if meta.get("names") else None)
                    elif type(x) is NDARRAY:
                        cols = (len(x), None)
                    else:
                        schema = Schema.first(x, self.template.features, self.template.categorical)
                        cols = (len(schema.names), schema)
                seen[key] = cols
            dim, schema = cols
            if type(x) is NDARRAY:
                if schema is not None:
                    raise EventError(f"this key takes named features (an object), got a list of {len(x)}", "x", index)
                if len(x) != dim:
                    raise EventError(f"has {len(x)} features, this key takes {dim}", "x", index)
            elif schema is None:
                raise EventError(f"this key takes a list of {dim} numbers, got an object", "x", index)
            else:
                schema.row(x, index)

    def apply(self, events: list, now: float) -> list:
        """Checked events ``[(index, (op, key, id, x, y))]`` in order; their answers in order.

        A key's consecutive learns are gathered into one block and learned by ``learn_many`` (the
        learner's compiled test-then-train loop over the rows: the decisions of ``predict_one`` then
        ``learn_one`` row by row, at a fraction of the per-event cost) until that key's next
        predict, which is answered by ``predict_one`` after the block; the block is one log row, and
        a restart replays it by the same call. A predict with an id whose label is the key's very
        next event (``{"op": "learn", "id": same}``) rides in the block: its decision is the
        block's decision before learning that row, which is the model's ``predict_one`` at that
        point; its ``proba`` uses the calibration as of the start of the key's block. A learn is
        staged in the log (acknowledged after :meth:`commit`); a predict with an id keeps its
        features for its label. Per event: about 1 us of Python besides the learner.
        """
        n = len(events)
        out: list = [None] * n
        nxt: list = [None] * n
        last: dict = {}
        for p in range(n - 1, -1, -1):
            k = events[p][1][1]
            nxt[p] = last.get(k)
            last[k] = p
        blocks: dict = {}
        fused: dict = {}
        learned, kept, entries, counts = self.learned, self.kept, self.entries, self.n_events
        for p in range(n):
            index, (op, key, eid, x, y) = events[p]
            if op == "predict":
                q = nxt[p]
                if q is not None and eid is not None and type(x) is NDARRAY and eid not in learned:
                    lq = events[q][1]
                    if lq[0] == "learn" and lq[2] == eid and lq[3] is None:
                        fused[q] = p  # answered from its label's block
                        counts["predict"] += 1
                        continue
                if key in blocks:
                    self._run_block(key, blocks.pop(key), events, out)
                out[p] = self._predict(index, key, eid, x, now)
                continue
            if eid is not None and eid in learned:
                counts["duplicate"] += 1
                out[p] = {"learned": False, "duplicate": True, "id": eid}
                pp = fused.pop(p, None)
                if pp is not None:  # (its id was learned by another key in between: answered on its own)
                    if key in blocks:
                        self._run_block(key, blocks.pop(key), events, out)
                    out[pp] = self._predict(events[pp][0], key, None, events[pp][1][3], 0.0)
                continue
            b = blocks.get(key)
            if b is not None:
                e, new = b[0], False
            else:
                e = entries.get(key)
                if e is not None:
                    entries.move_to_end(key)
                else:
                    e = self.entry(key)
                new = e is None
            if x is None:
                pp = fused.get(p)
                if pp is not None:
                    row = events[pp][1][3]
                    kept.pop(eid, None)
                else:
                    k = kept.pop(eid, None)
                    if k is None:
                        out[p] = {"learned": False, "duplicate": False, "id": eid,
                                  "reason": "no features kept under this id (never predicted with it, or past its "
                                            "time to live)"}
                        continue
                    row = k[1]
                    if e is not None and len(row) != e.dim:
                        out[p] = {"learned": False, "duplicate": False, "id": eid,
                                  "reason": f"the features kept under this id have {len(row)} columns, this key "
                                            f"takes {e.dim}"}
                        continue
                    self.store.stage_unkept(eid)
                if e is None:
                    e = self._create(key, row, index)
            else:
                if e is None:
                    e = self._create(key, x, index)
                row = x if type(x) is NDARRAY else e.schema.row(x, index)
                if eid is not None and kept.pop(eid, None) is not None:
                    self.store.stage_unkept(eid)
            if eid is not None:
                learned.add(eid)
            if b is None:
                b = blocks[key] = (e, [], [], [])
            b[1].append(row)
            b[2].append(y)
            b[3].append((p, eid, new, fused.get(p)))
        for key, b in blocks.items():
            self._run_block(key, b, events, out)
        return out

    def _run_block(self, key: str, block, events: list, out: list) -> None:
        e, rows, ys, slots = block
        model = e.model
        cal = model.calibration_
        cal = None if cal is None else cal.copy()
        k = len(rows)
        try:
            X, Y = (rows[0].reshape(1, -1) if k == 1 else np.array(rows)), np.array(ys)
            if k <= ONE_BY_ONE:
                d = np.empty(k)
                for i in range(k):
                    d[i] = model.predict_one(rows[i])
                    model.learn_one(rows[i], ys[i])
            else:
                d = model.learn_many(X, Y)
        except (ValueError, FloatingPointError, OverflowError) as exc:  # refused by the learner
            # nothing of the block is staged; the key is reloaded from its log at its next event
            if self.entries.pop(key, None) is not None:
                self.bytes -= e.bytes
            for p, eid, _, pp in slots:
                self.learned.discard(eid)
                out[p] = {"error": f"event {events[p][0]}: {exc}", "index": events[p][0]}
                if pp is not None:
                    out[pp] = out[p]
            return
        self.store.stage_learns(key, [sl[1] for sl in slots], X, Y, time.time())
        if self.classify:
            loss_sum = float(np.count_nonzero((d >= 0) != (Y > 0)))
        else:
            loss_sum = float(np.dot(d - Y, d - Y))
        decisions = d.tolist()
        classify, ps = self.classify, None
        for i, (p, eid, new, pp) in enumerate(slots):
            out[p] = {"learned": True, "duplicate": False, "new_key": new, "id": eid} if eid is not None else \
                {"learned": True, "duplicate": False, "new_key": new}
            if pp is not None:
                f = decisions[i]
                if classify:
                    if ps is None:  # the probabilities of the block's predicts, in one call
                        ps = [0.5] * k if cal is None else probabilities(cal, d).tolist()
                    p1 = ps[i]
                    out[pp] = {"decision": f, "prediction": 1 if f >= 0 else -1, "proba": {"-1": 1.0 - p1, "1": p1},
                               "new_key": new}
                else:
                    out[pp] = {"decision": f, "prediction": f, "new_key": new}
        e.n_learn += k
        e.n_scored += k
        e.loss_sum += loss_sum
        self.score[0] += k
        self.score[1] += loss_sum
        self.n_events["learn"] += k
        before = e.unsnapped
        e.unsnapped += k
        if e.unsnapped >= self.snapshot_every:
            self._to_snapshot.add(key)
        elif before == 0 or before.bit_length() != e.unsnapped.bit_length() or before >> 10 != e.unsnapped >> 10:
            self._account(key, e)  # (re-measured at 1, 2, 4, ... 1024 learns, then every 1024: auto's walk is ms)

    def _answer(self, f: float, cal, new: bool) -> dict:
        if self.classify:
            p = 0.5 if cal is None else probability(cal, f)
            return {"decision": f, "prediction": 1 if f >= 0 else -1, "proba": {"-1": 1.0 - p, "1": p},
                    "new_key": new}
        return {"decision": f, "prediction": f, "new_key": new}

    def _predict(self, index, key: str, eid, x, now: float) -> dict:
        e = self.entries.get(key)
        if e is not None:
            self.entries.move_to_end(key)
        else:
            e = self.entry(key)
        model = e.model if e is not None else self._fresh(key, x)
        row = x if type(x) is NDARRAY else (e.schema.row(x, index) if e is not None else self._schema_row(x))
        blank = self.template.blank_decision
        try:
            # a key with no learn: the template's decision before any example (constant, checked at
            # warm-up), without the learner's per-call input checks (half of a predict request's work)
            f = blank if blank is not None and model is self._blank else model.predict_one(row)
        except (ValueError, FloatingPointError, OverflowError) as exc:  # refused by the learner: nothing kept
            return {"error": f"event {index}: {exc}", "field": "x", "index": index}
        if e is not None:
            e.n_predict += 1
        self.n_events["predict"] += 1
        if eid is not None and eid not in self.learned:
            if row.base is not None:  # (a view of the request's matrix: keep only this row)
                row = row.copy()
            self.kept[eid] = (key, row, now + self.id_ttl, f)
            self.store.stage_kept(eid, key, row, now + self.id_ttl)
        return self._answer(f, model.calibration_, e is None)

    def _fresh(self, key: str, x):
        """The model that answers a predict for a key with no learn yet."""
        if self.template.warm_start and key != GLOBAL_KEY:
            g = self.entry(GLOBAL_KEY)
            if g is not None and (type(x) is NDARRAY) == (g.schema is None):
                return g.model
        if type(x) is dict:
            return self.template.make(Schema.first(x, self.template.features, self.template.categorical).columns())
        if self._blank is None:  # never learns: one answers every new key (its decision is the template's)
            self._blank = self.template.make()
        return self._blank

    def _schema_row(self, x: dict) -> np.ndarray:
        return Schema.first(x, self.template.features, self.template.categorical).row(x, None)

    # ---- durability ------------------------------------------------------------------------

    def commit(self) -> None:
        """Write the staged rows (one transaction), then snapshot the keys that are due and evict
        beyond the memory cap (both only ever hold committed learns)."""
        self.store.commit()
        for key in self._to_snapshot:
            e = self.entries.get(key)
            if e is not None:
                self.snapshot(key, e)
        self._to_snapshot.clear()
        if self.bytes > self.max_memory:
            self.evict(int(self.max_memory * 0.9))

    def snapshot(self, key: str, e: Entry, account: bool = True) -> None:
        seq = self.store.mark()  # every log row of this key so far is <= the current mark
        rel = self.store.snapshot_path(key, seq)
        e.model.save(os.path.join(self.store.root, rel))
        n = e.n_snap + e.unsnapped
        self.store.record_snapshot(key, seq, rel, n, e.snap_file)
        e.snap_seq, e.snap_file, e.n_snap, e.unsnapped = seq, rel, n, 0
        if account:
            self._account(key, e)

    def evict(self, target: int) -> int:
        """Drop least recently used keys until their bytes are at most ``target``; returns how many."""
        n = 0
        while self.bytes > target and len(self.entries) > 1:
            key, e = self.entries.popitem(last=False)
            if e.unsnapped > REPLAY_MAX:
                self.snapshot(key, e, account=False)
            self.bytes -= e.bytes
            n += 1
        return n

    def rollback(self) -> None:
        """After a failed commit: forget what was staged and reload every key from the store, so
        no model holds a learn that is not in the log."""
        self.store.discard()
        self.entries.clear()
        self.bytes = 0
        self.learned = self.store.learned_ids()
        self.kept = {eid: (key, np.frombuffer(x).copy(), exp, None)
                     for eid, key, x, exp in self.store.kept_rows(time.time()) if eid not in self.learned}

    def expire(self, now: float) -> None:
        for eid in [i for i, k in self.kept.items() if k[2] <= now]:
            del self.kept[eid]
        self.store.expire(now)

    def flush(self) -> int:
        """Snapshot every key in memory more than :data:`REPLAY_MAX` learns behind its snapshot (a
        clean shutdown, and every ``--snapshot-seconds``): a restart then replays at most that
        many learns a key. Returns how many were written."""
        self.store.commit()
        n = 0
        for key, e in list(self.entries.items()):
            if e.unsnapped > REPLAY_MAX:
                self.snapshot(key, e)
                n += 1
        return n

    # ---- reading ---------------------------------------------------------------------------

    def info(self, key: str) -> dict | None:
        e = self.entry(key)
        if e is None:
            return None
        return {"key": key, "learner": self.template.learner, "task": self.template.task, "dim": e.dim,
                "features": e.schema.names if e.schema else None, "learned": e.n_snap + e.unsnapped,
                "predicted_since_start": e.n_predict, "metric": self.metric_name(),
                "metric_since_start": e.loss_sum / e.n_scored if e.n_scored else None,
                "state_bytes": e.bytes - OVERHEAD, "memory_bytes": e.bytes,
                "snapshot_learns": e.n_snap, "logged_since_snapshot": e.unsnapped}

    def metric_name(self) -> str:
        return "mistake_rate" if self.classify else "mean_squared_error"

    def model_bytes(self, key: str) -> bytes | None:
        """The key's okl model file as of now (snapshotted first when behind), or None."""
        e = self.entry(key)
        if e is None:
            return None
        if e.unsnapped or not e.snap_file:
            self.store.commit()
            self.snapshot(key, e)
        with open(os.path.join(self.store.root, e.snap_file), "rb") as fh:
            return fh.read()

    def counts(self) -> dict:
        """Events by kind, the prequential score (events scored, loss sum) and keys in memory."""
        return {**self.n_events, "scored": self.score[0], "loss": self.score[1], "keys": len(self.entries)}

    def run(self, events: list, now: float):
        """Check, apply and commit one request's events of this shard (what a shard actor does per
        call): the answers, or the refusal's payload (nothing applied)."""
        try:
            self.check(events, {})
        except EventError as exc:
            return exc.payload()
        try:
            out = self.apply(events, now)
            self.commit()
        except Exception:
            self.rollback()
            raise
        return out

    def delete(self, key: str) -> bool:
        e = self.entries.pop(key, None)
        if e is not None:
            self.bytes -= e.bytes
        elif self.store.key_row(key) is None:
            return False
        self.store.commit()
        self.store.forget(key)
        self.kept = {i: k for i, k in self.kept.items() if k[0] != key}
        return True

    def close(self) -> None:
        self.store.close()
