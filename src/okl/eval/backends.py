"""Where sweep cells run: in this process, in local worker processes, or on a Dask cluster.

Every backend has ``run(cells, data_dir, blas_threads)``, an iterator of
``(cell, ("ok", CellResult) | ("error", traceback))`` in completion order, and ``close()``.
Workers only compute; the driver (the process iterating) writes the store. Each cell is a pure
function of its key and runs with BLAS held to ``blas_threads`` threads in every backend, so the
numbers do not depend on the backend (only the wall time does).

``SerialBackend()``
    one cell after another in this process.
``ProcessBackend(workers)``
    a ``concurrent.futures.ProcessPoolExecutor`` (fork start method on Linux, so workers start in
    milliseconds and share the imported, compiled code; spawn elsewhere).
``DaskBackend(scheduler=None, workers=None)``
    ``scheduler="tcp://HOST:PORT"`` uses a running cluster (``dask scheduler`` / ``dask worker``);
    otherwise a ``distributed.LocalCluster`` of ``workers`` processes with one thread each is
    started and closed with the backend. Workers load datasets themselves from ``data_dir`` (or
    their own ``$OKL_DATA``), so a remote cluster needs the files at that path on every worker, and
    the same okl version (checked when connecting: the version is part of every cell's key).
    The LocalCluster's workers start without Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` (it slows the
    learners 3-10x); for a cluster of your own, start the workers with
    ``distributed.nanny.pre-spawn-environ`` lacking it too (``dask config`` / DASK_ environment).

:func:`make_backend` picks one from the command-line options.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

# the serial backend lives with the runner it defaults to (okl.eval.sweep.run_sweep)
from okl.eval.sweep import SerialBackend, limit_blas_threads, run_cell_safely


def resolve_data_dir(data_dir=None) -> str | None:
    """The data directory as the *driver* resolves it (``data_dir``, else ``$OKL_DATA``), made
    absolute, so workers elsewhere (a Dask cluster) read the same path instead of their own
    ``$OKL_DATA``; None when neither is set (each worker then looks in ``~/.okl/data``)."""
    path = data_dir if data_dir is not None else os.environ.get("OKL_DATA") or None
    return None if path is None else os.path.abspath(os.path.expanduser(os.fspath(path)))


#: seconds between a process-pool worker's checks that its parent is alive (where prctl is absent)
PARENT_POLL_SECONDS = 1.0


def _exit_with_parent(parent_pid: int) -> None:
    """Make this worker process end when its parent does (``kill -9`` of ``okl sweep`` must not
    leave workers computing): Linux's PR_SET_PDEATHSIG, else a thread polling the parent id."""
    import signal

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        import threading
        import time

        def watch():
            while True:
                time.sleep(PARENT_POLL_SECONDS)
                if os.getppid() != parent_pid:
                    os._exit(1)

        threading.Thread(target=watch, name="okl-parent-watch", daemon=True).start()


def _init_worker(blas_threads, parent_pid=None):
    if parent_pid is not None:
        _exit_with_parent(parent_pid)
    limit_blas_threads(blas_threads)


class ProcessBackend(SerialBackend):
    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = int(workers or os.cpu_count() or 1)
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")

    def run(self, cells, data_dir=None, blas_threads: int | None = 1):
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)
        fn = functools.partial(run_cell_safely, data_dir=resolve_data_dir(data_dir), blas_threads=blas_threads)
        pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_worker,
                                   initargs=(blas_threads, os.getpid()))
        try:
            # keep a bounded window in flight so a killed driver has little to lose and memory stays flat
            pending: dict = {}
            queue = iter(cells)
            window = 4 * self.workers
            for cell in queue:
                pending[pool.submit(fn, cell)] = cell
                if len(pending) >= window:
                    break
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    cell = pending.pop(fut)
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # a worker died (killed, out of memory)
                        outcome = ("error", f"worker process failed: {exc!r}")
                    yield cell, outcome
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[pool.submit(fn, nxt)] = nxt
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def describe(self) -> str:
        return f"{self.workers} local processes"


def _okl_version() -> str:
    from okl._version import __version__

    return __version__


