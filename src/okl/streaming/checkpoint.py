"""Checkpoints of ``okl stream``: the position and totals a checkpoint records besides the model,
writing them atomically and reading them back as untrusted input (see :mod:`okl.streaming.runner`)."""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from typing import Any

from okl._files import write_atomically
from okl.runtime._multiclass_files import is_multiclass_file
from okl.runtime.base import MAX_DIM, Learner, ModelFileError
from okl.runtime.categorical import input_width
from okl.runtime.modelfile import check_header, load_from, open_model_zip, write_model, zip_entry
from okl.runtime.multiclass import MultiClass


CHECKPOINT_FORMAT = "okl-stream-checkpoint"
CHECKPOINT_FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A stream checkpoint that cannot be used: damaged, foreign, or made with other settings."""



# --------------------------------------------------------------------------------------------
# Position and totals (what a checkpoint records besides the model)


@dataclass
class StreamPosition:
    """How far the stream has been consumed, and the running totals up to there."""

    events: int = 0  #: data lines predicted (labelled or not)
    labelled: int = 0  #: events that were learned
    lines: int = 0  #: physical lines consumed (blank, comment and skipped bad lines included)
    byte_offset: int = 0  #: bytes consumed; the next event starts here
    mistakes: int = 0  #: classification mistakes on labelled events
    squared_loss: float = 0.0  #: sum of (f - y)^2 over the labelled events after the first
    skipped_bad: int = 0  #: bad lines skipped under --skip-bad
    dim: int | None = None  #: feature dimension (from --dim or the first CSV line)
    header_done: bool = False  #: CSV --header line already consumed
    #: binary labels learned so far (1: -1, 2: +1); the heads kept when a stream turns multi-class
    labels_seen: int = 0
    #: the class names of a CSV stream whose labels are not numbers, in order of appearance
    #: (the first is the class -1, the second +1, then 2, 3, ...)
    label_names: list = field(default_factory=list)


@dataclass
class StreamConfig:
    """Everything about the input that must not change between a checkpoint and its resume."""

    learner: str
    params: dict[str, Any] = field(default_factory=dict)
    format: str = "svmlight"
    sep: str = ","
    label_column: int = -1
    positive_label: float | None = None
    #: ``--n-hashed``: svmlight feature names hashed (signed) into this many columns (None: numeric indices)
    n_hashed: int | None = None




# --------------------------------------------------------------------------------------------
# Checkpoints


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_checkpoint(path: str, learner: Learner, config: StreamConfig, position: StreamPosition) -> None:
    """Write learner state + stream position atomically (temporary file, fsync, rename)."""
    from okl._version import __version__

    # the model goes into the zip from memory: no second temporary file on the checkpoint's disk
    buffer = io.BytesIO()
    write_model(learner, buffer)  # (a Learner's or a MultiClass's model file)
    model_bytes = buffer.getvalue()
    header = {"format": CHECKPOINT_FORMAT, "format_version": CHECKPOINT_FORMAT_VERSION,
              "okl_version": __version__, "config": asdict(config), "position": asdict(position),
              "written_at": time.time()}

    def write(fh):
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("stream.json", json.dumps(header, indent=1))
            zf.writestr("model.npz", model_bytes)

    write_atomically(path, write)
    _fsync_dir(path)


def check_checkpoint_path(path: str) -> None:
    """Before any event: the checkpoint's directory exists and takes a file (a temporary one,
    removed at once), so a wrong ``--checkpoint`` fails at the start, naming the path, instead of
    at the first checkpoint after the work it was to keep."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"--checkpoint {path}: is a directory; give a file name")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"--checkpoint {path}: directory {directory} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=".okl-probe-", dir=directory)
    except OSError as exc:
        raise PermissionError(f"--checkpoint {path}: cannot write in {directory} "
                              f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def lock_checkpoint(path: str):
    """An exclusive lock on ``PATH.lock`` held while this process writes checkpoint ``path``
    (returned: keep it open). A second ``okl stream`` on the same checkpoint would overwrite the
    first one's positions with its own; it is refused, naming the process holding the lock."""
    import fcntl

    lock = open(f"{path}.lock", "a+b", buffering=0)  # unbuffered: nothing left to flush on close
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.seek(0)
        holder = lock.read(200).decode("utf-8", "replace").strip() or "another process"
        lock.close()
        raise CheckpointError(f"{path} is being written by {holder}; two streams on one checkpoint would "
                              "overwrite each other's positions: stop it or use another --checkpoint") from None
    try:  # who holds it, for the message above; best effort (a full disk must not stop the stream here)
        lock.seek(0)
        lock.truncate()
        lock.write(f"okl stream pid {os.getpid()}\n".encode())
    except OSError:
        pass
    return lock


def read_checkpoint(path: str) -> tuple[Learner, StreamConfig, StreamPosition]:
    """Load a checkpoint written by :func:`write_checkpoint`; raises :class:`CheckpointError`.

    The checkpoint is untrusted input, checked before anything is unpacked: its zip directory
    (:func:`okl.runtime.modelfile.open_model_zip`: not cut short, entries named once, plain
    names, no symbolic links, stored and inside the file), a header of at most 16 MiB, then
    the model read in place from the zip (a single learner's model file or a
    :class:`okl.MultiClass` file, each checked as its own ``load`` checks it; nothing is
    written to a temporary directory), every error naming the checkpoint."""
    try:
        zf, entries = open_model_zip(path, path, "an okl stream checkpoint (stream.json and model.npz)")
    except ModelFileError as exc:
        raise CheckpointError(str(exc)) from None
    with zf:
        extra = sorted(set(entries) - {"stream.json", "model.npz"})
        if extra:
            raise CheckpointError(f"{path}: unexpected entry {extra[0]!r} (a checkpoint holds stream.json "
                                  "and model.npz)")
        for entry in ("stream.json", "model.npz"):
            if entry not in entries:
                raise CheckpointError(f"{path}: {entry} is missing: not an okl stream checkpoint")
        info = entries["stream.json"]
        if info.file_size > MAX_CHECKPOINT_HEADER:
            raise CheckpointError(f"{path}: checkpoint header of {info.file_size} bytes "
                                  f"(at most {MAX_CHECKPOINT_HEADER})")
        try:
            header = json.loads(zip_entry(zf, info, path).read().decode())
        except (ValueError, UnicodeDecodeError, RecursionError, OSError, EOFError, ModelFileError) as exc:
            raise CheckpointError(f"{path}: not a readable okl stream checkpoint ({str(exc)[:200]})") from None
        check_header(header, path, "an okl stream checkpoint", CHECKPOINT_FORMAT, "checkpoint",
                     CHECKPOINT_FORMAT_VERSION, error=CheckpointError)
        try:
            config = StreamConfig(**header["config"])
            position = StreamPosition(**header["position"])
        except (KeyError, TypeError) as exc:
            raise CheckpointError(f"{path}: checkpoint header is incomplete ({str(exc)[:200]})") from None
        k = config.n_hashed
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_DIM):
            raise CheckpointError(f"{path}: checkpoint config n_hashed must be an integer in [1, {MAX_DIM}] or "
                                  f"null, got {str(k)[:200]!r}")
        name = f"{path}: model inside the checkpoint"
        try:
            model = zip_entry(zf, entries["model.npz"], path)
            learner = (MultiClass._load_from(model, name) if is_multiclass_file(model)
                       else load_from(model, name))
        except ModelFileError as exc:
            raise CheckpointError(str(exc)) from None
    check_position(path, position, learner)
    return learner, config, position


