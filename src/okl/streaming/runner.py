"""``okl stream``: run one learner on a live stream of events, with crash-safe checkpoints.

Each input line is one *event*: a labelled line is predicted and then learned (test-then-train,
the same code path as ``Learner.run``), an unlabelled line is only predicted. Every prediction is
written to stdout as soon as it is made (and flushed)::

    <event number>\\t<decision value f(x)>\\t<predicted label>

with the event number counted from 0 over the data lines of the whole stream (it continues across
restarts), f printed with 17 significant digits (it reproduces the float exactly) and the
predicted label -1 or +1 (f >= 0 -> +1, as everywhere in okl); for a regression loss the third
column repeats f. Running totals (events, labelled events, mistake rate or mean squared loss so
far, events/s) go to stderr every ``--stats-every`` seconds and at the end; the mean squared loss
leaves out the first labelled event, predicted before any label (0, or the target's scale away on
targets far from 0: it would dominate the mean of a short stream).

Input (``--input FILE`` or ``-`` for standard input; ``--format``)
    ``svmlight``: ``label idx:val ...`` with 1-based increasing indices (parsed by
    :func:`okl.data.readers.parse_svmlight_line`); a line without a label (it starts with
    ``idx:val``) is unlabelled. The dimension is not inferable from one sparse line, so ``--dim``
    is required. The lines are parsed into CSR rows (:mod:`scipy.sparse`: column indices and
    values, no dense row), which go to the learner as dense blocks of at most ``DENSE_BLOCK_VALUES``
    values (``okl run``'s numbers on the same file), or as they are with ``--n-hashed`` to a learner
    that takes CSR rows (``accepts_csr``: :func:`takes_csr`). With
    ``--n-hashed K`` the features are names, ``label name:value ...`` (``+1 word:1 other:2.5``;
    any text without spaces, the value after its last ``:``), hashed with a sign into K columns
    (signed feature hashing, Weinberger et al., ICML 2009: name -> column and sign by
    :func:`okl.categories.signed_bucket`, the rule of the River adapters' ``n_features=0,
    n_hashed=K``, so a dict key and a line's name of the same text share a column); two names in
    one column add their signed values; K is the dimension (``--dim``, if given, must equal it)
    and is in the checkpoint. ``csv``: fields separated by ``--sep`` (default ``,``), quoted as ``okl run``
    reads them (``"0.1","big, red"``: :func:`okl.data.readers.split_fields`), the features
    numbers; the label is column ``--label-column`` (default the last), a number or a class name
    (names in order of appearance: the first -1, the second +1, a third turns the stream
    multi-class; predictions print the names); an empty label field or ``?`` marks an
    unlabelled line; the dimension is the first data line's field count minus one (or ``--dim``,
    checked); ``--header`` skips the first line. Blank lines and lines starting with ``#`` are not
    events; a UTF-8 byte-order mark opening the stream is skipped. Classification labels are
    -1/+1, or ``--positive-label V`` maps V to +1 and every other label to -1 (V must be finite;
    a stream in which no labelled event matched V ends with a warning saying so); otherwise the first
    label that is neither turns the stream multi-class (said on stderr): one-vs-rest from there
    on (:class:`okl.runtime.multiclass.MultiClass`: K outputs over one feature map for auto,
    NOGD, FORKS and FOGD, one binary head per class for the others; the binary learner continues
    as the classes -1 / +1 if it learned them), the second output column is then the largest
    margin and the third the predicted class (``?`` before any). Features are read as
    given: a stream has no "whole dataset" to take a [0, 1] range from, so without ``--sigma`` the
    learner fixes a per-feature scale (:mod:`okl.scaling`) and its Gaussian width
    (``okl.kernels.scale_sigma`` on the scaled rows) from the first 50 events, predicting their
    running label mean meanwhile; the scale is in the checkpoint. With ``--sigma`` the width is in
    the units of the features as given and they are not rescaled (``--param scale=range`` rescales
    them).

End of input
    Standard input ends at EOF. A file ends at EOF unless ``--follow`` is given: then, like
    ``tail -f``, the runner waits for lines appended to the file and stops only after SECONDS
    without new data (``--follow`` alone: never; stop it with SIGINT/SIGTERM, which checkpoint
    and exit cleanly). An event is a line with its newline: a last line without one (a producer
    that died mid-write, or a file without a final newline) is not processed; a warning names it,
    the exit status stays 0 and the checkpoint ends at the last complete line, so feeding the
    completed stream again resumes exactly there (while following, a partial line is taken to be
    still being written). A file that shrinks
    below the position already read is an error (rotation/truncation is not followed).

Bad lines
    A line that cannot be parsed (or has a label the learner rejects, a feature index beyond
    ``--dim``, a wrong field count, NaN/inf) raises :class:`okl.data.DataFormatError` naming
    ``input:line``; by default the stream **stops** there (exit status 2), after checkpointing
    every event before the bad line, so after fixing the line a restart continues exactly there.
    With ``--skip-bad`` the line is reported on stderr as a warning, counted, and skipped.

Checkpoints (``--checkpoint PATH --every N``)
    Every N events, at the end of the stream, before stopping on a bad line and on SIGINT/SIGTERM,
    the complete learner state (``Learner.save``: ``.npz`` + JSON, no pickle) and the input
    position (events, lines and bytes consumed, running totals) are written together into one
    zip file: written to a temporary name, fsync'ed, renamed over PATH (and the directory
    fsync'ed), so PATH always holds one complete, consistent checkpoint. If PATH exists when the
    runner starts, it resumes from it: a file input is positioned at the recorded byte offset, a
    standard-input stream (the whole stream fed again) has the recorded number of bytes skipped,
    so no event is skipped or learned twice, and the predictions equal those of an uninterrupted
    run. The learner, its hyperparameters and the input format must be the ones the checkpoint
    was made with (a mismatch is an error that names the difference). The checkpoint's directory
    is checked to take a file before the first event, and ``PATH.lock`` (kept beside it) is locked
    while the stream runs: a second ``okl stream`` on the same checkpoint is refused, naming the
    process that holds it. A failed write (a full disk) leaves no temporary file and names PATH. Predictions written after
    the last checkpoint and before a crash are written again after the restart, with the same
    event numbers (at-least-once output; deduplicate on the event number).

Blocks
    Input is read a block at a time (whatever is available, up to ``BLOCK_BYTES``; a live stream's
    events are handled as they arrive). The plain labelled events of a block are parsed together
    (svmlight: :func:`okl.data.readers.parse_svmlight_block`, scikit-learn's reader, into a CSR
    block; ``--n-hashed``: :func:`okl.streaming.lines.parse_hashed_line` per line, into a CSR
    block; CSV: the per-line parser) and learned a run at a time through the learner's per-event arithmetic in
    its compiled loops (``EventPath.learn_rounds``); unlabelled events, CSV headers and anything
    the block parser does not take plainly (a bad line, an unusual label) go one line at a time,
    as before. Runs are cut where a checkpoint is due, so checkpoints hold exactly the positions
    of a line-at-a-time run, and every decision equals ``learn_one``'s bit for bit whatever the
    blocks were: a resumed stream prints exactly the uninterrupted predictions. Output is written
    and flushed a run at a time. About 3 us an event for NOGD at its defaults and 25 us for
    ``auto``, the default learner (parsing included, ``benchmarks/events.py``).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from typing import BinaryIO, TextIO
import numpy as np
from okl._validation import MAX_ABS_FEATURE
from okl.data.readers import DataFormatError, parse_svmlight_block
from okl.runtime.base import Learner
from okl.runtime.categorical import input_width
from okl.runtime.multiclass import MultiClass
from okl.streaming.checkpoint import StreamConfig, StreamPosition, write_checkpoint
from okl.streaming.labels import StreamLabels
from okl.streaming.lines import (SEGMENT_EVENTS, _read_blocks, _Stop, parse_event, parse_hashed_line,
                                 parse_sparse_event, rows_csr)


# --------------------------------------------------------------------------------------------
# Runner


#: most values of a dense block handed to a learner that does not take CSR rows (32 MiB of float64):
#: a run of an svmlight stream of d columns then holds at most this / d events (a hashed stream of
#: 2^20 columns: 4), as the learner's loops are exact whatever the blocks are
DENSE_BLOCK_VALUES = 1 << 22


def takes_csr(learner, hashed: bool) -> bool:
    """Whether the stream hands the learner its CSR rows as they are: the learner takes them in its
    own sparse arithmetic (``accepts_csr``: ``auto``, FOGD) and the features are hashed names
    (``--n-hashed``: an open vocabulary, wide and sparse). Plain svmlight lines go dense, as ``okl
    run`` reads the same file: a CSR block would change the learner's input map (centre 0 for
    sparse rows, okl.scaling.window_scale) and so its numbers against ``okl run``'s."""
    return hashed and getattr(learner, "accepts_csr", False) is True