class DaskBackend(SerialBackend):
    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None, quiet: bool = True):
        try:
            import distributed
        except ImportError:
            raise ValueError("the Dask backend needs dask[distributed]: pip install 'dask[distributed]'") from None
        import logging

        self.cluster = None
        if scheduler:
            try:
                self.client = distributed.Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        else:
            import dask

            n = int(workers or os.cpu_count() or 1)
            # Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, which makes glibc unmap freed
            # blocks over 64 KiB at once: the learners' chunked array work then runs 3-10x slower
            # (measured, benchmarks/sweep_overhead.py). Keep the other settings (one BLAS thread).
            # The workers' statistical profiler (a sample every 10 ms) is switched off as well.
            environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
            environ.pop("MALLOC_TRIM_THRESHOLD_", None)
            with dask.config.set({"distributed.worker.profile.enabled": False,
                                  "distributed.nanny.pre-spawn-environ": environ}):
                self.cluster = distributed.LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                    silence_logs=logging.ERROR if quiet else logging.WARNING)
            self.client = distributed.Client(self.cluster)
        self.scheduler = scheduler
        versions = set(self.client.run(_okl_version).values())
        if versions - {_okl_version()}:
            self.close()
            raise ValueError(f"Dask workers run okl {', '.join(sorted(versions))} but this is okl "
                             f"{_okl_version()}: install the same version on every worker")

    def run(self, cells, data_dir=None, blas_threads: int | None = 1):
        import distributed

        if not cells:
            return
        # the client's data directory, resolved here: a remote worker's own $OKL_DATA may differ
        fn = functools.partial(run_cell_safely, data_dir=resolve_data_dir(data_dir), blas_threads=blas_threads)
        futures = self.client.map(fn, list(cells), pure=False)
        cell_of = {f.key: c for f, c in zip(futures, cells)}
        try:
            for fut in distributed.as_completed(futures):
                cell = cell_of[fut.key]
                try:
                    outcome = fut.result()
                except Exception as exc:  # the worker died (KilledWorker) or the cluster went away
                    outcome = ("error", f"Dask task failed: {exc!r}")
                fut.release()
                yield cell, outcome
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def close(self) -> None:
        client, cluster = getattr(self, "client", None), getattr(self, "cluster", None)
        if client is not None:
            client.close()
            self.client = None
        if cluster is not None:
            cluster.close()
            self.cluster = None

    def describe(self) -> str:
        if self.scheduler:
            return f"Dask cluster at {self.scheduler}"
        return f"Dask LocalCluster ({len(self.client.scheduler_info()['workers'])} worker processes)"


def check_backend_options(kind: str = "auto", workers: int | None = None, scheduler: str | None = None) -> None:
    """The backend options, checked before a sweep creates its store or plans its cells: an option
    the chosen backend would ignore (``--workers 4 --backend serial``) is refused, not dropped."""
    if kind not in ("auto", "serial", "processes", "dask"):
        raise ValueError(f"backend must be auto, serial, processes or dask, got {kind!r}")
    if scheduler and kind not in ("auto", "dask"):
        raise ValueError(f"--scheduler needs the dask backend, not {kind!r}")
    if kind == "serial" and workers is not None and workers > 1:
        raise ValueError(f"--workers {workers} with --backend serial: serial runs one cell at a time in this "
                         "process; drop --workers or choose --backend processes or dask")


def make_backend(kind: str = "auto", workers: int | None = None, scheduler: str | None = None):
    """Backend from command-line options.

    ``auto``: ``--scheduler`` -> Dask on that cluster; ``--workers N`` (N > 1) -> a Dask
    LocalCluster of N processes, or local processes when dask.distributed is not installed (a note
    is printed); otherwise serial.
    """
    check_backend_options(kind, workers, scheduler)
    if kind == "serial" or (kind == "auto" and not scheduler and (workers or 1) <= 1):
        return SerialBackend()
    if kind == "processes":
        return ProcessBackend(workers)
    if kind == "auto" and not scheduler:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("okl: dask.distributed is not installed; using local processes", file=sys.stderr)
            return ProcessBackend(workers)
    return DaskBackend(scheduler, workers)


__all__ = ["DaskBackend", "ProcessBackend", "SerialBackend", "check_backend_options", "make_backend", "resolve_data_dir"]
