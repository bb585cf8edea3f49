"""The Numba decorators of okl's compiled code (cached on disk by :mod:`okl._cache`, IEEE
arithmetic: no fastmath, so a loop sums in the order written and results do not depend on the
machine's vector width), and the one-line notice on stderr when a process compiles them (a cache
without this machine's entries: see ``okl compile``)."""

import contextlib
import signal
import sys
import threading
import time

import numba as nb
from numba.core import event as _event

from okl._cache import LazyCache, PackageCache, cache_dirs, cpu_magic

#: (no C-callable wrapper: okl never takes a compiled function's address, and each wrapper costs a
#: cold start ~10 ms of compile: docs/results/startup-compile.md)
_OPTIONS = dict(fastmath=False, nogil=True, no_cfunc_wrapper=True)


def _cached(options):
    """``nb.njit(**options)`` whose cache is okl's (:class:`okl._cache.PackageCache`: the
    package's content stamps every entry, so a cache built at install stays valid)."""
    def decorate(func):
        dispatcher = nb.njit(**options)(func)
        dispatcher._cache = LazyCache(dispatcher.py_func)  # (Numba's enable_caching, with okl's cache)
        return dispatcher
    return decorate


jit = _cached(_OPTIONS)

#: :data:`jit` with NumPy's error model: a division by zero gives inf / NaN instead of raising, so
#: Numba adds no zero test to a division and a loop of divisions and square roots vectorises (both
#: are exact IEEE operations: the same bits). Only for loops that never use such a quotient (a
#: branch-free select discards it).
jit_vector = _cached(dict(_OPTIONS, error_model="numpy"))

#: :data:`jit` for orchestration written once and typed inside its callers (Numba's
#: ``inline="always"``): the compiled roots of auto's engine take it with the member functions of
#: their output kind as arguments (okl.engine.core), so no separate machine code is built and
#: then optimised again inside each caller.
jit_inline = _cached(dict(_OPTIONS, inline="always"))


def jit_for(signatures):
    """:data:`jit` compiled now for the given explicit signatures only (an entry point called
    from Python: a call whose arguments match none of them raises TypeError)."""
    def decorate(func):
        dispatcher = jit(func)
        for signature in signatures:
            dispatcher.compile(signature)
        dispatcher.disable_compile()
        return dispatcher
    return decorate


class _CompileNotice(_event.Listener):
    """Says once per process, on stderr, that okl's compiled loops are being compiled: Numba
    fires ``numba:compile`` only on a cache miss (a loaded function fires nothing), so a warm
    cache prints nothing. The first use on a cold cache otherwise waits seconds with nothing on
    screen (``benchmarks/startup.py`` measures how long). Also counts the seconds this process
    spends compiling (:func:`compile_seconds`: progress lines leave them out of their rates)."""

    def __init__(self):
        self.enabled = True
        self.said = False
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0
        self.interrupted = False
        self.handler = None

    # Ctrl-C during a compile: LLVM calls back into Python through ctypes, and a KeyboardInterrupt
    # raised inside such a callback is printed and dropped ("Exception ignored on calling ctypes
    # callback function"), so the compile went on as if nothing was pressed. While okl compiles, a
    # Ctrl-C is noted and raised at the next compile event (the end of the function being
    # compiled, at most seconds later); a second one is raised at once.

    def _on_interrupt(self, signum, frame):
        if self.interrupted:
            raise KeyboardInterrupt
        self.interrupted = True

    def _defer_interrupts(self):
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.handler = signal.signal(signal.SIGINT, self._on_interrupt)

    def _restore_interrupts(self):
        if self.handler is not None:
            signal.signal(signal.SIGINT, self.handler)
            self.handler = None

    def _raise_if_interrupted(self):
        if self.interrupted:
            self.interrupted = False
            raise KeyboardInterrupt

    def on_start(self, event):
        if self.depth == 0:
            self.started = time.perf_counter()
            self._defer_interrupts()
        self.depth += 1
        self._raise_if_interrupted()
        if self.said or not self.enabled:
            return
        dispatcher = event.data.get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if not module.startswith("okl."):
            return
        self.said = True
        print(f"okl: {notice_text()}", file=sys.stderr, flush=True)

    def on_end(self, event):
        self.depth = max(self.depth - 1, 0)
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started
            self._restore_interrupts()
        self._raise_if_interrupted()


def notice_text() -> str:
    """The compile notice: what happens, where it is cached, and how to avoid it next time."""
    dirs = cache_dirs()
    why = f" ({dirs.note})" if dirs.note else ""
    if dirs.write is None:
        return (f"compiling the learners' loops for this machine (seconds, in every process: no cache directory "
                f"is writable{why}; set NUMBA_CACHE_DIR to one, or run `okl compile` as the package's owner)")
    return (f"compiling the learners' loops for this machine, once (seconds; they are cached in {dirs.write}{why} "
            "and later runs load them; `okl compile` builds them ahead)")


_NOTICE = _CompileNotice()
_event.register("numba:compile", _NOTICE)


@contextlib.contextmanager
def compiling():
    """Count the block's wall time as compile time (a wait on a compile in another process)."""
    t0 = time.perf_counter()
    depth = _NOTICE.depth
    try:
        yield
    finally:
        if depth == 0 and _NOTICE.depth == 0:
            _NOTICE.seconds += time.perf_counter() - t0


def compile_seconds() -> float:
    """Seconds this process has spent compiling okl's code (and waiting on a compile child)."""
    extra = time.perf_counter() - _NOTICE.started if _NOTICE.depth else 0.0
    return _NOTICE.seconds + extra


def is_cached(function) -> bool:
    """Whether okl's cache holds an entry of this function (a dispatcher or the Python function
    under one) compiled for this CPU with the package's current sources; False when it cannot be
    told (the caller then treats the cache as cold)."""
    py_func = getattr(function, "py_func", function)
    try:
        return PackageCache(py_func).has_entry_for(cpu_magic())
    except Exception:  # (Numba's cache layout is not public API)
        return False


def compile_notice_enabled() -> bool:
    """Whether this process prints the compile notice (what :func:`compile_notice` last set)."""
    return _NOTICE.enabled


def compile_notice(enabled: bool) -> None:
    """Turn the compile notice on or off for this process (the CLI's ``--quiet`` turns it off)."""
    _NOTICE.enabled = bool(enabled)
