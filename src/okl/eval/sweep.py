"""Sweeps: grids of hyperparameters x datasets x learners x seeds, run as independent cells.

A cell (:class:`okl.eval.store.CellKey`) is one test-then-train run: dataset, stream transform
(``permutation`` by default; adversarial presets such as ``german-1`` expand to their stream),
learner, hyperparameters and seed. Its result is a pure function of the key:
:func:`run_cell` builds the stream from the dataset and the seed, builds the learner with
``random_state=seed`` and ``horizon=T``, runs it, and returns a
:class:`~okl.eval.store.CellResult`. :func:`run_sweep` skips the cells already in the store, runs
the rest on a backend (:mod:`okl.eval.backends`: serial, local processes or Dask) and commits each
result as it arrives, so an interrupted sweep resumes where it stopped.

Hyperparameters in a key are explicit: every cell records the budget B (default 100 when
T <= 10,000 else 200), the kernel width ``sigma`` (default in :func:`build_cells`, ``okl sweep``:
none, the learner chooses it from its first rows as in ``okl run``; ``"dataset"``: the dataset's
recorded width ``okl.data.dataset_info(name).sigma``, the paper tables' default; ``"auto"`` = the registry's rule,
:func:`okl.data.width.select_sigma`, applied to the first 1000 rounds of the cell's own stream,
SkeGD 6.1 — the value used is in the cell's diagnostics) and the loss (hinge for classification,
squared for regression), for learners that take them; grid keys a learner does not take are not
crossed with that learner's cells.

Determinism: every cell runs with BLAS limited to ``blas_threads`` (default 1) threads in every
backend, so a matrix product sums in the same order whatever the backend and the numbers agree
bit for bit (tested: a two-worker Dask ``LocalCluster`` equals the serial backend).

Grid values (``--grid NAME=VALUES``, :func:`parse_values`): :mod:`okl.eval.grid`.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from okl.data.adversarial import StreamTransform, parse_stream, resolve_dataset
from okl.eval.grid import parse_grid, parse_values  # noqa: F401  (re-exported, see __all__)
from okl.eval.progress import Progress
from okl.eval.progressive import learner_params
from okl.eval.store import CellKey, CellResult, ResultStore, canonical_params
from okl.runtime.base import accepts, make, mistakes_of

#: datasets that are not in the registry but can be swept (streamed from their own files)
STREAMED_DATASETS = ("kuairec",)
#: points of the stored cumulative-metric curve
CURVE_POINTS = 200
#: rounds the ``sigma=auto`` rule looks at
AUTO_SIGMA_ROWS = 1000


# ---- datasets -------------------------------------------------------------------------------

#: prefix of a user's data file in a cell key: ``file:<absolute path>#<sha256 of the file, 16 hex>``
FILE_PREFIX = "file:"


def file_dataset(path: str | os.PathLike) -> str:
    """The cell-key name of a user's data file (svmlight, or CSV/TSV read with the loader's defaults:
    label last, header detected; :func:`okl.data.load_file`). The file's content hash is part of
    the name, so an edited file gets new cells instead of the stored results of the old one."""
    import hashlib

    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--datasets: no data file {path}")
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{FILE_PREFIX}{path}#{digest.hexdigest()[:16]}"


def is_file_dataset(name: str) -> bool:
    return name.startswith(FILE_PREFIX)


@functools.lru_cache(maxsize=4)
def _file_data(name: str):
    """The rows of a :func:`file_dataset` (loaded once per process), after checking the file still
    has the content the cell was planned with."""
    from okl.data.registry import load_file

    path, _, digest = name[len(FILE_PREFIX):].rpartition("#")
    if file_dataset(path) != name:
        raise ValueError(f"{path} changed after this sweep was planned (content hash {digest} expected); "
                         "run the sweep again to plan cells for the new content")
    return load_file(path)


def file_description(name: str) -> str:
    """What the loader inferred from a :func:`file_dataset` (format, header, label column, label
    mapping, task): ``okl sweep`` prints it, as ``okl run`` does, so labels 1/2/3 read as a
    regression target are seen before any cell runs."""
    return _file_data(name).description


def dataset_task(name: str) -> str:
    if name in STREAMED_DATASETS:
        return "classification"
    if is_file_dataset(name):
        return _file_data(name).task
    from okl.data.registry import dataset_info

    return dataset_info(name).task


def dataset_rows(name: str, data_dir=None) -> int:
    """Number of rows of a dataset (the registry's count; KuaiRec's from its index)."""
    if name == "kuairec":
        from okl.data.kuairec import KuaiRecStream

        return KuaiRecStream.open(data_dir).n_rows
    if is_file_dataset(name):
        return len(_file_data(name).y)
    from okl.data.registry import dataset_info

    return dataset_info(name).rows


def default_budget(n_rounds: int) -> int:
    """The tables' budget: 100 for T <= 10,000, else 200."""
    return 100 if n_rounds <= 10_000 else 200