def learner_rows(learner, X, hashed: bool):
    """An svmlight block (a CSR matrix from the reading side) as the learner takes it: as it is when
    :func:`takes_csr`, else dense (this is the one place an svmlight stream's rows become dense: at
    most ``SEGMENT_EVENTS`` rows at a time, the rows the learner would densify itself)."""
    if takes_csr(learner, hashed) or not hasattr(X, "toarray"):
        return X
    return np.ascontiguousarray(X.toarray())


def learner_row(learner, x, hashed: bool):
    """One event's 1 x d CSR row as the learner takes it (:func:`learner_rows`; dense: 1-D)."""
    if takes_csr(learner, hashed) or not hasattr(x, "toarray"):
        return x
    return x.toarray()[0]


def _drop_rows(X, start: int, stop: int):
    """X without its rows start..stop-1 (dense or CSR)."""
    if hasattr(X, "toarray"):
        keep = np.ones(X.shape[0], dtype=bool)
        keep[start:stop] = False
        return X[keep]
    return np.delete(X, np.s_[start:stop], axis=0)


def _one_line(exc: BaseException, limit: int = 200) -> str:
    """An error about an input line, on one line, each quoted token cut to ``limit`` characters."""
    import re

    text = " ".join(str(exc).split())
    text = re.sub(r"(['\"])([^'\"]{%d})[^'\"]*\1" % limit, lambda m: f"{m.group(1)}{m.group(2)}...{m.group(1)}", text)
    return text if len(text) <= 3 * limit else text[:3 * limit] + "..."


