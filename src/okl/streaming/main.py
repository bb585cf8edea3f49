"""The entry point of ``okl stream`` (:func:`main_stream`): the options checked, the learner built
(:func:`build_learner`), the checkpoint locked and, when it exists, checked against the command
line and resumed from, the input opened and handed to :class:`okl.streaming.runner.StreamRunner`
(which documents what the stream does)."""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, BinaryIO, TextIO
from okl.kernels import RBF
from okl.runtime.base import MAX_DIM, Learner, accepts, make
from okl.streaming.checkpoint import (CheckpointError, StreamConfig, StreamPosition, check_checkpoint_path,
                                      lock_checkpoint, read_checkpoint)
from okl.streaming.lines import _skip_bytes, check_label_column
from okl.streaming.runner import StreamRunner


def _parse_value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_categorical(text: str | None, dim: int | None = None) -> list[int] | None:
    """``--categorical COLS``: comma-separated feature column indices (0-based, the label column
    not counted) as a list; ValueError naming the option, the bad value and the allowed range."""
    if text is None:
        return None
    allowed = f"in 0..{dim - 1} (--dim {dim})" if dim is not None else "(integers >= 0, below the number of features)"
    cols = []
    for item in text.split(","):
        item = item.strip()
        try:
            col = int(item)
        except ValueError:
            col = -1
        if col < 0 or (dim is not None and col >= dim):
            raise ValueError(f"--categorical {text}: {item!r} is not a feature column index; expected comma-separated "
                             f"column indices {allowed}, the label column not counted")
        if col in cols:
            raise ValueError(f"--categorical {text}: column {col} is named twice")
        cols.append(col)
    return cols


def build_learner(name: str, budget: int | None = None, sigma: float | None = None,
                  loss: str | None = None, random_state: int | None = 0,
                  params: dict[str, Any] | None = None, categorical: list[int] | None = None) -> Learner:
    """The learner of ``okl stream``: only hyperparameters that ``name`` accepts are passed."""
    kw: dict[str, Any] = {}
    for key, value in (("budget", budget), ("kernel", None if sigma is None else RBF(sigma=sigma)),
                       ("loss", loss), ("random_state", random_state), ("categorical", categorical)):
        if value is None:
            continue
        if accepts(name, key):
            kw[key] = value
        elif key in ("budget", "loss"):
            raise ValueError(f"learner {name!r} has no hyperparameter {key!r}")
    for key, value in (params or {}).items():
        if not accepts(name, key):
            raise ValueError(f"learner {name!r} has no hyperparameter {key!r}")
        kw[key] = value
    return make(name, **kw)


def _encoded_params(learner: Learner) -> dict[str, Any]:
    from okl.runtime.base import encode_param

    return json.loads(json.dumps({k: encode_param(v) for k, v in learner.get_params().items()}))


def _check_resume(path: str, ck_learner: Learner, ck_config: StreamConfig, fresh: Learner,
                  config: StreamConfig) -> None:
    if ck_config.learner != config.learner:
        raise CheckpointError(f"{path} was made by learner {ck_config.learner!r}, the command line "
                              f"asks for {config.learner!r}; use the same settings or another checkpoint")
    mine, theirs = _encoded_params(fresh), _encoded_params(ck_learner)
    diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if diff:
        parts = ", ".join(f"{k}: checkpoint {theirs.get(k)!r}, now {mine.get(k)!r}" for k in diff)
        raise CheckpointError(f"{path} was made with other hyperparameters ({parts})")
    for key in ("format", "sep", "label_column", "positive_label", "n_hashed"):
        if getattr(ck_config, key) != getattr(config, key):
            raise CheckpointError(f"{path} was made with {key} = {getattr(ck_config, key)!r}, "
                                  f"now {getattr(config, key)!r}")