def default_sigma(name: str):
    """A registered set's recorded width; a user's file has none: the learner chooses its width
    from its first rows (the library default, :func:`okl.kernels.scale_sigma`)."""
    if name in STREAMED_DATASETS:
        return "auto"
    if is_file_dataset(name):
        return None
    from okl.data.registry import dataset_info

    return float(dataset_info(name).sigma)


def applicable(learner: str, task: str) -> bool:
    """Whether ``learner`` can run on a task (regression needs a learner that takes the squared loss;
    "multiclass" runs every classifier, one head per class)."""
    if task in ("classification", "multiclass"):
        return True
    if not accepts(learner, "loss"):
        return False
    try:
        make(learner, loss="squared")
    except ValueError:
        return False
    return True


def resolve_params(learner: str, dataset: str, n_rounds: int, params: dict[str, Any],
                   width: str = "dataset") -> dict[str, Any]:
    """Fill the defaults a key must state explicitly: budget, sigma, loss (where the learner takes them).

    ``sigma`` is kept only for learners that take a kernel; keys the learner does not take raise.
    An explicit ``scale=None`` is kept (the paper tables' raw or [0, 1] features, no input scale).
    A sigma left out is ``width``'s: ``"dataset"`` (the paper tables) the dataset's recorded width
    (:func:`default_sigma`), ``"stream"`` (``okl sweep``, as ``okl run``) none: the learner chooses
    its width from its first rows. ``sigma="dataset"`` asks for the recorded width explicitly.

    >>> resolve_params("linear", "german", 1000, {"scale": None, "sigma": 8.0})
    {'scale': None, 'loss': 'hinge'}
    """
    out = dict(params)
    if accepts(learner, "budget") and out.get("budget") is None:
        out["budget"] = default_budget(n_rounds)
    if accepts(learner, "kernel"):
        if out.get("sigma") == "dataset" or (out.get("sigma") is None and width == "dataset"):
            out["sigma"] = default_sigma(dataset)
    else:
        out.pop("sigma", None)
    if accepts(learner, "loss") and out.get("loss") is None:
        out["loss"] = "hinge" if dataset_task(dataset) == "classification" else "squared"
    for key in out:
        if key != "sigma" and not accepts(learner, key):
            raise ValueError(f"learner {learner!r} has no hyperparameter {key!r}")
    # an explicit scale=None (Learner.paper_params: the papers' features, no input scale) is a
    # setting, not a default left out: without it the learner would fall back to scale="auto"
    return {k: v for k, v in out.items() if v is not None or k == "scale"}


def _build_learner(learner: str, n_rounds: int, seed: int, params: dict[str, Any], sigma=None):
    from okl.kernels import RBF

    params = dict(params)
    sig = params.pop("sigma", None)
    if sig == "auto":
        sig = sigma if sigma is not None else 1.0
    kernel = RBF(sigma=float(sig)) if sig is not None else None
    budget = params.pop("budget", None)
    loss = params.pop("loss", None)
    return make(learner, **learner_params(learner, n_rounds, seed, budget, kernel, loss, params))