class StreamRunner(StreamLabels):
    """Reads events, predicts/learns, writes predictions, statistics and checkpoints."""

    def __init__(self, learner: Learner, config: StreamConfig, position: StreamPosition, *,
                 checkpoint: str | None = None, every: int = 1000, skip_bad: bool = False,
                 stats_every: float = 10.0, out: TextIO | None = None, err: TextIO | None = None,
                 quiet: bool = False, header: bool = False):
        self.learner, self.config, self.pos = learner, config, position
        self.checkpoint, self.every, self.skip_bad = checkpoint, every, skip_bad
        self.stats_every, self.quiet, self.header = stats_every, quiet, header
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.classification = learner.task == "classification"
        self.multi = isinstance(learner, MultiClass)
        self._codes: dict = {}
        self._checkpointed_at = position.events
        self._start_events = position.events
        self._t0 = time.perf_counter()

    # ---- one event -----------------------------------------------------------------------

    def _first_width(self, dim: int) -> None:
        """The first event's width: the learner's categorical columns must be among its features."""
        cols = getattr(self.learner, "categorical", None)
        if cols and cols[-1] >= dim:
            raise ValueError(f"--categorical {','.join(map(str, cols))}: column {cols[-1]} is not a feature column; "
                             f"the events have {dim} features, columns 0..{dim - 1} (the label not counted)")

    def process_line(self, text: str, where: str) -> None:
        """Predict (and learn, when labelled) one data line; raises DataFormatError on a bad line."""
        if self.config.format == "svmlight" and self.pos.dim is not None:
            x, label = parse_sparse_event(text, where, self.pos.dim, self.config.n_hashed)
            x = learner_row(self.learner, x, self.config.n_hashed is not None)
        else:
            x, label = parse_event(text, where, self.config.format, self.pos.dim, self.config.sep,
                                   self.config.label_column)
        if self.pos.dim is None:
            self._first_width(int(x.shape[0]))
            self.pos.dim = int(x.shape[0])
        if label is None:
            f = self.learner.decision_one(x) if self.multi else self.learner.predict_one(x)
        else:
            saved, n_names = (self.learner, self.multi), len(self.pos.label_names)
            try:
                y = self._target(label, where)
                f = self.learner.events.learn_round(self.learner, x, y)  # as _learn_rows: one event at a time
            except ValueError as exc:  # the learner validates before changing any state
                self.learner, self.multi = saved  # (a switch to K classes built a new learner)
                del self.pos.label_names[n_names:]  # (and a refused event names no class)
                if isinstance(exc, DataFormatError):
                    raise
                raise DataFormatError(f"{where}: {exc}") from None
            if self.multi and not saved[1]:
                self._said_multiclass(label, where)
            self.pos.labelled += 1
            if self.multi:
                self.pos.mistakes += int(self._classes_of(f[None, :])[0] != y)  # NaN: a mistake
            elif self.classification:
                self.pos.mistakes += int((1.0 if f >= 0.0 else -1.0) != y)
                self.pos.labels_seen |= 2 if y > 0 else 1
            elif self.pos.labelled > 1:  # (the first labelled event is predicted before any label)
                self.pos.squared_loss += (f - y) ** 2
        if self.multi:
            f = np.asarray(f, dtype=float)
            pred = self._classes_of(f[None, :])[0]
            f, pred = (float(f.max()) if f.size else -math.inf), ("?" if math.isnan(pred) else f"{pred:g}")
            if self.pos.label_names and pred != "?":
                pred = self._name_for(float(pred))
        else:
            pred = ("1" if f >= 0.0 else "-1") if self.classification else f"{f:.17g}"
            if self.pos.label_names and self.classification:
                pred = self._name_for(1.0 if f >= 0.0 else -1.0)
        self.out.write(f"{self.pos.events}\t{f:.17g}\t{pred}\n")
        self.out.flush()
        self.pos.events += 1

    # ---- reporting and checkpoints ----------------------------------------------------------

    def stats_line(self) -> str:
        p = self.pos
        elapsed = time.perf_counter() - self._t0
        rate = (p.events - self._start_events) / elapsed if elapsed > 0 else 0.0
        if self.classification:
            metric = (f"mistake rate {100.0 * p.mistakes / p.labelled:.2f} %" if p.labelled
                      else "mistake rate n/a")
        else:
            metric = (f"mean squared loss {p.squared_loss / (p.labelled - 1):.5g} (from the second labelled event: "
                      "the first is predicted before any label)" if p.labelled > 1 else "msl n/a")
        bad = f", {p.skipped_bad} bad lines skipped" if p.skipped_bad else ""
        return (f"okl stream: {p.events} events ({p.labelled} labelled), {metric}, "
                f"{rate:.0f} events/s{bad}")

    def save(self) -> None:
        if self.checkpoint is not None:
            try:
                write_checkpoint(self.checkpoint, self.learner, self.config, self.pos)
            except OSError as exc:  # (a full disk: say what stdout holds beyond the checkpoint)
                raise self._save_failed(exc) from None
            self._checkpointed_at = self.pos.events

    def _save_failed(self, exc: OSError) -> OSError:
        """The error of a checkpoint that could not be written (same type and errno): the events
        already printed beyond the checkpoint kept, which a resume prints again."""
        kept, done = self._checkpointed_at, self.pos.events
        held = (f"{self.checkpoint} still holds event {kept}" if os.path.exists(self.checkpoint)
                else f"no checkpoint {self.checkpoint} was written")
        again = (f"; stdout already has the predictions of events {kept + 1}..{done}, which a resume prints again "
                 f"(drop the last {done - kept} output lines before appending)" if done > kept else "")
        error = type(exc)(f"the checkpoint at event {done} could not be written ({exc}); {held}{again}")
        error.errno = exc.errno
        return error

    # ---- blocks of lines ----------------------------------------------------------------------

    def _after_line(self, size: int, state: dict) -> None:
        """Position, checkpoint, statistics and stop request after one consumed line."""
        self.pos.lines += 1
        self.pos.byte_offset += size
        self._after_lines(state)

    def _after_lines(self, state: dict) -> None:
        state["offset"] = self.pos.byte_offset
        if self.checkpoint and self.pos.events - self._checkpointed_at >= self.every:
            self.save()
        now = time.perf_counter()
        if not self.quiet and now - self._last_stats >= self.stats_every:
            self.err.write(self.stats_line() + "\n")
            self.err.flush()
            self._last_stats = now
        if state["stop"]:
            raise _Stop

    def _one_line(self, raw: bytes, text: str | None, name: str, state: dict) -> None:
        """One line the per-line way (unlabelled events, bad lines, CSV headers, comments)."""
        where = f"{name}:{self.pos.lines + 1}"
        bad = None
        if text is None:
            try:
                text = raw.decode("utf-8-sig" if self.pos.byte_offset == 0 else "utf-8")
            except UnicodeDecodeError as exc:
                bad = DataFormatError(f"{where}: not UTF-8 text ({exc.reason})")
        body = None if text is None else text.strip()
        is_event = bad is not None or (body and not body.startswith("#"))
        if is_event and self.header and not self.pos.header_done:
            is_event = False
            self.pos.header_done = True
        if is_event:
            try:
                if bad is not None:
                    raise bad
                self.process_line(text, where)
            except DataFormatError as exc:
                if not self.skip_bad:
                    self.save()  # everything before the bad line
                    raise
                self.pos.skipped_bad += 1
                self.err.write(f"okl stream: warning: skipped {_one_line(exc)}\n")
        self._after_line(len(raw), state)

    def _parse_block(self, texts: list[str], kinds: list[int], name: str):
        """Features and targets of the plain labelled events of a block (kind 1), parsed together;
        lines that need the per-line path get kind 2. Returns (X, y) or None."""
        rows = [i for i, k in enumerate(kinds) if k == 1]
        if not rows:
            return None
        dim = self.pos.dim
        parsed = None
        if self.config.format == "svmlight" and dim is not None and self.config.n_hashed is not None:
            parts, labels = [], []
            for i in rows:
                try:
                    label, cols, values = parse_hashed_line(texts[i], name, self.config.n_hashed)
                except DataFormatError:
                    kinds[i] = 2  # (the per-line path names the line)
                    continue
                parts.append((cols, values))
                labels.append(label)
            rows = [i for i, k in enumerate(kinds) if k == 1]
            if parts:
                parsed = rows_csr(parts, dim), np.array(labels, dtype=np.float64)
        elif self.config.format == "svmlight" and dim is not None:
            parsed = parse_svmlight_block("".join([texts[i] for i in rows]).encode(), dim, len(rows), sparse=True)
        elif self.config.format == "csv":
            X, labels = [], []
            named = bool(self.pos.label_names)
            for i in rows:
                try:
                    x, label = parse_event(texts[i], name, "csv", dim, self.config.sep, self.config.label_column)
                except DataFormatError:
                    x, label = None, None
                named = named or isinstance(label, str)
                if named:  # (class names, and every line after the first: the per-line path maps and checks them)
                    x = None
                if x is None or label is None or (dim is not None and x.shape[0] != dim) or (
                        dim is None and X and x.shape[0] != X[0].shape[0]):
                    kinds[i] = 2
                    continue
                X.append(x)
                labels.append(label)
            if not X:
                return None
            rows = [i for i, k in enumerate(kinds) if k == 1]
            parsed = np.array(X), np.array(labels)
        if parsed is None:
            for i in rows:
                kinds[i] = 2
            return None
        X, labels = parsed
        if hasattr(X, "toarray"):  # CSR: the rows with a stored value beyond the bound, from the values
            big = np.abs(X.data) > MAX_ABS_FEATURE
            ok = np.ones(X.shape[0], dtype=bool)
            ok[np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[big]] = False
        else:
            ok = (np.abs(X) <= MAX_ABS_FEATURE).all(axis=1)
        if self.classification:
            if self.config.positive_label is not None:
                y = np.where(labels == self.config.positive_label, 1.0, -1.0)
            else:
                y = labels
                if not self.multi:  # another label goes the per-line way, which turns the stream multi-class
                    ok &= (labels == 1.0) | (labels == -1.0)
        else:
            y = labels
            ok &= np.abs(labels) <= MAX_ABS_FEATURE  # a huge target goes the per-line way, which refuses it
        if not ok.all():
            for r in np.flatnonzero(~ok):
                kinds[rows[r]] = 2
            X, y = X[ok], y[ok]
        return (X if hasattr(X, "toarray") else np.ascontiguousarray(X)), np.ascontiguousarray(y, dtype=np.float64)

    def _learn_rows(self, X: np.ndarray, y: np.ndarray) -> None:
        """Test-then-train over labelled events (the learner's compiled loop), their output
        lines and totals."""
        # the learner's per-event arithmetic, a block at a time in its compiled loops: each
        # decision is then independent of how the stream was cut into blocks (a compiled
        # block loop computes its features with matrix products whose rounding depends on the
        # block's length), so a resumed stream prints exactly the uninterrupted predictions
        learner = self.learner
        if input_width(learner) is not None and X.shape[1] != input_width(learner):
            raise ValueError("width")  # the per-line path names the line
        if self.pos.dim is None:
            self._first_width(int(X.shape[1]))
        f = learner.events.learn_rounds(learner, learner_rows(learner, X, self.config.n_hashed is not None), y)
        if self.pos.dim is None:
            self.pos.dim = int(X.shape[1])
        n = f.shape[0]
        e0 = self.pos.events
        if self.multi:
            preds = self._classes_of(f)
            self.pos.mistakes += int((preds != y).sum())  # NaN (no class yet) is a mistake
            top = f.max(axis=1) if f.shape[1] else np.full(n, -math.inf)
            text = "".join([f"{e0 + i}\t{v:.17g}\t{'?' if p != p else format(p, 'g')}\n"
                            for i, (v, p) in enumerate(zip(top.tolist(), preds.tolist()))])
        elif self.classification:
            pred = np.where(f >= 0.0, 1.0, -1.0)
            self.pos.mistakes += int((pred != y).sum())
            self.pos.labels_seen |= (2 if (y > 0).any() else 0) | (1 if (y < 0).any() else 0)
            text = "".join([f"{e0 + i}\t{v:.17g}\t{'1' if v >= 0.0 else '-1'}\n" for i, v in enumerate(f.tolist())])
        else:
            for d in ((f - y) ** 2).tolist()[1 if self.pos.labelled == 0 else 0:]:  # (as process_line)
                self.pos.squared_loss += d
            text = "".join([f"{e0 + i}\t{v:.17g}\t{v:.17g}\n" for i, v in enumerate(f.tolist())])
        self.out.write(text)
        self.pos.labelled += n
        self.pos.events += n

    def _process_block(self, block: list[bytes], name: str, state: dict) -> None:
        """Handle a block of lines: runs of plain labelled events go through the learner's
        compiled loop together (cut where a checkpoint is due, so checkpoints, output and resume
        are exactly those of one line at a time); every other line goes the per-line way."""
        try:
            texts = b"".join(block).decode("utf-8").split("\n")
            if len(texts) > len(block):
                texts.pop()
            texts = [t + "\n" for t in texts] if len(texts) == len(block) else None
            if texts is not None and not block[-1].endswith(b"\n"):
                texts[-1] = texts[-1][:-1]
        except UnicodeDecodeError:
            texts = None
        if texts is not None and self.pos.byte_offset == 0 and texts and texts[0].startswith("\ufeff"):
            texts[0] = texts[0][1:]  # a byte-order mark opening the stream (as Excel writes) is not data
        if texts is None:
            for raw in block:
                self._one_line(raw, None, name, state)
            self.out.flush()
            return
        # kinds: 0 blank/comment, 1 plain labelled event (block-parsed), 2 the per-line way
        kinds = []
        for t in texts:
            body = t.strip()
            kinds.append(1 if body and body[0] != "#" else 0)
        if self.header and not self.pos.header_done:
            kinds = [2 if k else 0 for k in kinds]
        if self.config.format == "svmlight":
            for i, t in enumerate(texts):  # unlabelled lines start with idx:val
                if kinds[i] == 1:
                    first = t.split(None, 1)[0]
                    if ":" in first:
                        kinds[i] = 2
        parsed = self._parse_block(texts, kinds, name) if 1 in kinds else None
        r = 0  # next row of the parsed block
        i, n = 0, len(block)
        while i < n:
            if kinds[i] == 2:
                self._one_line(block[i], texts[i], name, state)
                i += 1
                continue
            if kinds[i] == 0:
                self._after_line(len(block[i]), state)
                i += 1
                continue
            # a run of plain events (and blank lines), cut where a checkpoint is due
            room = SEGMENT_EVENTS
            if hasattr(parsed[0], "toarray") and not takes_csr(self.learner, self.config.n_hashed is not None):
                # (a run is densified for the learner)
                room = min(room, max(1, DENSE_BLOCK_VALUES // max(1, parsed[0].shape[1])))
            if self.checkpoint:
                room = min(room, max(1, self.every - (self.pos.events - self._checkpointed_at)))
            j, events, size = i, 0, 0
            while j < n and kinds[j] != 2 and events < room:
                if kinds[j] == 1:
                    events += 1
                size += len(block[j])
                j += 1
            try:
                self._learn_rows(parsed[0][r:r + events], parsed[1][r:r + events])
            except ValueError:  # the learner refused a row: find it the per-line way
                for k in range(i, j):
                    if kinds[k] == 1:
                        kinds[k] = 2
                parsed = (_drop_rows(parsed[0], r, r + events), np.delete(parsed[1], np.s_[r:r + events]))
                continue
            r += events
            self.pos.lines += j - i
            self.pos.byte_offset += size
            i = j
            self.out.flush()
            self._after_lines(state)
        self.out.flush()

    # ---- main loop --------------------------------------------------------------------------

    def run(self, fh: BinaryIO, name: str, follow: float | None = None) -> int:
        state = {"waiting": False, "stop": False, "offset": self.pos.byte_offset, "name": name}

        def on_signal(signum, frame):
            state["stop"] = signum
            if state["waiting"]:
                raise _Stop

        handlers = {}
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                handlers[sig] = signal.signal(sig, on_signal)
        except ValueError:  # not the main thread: no signal handling
            handlers = {}
        self._last_stats = time.perf_counter()
        status = 0
        try:
            for block in _read_blocks(fh, follow, state):
                self._process_block(block, name, state)
        except _Stop:
            status = 128 + int(state["stop"] or signal.SIGTERM)
            if not self.quiet:
                self.err.write("okl stream: interrupted; state checkpointed\n")
        finally:
            for sig, h in handlers.items():
                signal.signal(sig, h)
        self.save()
        if state.get("torn"):
            resume = (f"the checkpoint ends at byte {self.pos.byte_offset}: end the line and feed the stream "
                      "again to resume there" if self.checkpoint else "end the line to have it learned")
            self.err.write(f"okl stream: warning: {name}:{self.pos.lines + 1}: the last line ({state['torn']} "
                           f"bytes) has no newline, so it was not learned (a torn write?); {resume}\n")
            self.err.flush()
        if self.config.positive_label is not None and self.pos.labelled and not self.pos.labels_seen & 2:
            self.err.write(f"okl stream: warning: --positive-label {self.config.positive_label:g} matched none of the "
                           f"{self.pos.labelled} labelled events: every one was learned as -1 (is it the label "
                           "the input uses?)\n")
            self.err.flush()
        if not self.quiet:
            self.err.write(self.stats_line() + (f"; checkpoint {self.checkpoint}" if self.checkpoint
                                                else "") + "\n")
            self.err.flush()
        return status


__all__ = ["StreamRunner"]
