"""Atomic file writes: the one place that writes a file under a temporary name and renames it.

A model file (``Learner.save``) and an ``okl stream`` checkpoint are written to
``<target>.tmp<PID>`` beside the target, flushed, fsync'ed and renamed over it, so the target
always holds a complete file. When writing fails (a full disk, a read-only or missing directory)
the temporary file is removed, not left behind to keep the disk full, and the error names the
target the user asked for, not the hidden temporary name.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Callable


def write_atomically(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write(fh)`` on a temporary file beside ``path``, then rename it over ``path``.

    Raises ``OSError`` (same type and errno as the cause) whose message names ``path`` and says
    that the previous file there, if any, is unchanged."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        reason = exc.strerror or str(exc)
        error = type(exc)(f"{path}: cannot write ({reason}); nothing was written there (a previous file of that "
                          "name is unchanged)")
        error.errno = exc.errno
        raise error from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


__all__ = ["write_atomically"]