def build_cells(datasets: Sequence[str], learners: Sequence[str], grid: dict[str, list] | None = None,
                seeds: Iterable[int] = range(20), stream: str | None = None, data_dir=None,
                okl_version: str | None = None, notes: list[str] | None = None,
                width: str = "stream") -> list[CellKey]:
    """Every cell of a sweep, with defaults resolved (see :func:`resolve_params`). A width left out
    is the learner's own from its first rows (``width="stream"``, the rule of ``okl run``, so both
    commands choose the same sigma for the same learner on the same stream); ``width="dataset"``
    or ``sigma="dataset"`` in the grid: the dataset's recorded width.

    Grid keys a learner does not take are not crossed with its cells; a key no selected learner
    takes is an error. Learners that do not fit a dataset's task are skipped (noted in ``notes``).

    >>> cells = build_cells(["german"], ["nogd", "rbp"], {"eta": [0.1, 0.2]}, seeds=[0, 1], okl_version="v")
    >>> len(cells)  # nogd: 2 etas x 2 seeds; rbp takes no eta: 2 seeds
    6
    >>> cells[0].params
    '{"budget":100,"eta":0.1,"loss":"hinge"}'
    """
    grid = dict(grid or {})
    seeds = [int(s) for s in seeds]
    notes = notes if notes is not None else []
    for key in grid:
        if not any((key == "sigma" and accepts(m, "kernel")) or accepts(m, key) for m in learners):
            raise ValueError(f"--grid {key}: no selected learner ({', '.join(learners)}) takes it")
    cells: list[CellKey] = []
    checked: set[tuple] = set()
    for name in datasets:
        if is_file_dataset(name):
            base, transform = name, parse_stream(stream)
        else:
            base, transform = resolve_dataset(name, stream)
        if base in STREAMED_DATASETS and transform.kind == "permutation":
            transform = parse_stream("identity" + (f":rows={transform.rows}" if transform.rows else ""))
            notes.append(f"{name} is a time-ordered stream: stream {transform.spec!r} (no permutation)")
        task = dataset_task(base)
        n_rounds = transform.length(dataset_rows(base, data_dir))
        for learner in learners:
            if not applicable(learner, task):
                notes.append(f"{learner} skipped on {name}: it does not fit a {task} task")
                continue
            keys = [k for k in grid if (k == "sigma" and accepts(learner, "kernel")) or accepts(learner, k)]
            for combo in itertools.product(*(grid[k] for k in keys)):
                params = resolve_params(learner, base, n_rounds, dict(zip(keys, combo)), width)
                sig = (learner, canonical_params(params), n_rounds)
                if sig not in checked:  # invalid hyperparameters fail here, before any work
                    checked.add(sig)
                    try:
                        _build_learner(learner, n_rounds, 0, params)
                    except ValueError as exc:
                        raise ValueError(f"{learner} with {canonical_params(params)}: {exc}") from None
                for seed in seeds:
                    cells.append(CellKey.make(base, transform.spec, learner, params, seed, okl_version))
    return cells


# ---- one cell -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def _stream_arrays(dataset: str, stream: str, seed: int, data_dir: str | None):
    if is_file_dataset(dataset):
        data = _file_data(dataset)
        X, y = data.X, data.y
    else:
        from okl.data.registry import load_dataset

        X, y = load_dataset(dataset, data_dir)
    Xs, ys = parse_stream(stream)(X, y, seed)
    # writable arrays: Numba compiles one specialisation per array flags, keep the learners' usual one
    return np.ascontiguousarray(Xs, dtype=float), np.ascontiguousarray(ys, dtype=float)


def stream_blocks(dataset: str, stream: str | StreamTransform, seed: int, data_dir=None):
    """(n_rounds, iterator of (X, y) blocks) of the stream a cell sees, in order."""
    transform = parse_stream(stream)
    if dataset == "kuairec":
        from okl.data.kuairec import KuaiRecStream

        if transform.kind != "identity":
            raise ValueError(f"kuairec is a time-ordered stream: use stream 'identity' (got {transform.spec!r})")
        source = KuaiRecStream.open(data_dir)
        n = transform.length(source.n_rows)
        return n, source.blocks(max_rows=n)
    X, y = _stream_arrays(dataset, transform.spec, int(seed), None if data_dir is None else str(data_dir))
    return len(y), iter([(X, y)])


def curve_rounds(n_rounds: int, points: int = CURVE_POINTS) -> np.ndarray:
    """The 1-based rounds at which curves are stored: ~``points`` evenly spaced, T included."""
    if n_rounds <= 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.linspace(1, n_rounds, min(points, n_rounds))).astype(np.int64))


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


#: (learner, non-numeric hyperparameters) already run once in this process (``run_cell``'s warm-up)
_WARMED: set[tuple[str, str]] = set()


