"""Checkpoints of ``okl stream``: the position and totals a checkpoint records besides the model,
writing them atomically and reading them back as untrusted input (see :mod:`okl.stream`)."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from typing import Any

from okl._files import write_atomically
from okl.learners.base import MAX_DIM, Learner, ModelFileError
from okl.learners.multiclass import MultiClass, is_multiclass_file


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
    squared_loss: float = 0.0  #: sum of (f - y)^2 over labelled events
    skipped_bad: int = 0  #: bad lines skipped under --skip-bad
    dim: int | None = None  #: feature dimension (from --dim or the first CSV line)
    header_done: bool = False  #: CSV --header line already consumed
    #: binary labels learned so far (1: -1, 2: +1); the heads kept when a stream turns multi-class
    labels_seen: int = 0


@dataclass
class StreamConfig:
    """Everything about the input that must not change between a checkpoint and its resume."""

    learner: str
    params: dict[str, Any] = field(default_factory=dict)
    format: str = "svmlight"
    sep: str = ","
    label_column: int = -1
    positive_label: float | None = None




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
    _save_in_memory(learner, buffer)
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


def _save_in_memory(learner: Learner, buffer) -> None:
    """``learner.save`` into ``buffer`` through a private directory in the system's temporary
    directory (removed at once, whatever happens)."""
    with tempfile.TemporaryDirectory(prefix="okl-model-") as d:
        model = os.path.join(d, "model.npz")
        learner.save(model)
        with open(model, "rb") as fh:
            buffer.write(fh.read())


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
    """Load a checkpoint written by :func:`write_checkpoint`; raises :class:`CheckpointError`."""
    fd, model_tmp = tempfile.mkstemp(prefix="okl-model-", suffix=".npz")
    os.close(fd)
    try:
        return _read_checkpoint(path, model_tmp)
    finally:
        if os.path.exists(model_tmp):
            os.unlink(model_tmp)


#: largest ``stream.json`` accepted in a checkpoint
MAX_CHECKPOINT_HEADER = 16 << 20


def _read_checkpoint(path: str, model_tmp: str) -> tuple[Learner, StreamConfig, StreamPosition]:
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("stream.json")
            if info.file_size > MAX_CHECKPOINT_HEADER:
                raise CheckpointError(f"{path}: checkpoint header of {info.file_size} bytes "
                                      f"(at most {MAX_CHECKPOINT_HEADER})")
            header = json.loads(zf.read(info).decode())
            model = zf.getinfo("model.npz")
            free = shutil.disk_usage(os.path.dirname(model_tmp)).free
            if model.file_size > free:
                raise CheckpointError(f"{path}: the model inside declares {model.file_size} bytes, "
                                      f"more than the {free} free on disk")
            with zf.open(model) as src, open(model_tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except CheckpointError:
        raise
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError, UnicodeDecodeError,
            RuntimeError, NotImplementedError) as exc:
        raise CheckpointError(f"{path}: not a readable okl stream checkpoint ({str(exc)[:200]})") from None
    if not isinstance(header, dict) or header.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not an okl stream checkpoint")
    if header.get("format_version") != CHECKPOINT_FORMAT_VERSION:
        raise CheckpointError(f"{path}: checkpoint format version {header.get('format_version')}, "
                              f"this okl reads version {CHECKPOINT_FORMAT_VERSION}")
    try:
        config = StreamConfig(**header["config"])
        position = StreamPosition(**header["position"])
    except (KeyError, TypeError) as exc:
        raise CheckpointError(f"{path}: checkpoint header is incomplete ({str(exc)[:200]})") from None
    try:
        learner = MultiClass.load(model_tmp) if is_multiclass_file(model_tmp) else Learner.load(model_tmp)
    except ModelFileError as exc:
        raise CheckpointError(f"{path}: model inside the checkpoint: "
                              f"{str(exc).replace(model_tmp + ': ', '')}") from None
    check_position(path, position, learner)
    return learner, config, position


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
        if learner.dim_ is not None and dim is not None and learner.dim_ != dim:
            raise bad("dim", f"= {dim} but the model has dimension {learner.dim_}")