#: largest ``stream.json`` accepted in a checkpoint
MAX_CHECKPOINT_HEADER = 16 << 20


#: most class names, and longest name, a checkpoint may record
MAX_LABEL_NAMES, MAX_LABEL_NAME = 1 << 16, 1 << 12

#: largest count or byte offset a checkpoint may record
MAX_POSITION = 1 << 62


def check_position(path: str, position: StreamPosition, learner: Learner | None = None) -> None:
    """Refuse a recorded position that no stream can produce: negative or non-integer counts,
    more labelled events than events, more events than lines, more lines than bytes, mistakes
    beyond the labelled events, a dimension or an event count that differ from the model's.
    (Whether the byte offset ends a line of *this* input is checked when the input is positioned.)
    """
    def bad(name, why):
        return CheckpointError(f"{path}: checkpoint position {name} {why}")

    for name in ("events", "labelled", "lines", "byte_offset", "mistakes", "skipped_bad"):
        value = getattr(position, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
            raise bad(name, f"must be an integer in [0, {MAX_POSITION}], got {str(value)[:200]!r}")
    sq = position.squared_loss
    if isinstance(sq, bool) or not isinstance(sq, (int, float)) or not (math.isfinite(sq) and sq >= 0):
        raise bad("squared_loss", f"must be a finite number >= 0, got {str(sq)[:200]!r}")
    ls = position.labels_seen
    if isinstance(ls, bool) or not isinstance(ls, int) or not 0 <= ls <= 3:
        raise bad("labels_seen", f"must be an integer in [0, 3], got {str(ls)[:200]!r}")
    names = position.label_names
    if not isinstance(names, list) or len(names) > MAX_LABEL_NAMES or not all(
            isinstance(n, str) and len(n) <= MAX_LABEL_NAME for n in names) or len(set(names)) != len(names):
        raise bad("label_names", f"must be a list of distinct strings (at most {MAX_LABEL_NAMES} of at most "
                  f"{MAX_LABEL_NAME} characters), got {str(names)[:200]!r}")
    if not isinstance(position.header_done, bool):
        raise bad("header_done", f"must be true or false, got {str(position.header_done)[:200]!r}")
    dim = position.dim
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= MAX_DIM):
        raise bad("dim", f"must be an integer in [1, {MAX_DIM}] or null, got {str(dim)[:200]!r}")
    for small, large in (("labelled", "events"), ("mistakes", "labelled"), ("events", "lines"),
                         ("skipped_bad", "lines"), ("lines", "byte_offset")):
        if getattr(position, small) > getattr(position, large):
            raise bad(small, f"= {getattr(position, small)} exceeds {large} = {getattr(position, large)}")
    if learner is not None:
        if learner.n_seen_ != position.labelled:
            raise bad("labelled", f"= {position.labelled} but the model has learned {learner.n_seen_} events")
        if input_width(learner) is not None and dim is not None and input_width(learner) != dim:
            raise bad("dim", f"= {dim} but the model has dimension {input_width(learner)}")