def _warm_up_rows(params: dict) -> int:
    budget = params.get("budget")
    return 3 * int(budget) + 100 if isinstance(budget, int) else 400


def run_cell(key: CellKey, data_dir=None, warm_up: bool = True) -> CellResult:
    """Run one cell (a pure function of ``key`` and the data files) and return its metrics.

    Seconds are the learner's own ``run`` time (stream building excluded), summed over blocks.
    With ``warm_up``, the first cell of each learner (and choice of its non-numeric hyperparameters,
    e.g. the loss) in a process is preceded
    by an untimed run of a separate learner on the first 3B + 100 rounds (horizon = that length,
    so update rounds happen), so that loading or compiling Numba code is not timed as the
    learner's work. The warm-up does not touch the measured learner: results are unchanged.
    """
    params = key.param_dict
    n_rounds, blocks = stream_blocks(key.dataset, key.stream, key.seed, data_dir)
    diagnostics: dict[str, Any] = {}
    learner = None
    decisions, labels = [], []
    seconds = 0.0
    for X, y in blocks:
        if learner is None:
            sigma = None
            if params.get("sigma") == "auto":
                from okl.data.width import select_sigma

                sigma = float(select_sigma(X[:AUTO_SIGMA_ROWS], y[:AUTO_SIGMA_ROWS]))
                diagnostics["sigma"] = sigma
            # code paths depend on the learner and its non-numeric options (loss, variants), not on numbers
            shape = (key.learner, canonical_params({k: v for k, v in params.items()
                                                    if not isinstance(v, (int, float)) or isinstance(v, bool)}))
            if warm_up and shape not in _WARMED:
                m = min(len(y), _warm_up_rows(params))
                _build_learner(key.learner, m, key.seed, params, sigma).run(X[:m], y[:m])
                _WARMED.add(shape)
            learner = _build_learner(key.learner, n_rounds, key.seed, params, sigma)
        trace = learner.run(X, y)
        seconds += trace.seconds
        decisions.append(trace.decisions)
        labels.append(np.asarray(y, float))
    if learner is None:
        raise ValueError(f"{key.describe()}: empty stream")
    decisions = np.concatenate(decisions)
    y = np.concatenate(labels)
    task = learner.task
    diagnostics.update(learner.diagnostics())
    points = curve_rounds(len(y))
    if task == "classification":
        mistakes = mistakes_of(decisions, y)
        mistake_rate = 100.0 * float(mistakes.mean())
        first = learner._first_counted_round()
        authors = None if first is None else 100.0 * float(mistakes[first:].sum()) / len(y)
        values = 100.0 * np.cumsum(mistakes)[points - 1] / points
        mse = None
        metric = mistake_rate
    else:
        sq = (decisions - y) ** 2
        mse = float(sq.mean())
        mistake_rate = authors = None
        values = np.cumsum(sq)[points - 1] / points
        metric = mse
    return CellResult(task, metric, seconds, len(y), mistake_rate, authors, mse, _json_ready(diagnostics),
                      points, values, _worker_name())


def _json_ready(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, np.ndarray):
            if v.size > 64:
                continue
            v = v.tolist()
        if isinstance(v, float) and not math.isfinite(v):
            v = repr(v)
        try:
            json.dumps(v)
        except TypeError:
            v = repr(v)
        out[str(k)] = v
    return out


_BLAS_LIMITED: int | None = None


def limit_blas_threads(n: int | None) -> None:
    """Hold this process's BLAS to ``n`` threads from now on (once per process; None = leave)."""
    global _BLAS_LIMITED
    if n is None or _BLAS_LIMITED == n:
        return
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=int(n), user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing
        pass
    _BLAS_LIMITED = n


def run_cell_safely(key: CellKey, data_dir=None, blas_threads: int | None = 1):
    """What workers execute: ``("ok", CellResult)`` or ``("error", traceback text)``; never raises."""
    try:
        limit_blas_threads(blas_threads)
        return "ok", run_cell(key, data_dir)
    except Exception:  # reported by the driver with the cell's key
        return "error", traceback.format_exc(limit=8)


