"""The Numba decorators of okl's compiled code (cached on disk, IEEE arithmetic: no fastmath,
so a loop sums in the order written and results do not depend on the machine's vector width),
and the one-line notice on stderr when a process compiles them (a cold cache)."""

import os
import sys

import numba as nb
from numba.core import event as _event

#: (no C-callable wrapper: okl never takes a compiled function's address, and each wrapper costs a
#: cold start ~10 ms of compile: docs/results/startup-compile.md)
_OPTIONS = dict(cache=True, fastmath=False, nogil=True, no_cfunc_wrapper=True)
jit = nb.njit(**_OPTIONS)

#: :data:`jit` with NumPy's error model: a division by zero gives inf / NaN instead of raising, so
#: Numba adds no zero test to a division and a loop of divisions and square roots vectorises (both
#: are exact IEEE operations: the same bits). Only for loops that never use such a quotient (a
#: branch-free select discards it).
jit_vector = nb.njit(**_OPTIONS, error_model="numpy")

#: :data:`jit` for orchestration written once and typed inside its callers (Numba's
#: ``inline="always"``): the compiled roots of auto's engine take it with the member functions of
#: their output kind as arguments (okl.engine.core), so no separate machine code is built and
#: then optimised again inside each caller.
jit_inline = nb.njit(**_OPTIONS, inline="always")


def jit_for(signatures):
    """:data:`jit` compiled now for the given explicit signatures only (an entry point called
    from Python: a call whose arguments match none of them raises TypeError)."""
    return nb.njit(signatures, **_OPTIONS)


class _CompileNotice(_event.Listener):
    """Says once per process, on stderr, that okl's compiled loops are being compiled: Numba
    fires ``numba:compile`` only on a cache miss (a loaded function fires nothing), so a warm
    cache prints nothing. The first use on a cold cache otherwise waits seconds with nothing on
    screen (``benchmarks/startup.py`` measures how long)."""

    def __init__(self):
        self.enabled = True
        self.said = False

    def on_start(self, event):
        if self.said or not self.enabled:
            return
        dispatcher = event.data.get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if not module.startswith("okl."):
            return
        self.said = True
        where = nb.config.CACHE_DIR or "__pycache__ folders beside okl's sources"
        cache = getattr(getattr(dispatcher, "_cache", None), "_cache_path", "")
        if not nb.config.CACHE_DIR and not cache.startswith(os.path.dirname(os.path.dirname(__file__))):
            where = os.path.dirname(cache)  # (sources not writable: Numba's user-wide cache)
        where = f" in {where}"
        print(f"okl: compiling the learners' loops for this machine, once (seconds; they are cached{where} "
              "and later runs load them)", file=sys.stderr, flush=True)

    def on_end(self, event):
        pass


_NOTICE = _CompileNotice()
_event.register("numba:compile", _NOTICE)


def is_cached(dispatcher) -> bool:
    """Whether Numba's on-disk cache holds an index for this compiled function (a warm cache);
    False when it does not or cannot be told (Numba's cache layout is not public API: then the
    caller treats the cache as cold)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    return isinstance(index, str) and os.path.exists(index)


def compile_notice(enabled: bool) -> None:
    """Turn the compile notice on or off for this process (the CLI's ``--quiet`` turns it off)."""
    _NOTICE.enabled = bool(enabled)