def main_stream(args, stdout: TextIO | None = None, stderr: TextIO | None = None,
                stdin: BinaryIO | None = None) -> int:
    """Entry point of ``okl stream`` (``args`` from :func:`add_stream_parser`)."""
    if args.every < 1:
        raise ValueError(f"--every must be >= 1, got {args.every}")
    n_hashed = getattr(args, "n_hashed", None)
    if n_hashed is not None:
        if args.format != "svmlight":
            raise ValueError("--n-hashed hashes the feature names of svmlight-like lines (name:value); it does not "
                             "apply to --format csv")
        if not 1 <= n_hashed <= MAX_DIM:
            raise ValueError(f"--n-hashed must be an integer in [1, {MAX_DIM}], got {n_hashed}")
        if args.dim is not None and args.dim != n_hashed:
            raise ValueError(f"--dim {args.dim} and --n-hashed {n_hashed}: hashed lines have --n-hashed columns; "
                             "give one of them")
        if getattr(args, "categorical", None) is not None:
            raise ValueError("--categorical names column indices; with --n-hashed the columns are hashed names")
        args.dim = n_hashed
    if args.format == "svmlight" and args.dim is None:
        raise ValueError("svmlight input needs --dim (the number of features), or --n-hashed K for names")
    if args.dim is not None and args.dim < 1:
        raise ValueError(f"--dim must be >= 1, got {args.dim}")
    if args.format == "csv" and args.dim is not None:
        check_label_column(args.label_column, args.dim + 1, f"--dim {args.dim} and the label")
    params = {}
    for item in args.param or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param expects NAME=VALUE, got {item!r}")
        params[key.replace("-", "_")] = _parse_value(value)
    if "categorical" in params and getattr(args, "categorical", None) is not None:
        raise ValueError("--categorical and --param categorical=... name the same setting; give one")
    learner = build_learner(args.learner, args.budget, args.sigma, args.loss, args.random_state, params,
                            parse_categorical(getattr(args, "categorical", None), args.dim))
    # options that the input or the task would make ignored are refused, not dropped
    if args.header and args.format != "csv":
        raise ValueError("--header applies to CSV input; an svmlight stream has no header line (the first "
                         "line would be skipped as one)")
    if args.positive_label is not None and not math.isfinite(args.positive_label):
        raise ValueError(f"--positive-label {args.positive_label:g}: labels are finite numbers, so no event would "
                         "match it and every event would be learned as -1")
    if args.positive_label is not None and learner.task != "classification":
        raise ValueError(f"--positive-label maps classification labels to -1/+1, but loss "
                         f"{learner.get_params().get('loss')!r} is a regression loss that learns the target "
                         "as given; drop one of them")
    config = StreamConfig(learner=args.learner, params=_encoded_params(learner), format=args.format,
                          sep=args.sep, label_column=args.label_column,
                          positive_label=args.positive_label, n_hashed=n_hashed)
    position = StreamPosition(dim=args.dim)
    err = stderr if stderr is not None else sys.stderr
    lock = None
    if args.checkpoint:
        check_checkpoint_path(args.checkpoint)
        lock = lock_checkpoint(args.checkpoint)
    try:
        return _resume_and_run(args, learner, config, position, err, stdout, stderr, stdin)
    finally:
        if lock is not None:
            lock.close()


def _resume_and_run(args, learner, config, position, err, stdout, stderr, stdin) -> int:
    """The rest of :func:`main_stream`, run while the checkpoint's lock is held."""
    if args.checkpoint and os.path.exists(args.checkpoint):
        ck_learner, ck_config, position = read_checkpoint(args.checkpoint)
        _check_resume(args.checkpoint, ck_learner, ck_config, learner, config)
        if args.dim is not None and position.dim is not None and position.dim != args.dim:
            raise CheckpointError(f"{args.checkpoint} was made with dimension {position.dim}, "
                                  f"--dim is {args.dim}")
        learner = ck_learner
        skips = args.input == "-" and position.byte_offset > 0
        if skips or not args.quiet:  # (input skipped unread is always said, --quiet or not)
            skip = (f"; on stdin its first {position.byte_offset:,} bytes ({position.lines:,} lines) are skipped "
                    "unread, so feed the whole stream again from its first line" if skips else "")
            err.write(f"okl stream: resuming from {args.checkpoint} at event {position.events} "
                      f"(line {position.lines + 1}, byte {position.byte_offset}){skip}\n")
    runner = StreamRunner(learner, config, position, checkpoint=args.checkpoint, every=args.every,
                          skip_bad=args.skip_bad, stats_every=args.stats_every, out=stdout,
                          err=stderr, quiet=args.quiet, header=args.header)
    follow = None if args.follow is None else (math.inf if args.follow <= 0 else args.follow)
    if args.input == "-":
        fh = stdin if stdin is not None else sys.stdin.buffer
        name, close = "<stdin>", False
        follow = None
    else:
        if not os.path.exists(args.input):
            raise FileNotFoundError(f"{args.input}: no such file")
        fh = open(args.input, "rb")
        name, close = args.input, True
    try:
        _skip_bytes(fh, position.byte_offset, name)
        return runner.run(fh, name, follow)
    finally:
        if close:
            fh.close()


__all__ = ["main_stream", "build_learner", "parse_categorical"]