def failure_line(payload: str, limit: int = 300) -> str:
    """One line for a failed cell: the last line of its traceback (the exception), cut to ``limit``."""
    lines = [line.strip() for line in str(payload).strip().splitlines() if line.strip()]
    text = lines[-1] if lines else "unknown error"
    return text if len(text) <= limit else text[:limit] + "..."


# ---- the driver -----------------------------------------------------------------------------


class SerialBackend:
    """Run the cells one after another in this process (the default of :func:`run_sweep`; the
    other backends are in :mod:`okl.eval.backends`)."""

    name = "serial"

    def run(self, cells: Sequence[CellKey], data_dir=None, blas_threads: int | None = 1) -> Iterator:
        try:
            from threadpoolctl import threadpool_limits
            limits = threadpool_limits(limits=blas_threads, user_api="blas") if blas_threads else None
        except Exception:  # pragma: no cover
            limits = None
        try:
            for cell in cells:
                yield cell, run_cell_safely(cell, data_dir, None)
        finally:
            if limits is not None:
                limits.restore_original_limits()

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def describe(self) -> str:
        return "serial (this process)"


@dataclass
class SweepReport:
    total: int
    already_done: int
    ran: int = 0
    failures: list[tuple[CellKey, str]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        rate = self.ran / self.seconds if self.seconds > 0 else float("nan")
        text = (f"{self.total} cells: {self.already_done} already in the store, {self.ran} run now "
                f"in {self.seconds:.1f} s ({rate:.2f} cells/s)")
        if self.failures:
            text += f", {len(self.failures)} FAILED"
        return text


def run_sweep(cells: Sequence[CellKey], store: ResultStore, backend=None, data_dir=None,
              progress: bool = True, label: str = "sweep", blas_threads: int | None = 1,
              stream=None, on_result: Callable[[CellKey, CellResult], None] | None = None) -> SweepReport:
    """Run the cells not yet in ``store`` on ``backend`` (default serial), committing each as it ends.

    ``backend`` may also be a zero-argument factory (e.g. ``lambda: make_backend("dask", 4)``): it
    is called only when some cell is left to run, and the backend is closed afterwards.

    Cells are ordered by (dataset, stream, seed, learner, params) so a worker reuses its cached
    stream. A failing cell is reported (key and traceback) and left out of the store, so a rerun
    retries it; the other cells go on.
    """
    unique = list(dict.fromkeys(cells))
    for cell_id, cell, problem in store.drop_damaged():
        print(f"{label}: note: stored cell {cell_id} ({cell}) was damaged ({problem}); removed, it runs again",
              file=stream or sys.stderr)
    done = store.done_keys()
    todo = sorted((c for c in unique if c not in done),
                  key=lambda c: (c.dataset, c.stream, c.seed, c.learner, c.params))
    report = SweepReport(len(unique), len(unique) - len(todo))
    if progress and report.already_done:
        print(f"{label}: {report.already_done} of {report.total} cells already in {store.path}; "
              f"running {len(todo)}", file=stream or sys.stderr)
    t0 = time.perf_counter()
    if not todo:
        return report
    owned = backend is not None and not hasattr(backend, "run")  # a factory: start it only when needed
    backend = SerialBackend() if backend is None else (backend() if owned else backend)
    try:
        _drive(todo, store, backend, data_dir, progress, label, blas_threads, stream, on_result, report)
    finally:
        if owned:
            backend.close()
    report.seconds = time.perf_counter() - t0
    return report


def _drive(todo, store, backend, data_dir, progress, label, blas_threads, stream, on_result, report):
    with Progress(len(todo), label, enabled=progress, stream=stream, unit="cells") as bar:
        for key, (status, payload) in backend.run(todo, data_dir, blas_threads):
            if status == "ok":
                store.add(key, payload)
                report.ran += 1
                if on_result is not None:
                    on_result(key, payload)
            else:
                report.failures.append((key, payload))
                print(f"\n{label}: cell failed: {key.describe()}: {failure_line(payload)}", file=stream or sys.stderr)
            bar.advance()


__all__ = ["CURVE_POINTS", "SerialBackend", "SweepReport", "applicable", "build_cells", "curve_rounds", "dataset_rows",
           "default_budget", "parse_grid", "parse_values", "resolve_params", "run_cell", "run_cell_safely",
           "run_sweep", "stream_blocks"]
