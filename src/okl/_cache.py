"""Where okl's compiled code is cached on disk, and what makes a cached entry valid.

Numba caches a compiled function as an index (``.nbi``: one entry per signature and CPU) and data
files (``.nbc``). Its own stamp on an index is the defining file's modification time and size
(Numba 0.59-0.67) or content (0.68), and only that file's: an edited helper in another file leaves
its callers' entries stale. okl stamps every entry with the **content of the whole package** (a
SHA-256 over every ``.py`` file under ``okl/``, about 1 ms once a process), so that

* a cache built beside the sources, at install (``build_support/okl_backend.py``), is valid
  wherever the same sources are installed, on a CPU of the same kind (Numba keys each entry by the
  CPU's name and features: another CPU compiles its own entries beside them);
* an edit to any file of the package invalidates every entry (each function is compiled again at
  its first use, once).

Where the entries are read and written (:func:`cache_dirs`, decided once a process):

1. ``NUMBA_CACHE_DIR``, when set (Numba's setting: it replaces every default), in
   ``<dir>/okl-<fingerprint>/``; when it cannot be created or written, the defaults below;
2. the package's own cache, ``okl/_numba_cache/`` (filled at install), read first, and written
   when this process may write there;
3. else a user cache, ``$XDG_CACHE_HOME/okl/<fingerprint>/`` (``~/.cache`` by default), read after
   the package's and written (a read-only install, another CPU than the one it was built on).

An entry that cannot be read (a truncated data file, an index of garbage: a full disk, a killed
copy) counts as missing: the function is compiled again and its entry written anew (Numba writes a
temporary file and renames it over the old one). Cache files are okl's own output, read with
Numba's pickle-based format; nothing else is loaded from them.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import tempfile

from numba.core import config
from numba.core.caching import Cache, CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, NullCache
from numba.core.runtime import rtsys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
#: the package's own cache, filled when okl is built (pip install, python -m build)
PACKAGE_CACHE = os.path.join(PACKAGE_DIR, "_numba_cache")


@functools.lru_cache(maxsize=None)
def fingerprint() -> str:
    """SHA-256 over the relative path and content of every ``.py`` file of the package (hex)."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "_numba_cache"))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(top, name)
                digest.update(os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/").encode() + b"\0")
                with open(path, "rb") as f:
                    digest.update(f.read())
                digest.update(b"\0")
    return digest.hexdigest()


def _writable(path: str) -> bool:
    """Whether this process can create ``path`` and write a file in it (tried, not guessed: a root
    install read by another user, a read-only mount, a path under a file)."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _user_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "okl", fingerprint()[:16])


class CacheDirs:
    """The directories a process reads entries from (in order) and the one it writes to (None:
    none is writable; every process then compiles), and why (:attr:`note`, for the notice)."""

    def __init__(self, read: list[str], write: str | None, note: str = ""):
        self.read, self.write, self.note = read, write, note


@functools.lru_cache(maxsize=None)
def cache_dirs() -> CacheDirs:
    """This process's :class:`CacheDirs` (see the module docstring)."""
    note = ""
    if config.CACHE_DIR:
        own = os.path.join(config.CACHE_DIR, f"okl-{fingerprint()[:16]}")
        if _writable(own):
            return CacheDirs([own], own)
        note = "NUMBA_CACHE_DIR is not a directory this process can write"
    if _writable(PACKAGE_CACHE):
        return CacheDirs([PACKAGE_CACHE], PACKAGE_CACHE, note)
    user = _user_cache()
    return CacheDirs([PACKAGE_CACHE, user], user if _writable(user) else None, note)


class _Locator:
    """Numba's cache locator interface for a function of the package: its directory (the same
    relative path as its module's, under each cache directory) and the package's stamp."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self.subdir = os.path.relpath(os.path.dirname(py_file), PACKAGE_DIR)

    @classmethod
    def from_function(cls, py_func, py_file):
        inside = os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep)
        return cls(py_func, py_file) if inside else None

    def path_in(self, root: str) -> str:
        return os.path.normpath(os.path.join(root, self.subdir))

    def get_cache_path(self) -> str:
        dirs = cache_dirs()
        return self.path_in(dirs.write or dirs.read[-1])

    def get_source_stamp(self):
        return fingerprint()

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    def ensure_cache_path(self) -> None:
        pass  # (the directories are made and tried once: cache_dirs)


class _Impl(CompileResultCacheImpl):
    _locator_classes = [_Locator]

    def reduce(self, cres):
        """Numba's entry (``CompileResult._reduce``) keeping only the environments its machine code
        uses. Numba stores the environment of every function linked into the library (each
        ``_ZN08NumbaEnv`` global of its final module) and a load rebuilds each one by importing
        its module; nearly all of them are never read (auto's K-output root: 177, of which its
        own and an array-shape error's are used), and those of NumPy's and the string
        implementations cost ~17 ms of imports (``numba.np.arraymath``, ``npyimpl``,
        ``numba.cpython.unicode``) at a process's first compiled call. An environment no
        instruction names is left null, as it is never loaded."""
        data = super().reduce(cres)
        envs = data[-1]
        used = used_environments(cres.library._final_module) if isinstance(envs, tuple) and envs else None
        if used is None:
            return data
        return data[:-1] + (tuple(env for env in envs if env.env_name in used),)


_ENV_PREFIX = "_ZN08NumbaEnv"


def used_environments(module) -> set | None:
    """The names of the environment globals (``_ZN08NumbaEnv...``) that the LLVM module's code or
    other globals name, not counting each one's own definition; None when the module defines no
    function (an entry loaded from machine code: nothing to read it from)."""
    if not any(not fn.is_declaration for fn in module.functions):
        return None
    used = set()
    for line in str(module).splitlines():
        start = line.find(_ENV_PREFIX)
        if start < 0:
            continue
        own = line.startswith(("@" + _ENV_PREFIX, '@"' + _ENV_PREFIX))  # (its definition: not a use)
        while start >= 0:
            end = start
            while end < len(line) and (line[end].isalnum() or line[end] in "_.$"):
                end += 1
            if not own:
                used.add(line[start:end])
            own = False
            start = line.find(_ENV_PREFIX, end)
    return used


class _SafeIndex(IndexDataCacheFile):
    """Numba's index and data files in one directory; an unreadable index or data file reads as
    missing and sets :attr:`damaged`."""

    damaged = False

    def _load_index(self):
        try:
            return super()._load_index()
        except Exception:  # (any unpickling failure of a damaged file: UnpicklingError, EOFError, ...)
            self.damaged = True
            return {}

    def load(self, key):
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            return self._load_data(name)
        except Exception:
            self.damaged = True
            return None

    def keys(self):
        return list(self._load_index())


#: the prefix of the hash secret's symbols (numba.cpython.hashing adds them at its import)
_HASH_SECRET = b"_numba_hashsecret_"


def _machine_code(data) -> bytes:
    """The machine code of a loaded entry (``CompileResult._reduce``'s first item: name, "object",
    (code, bitcode)); the hash secret's prefix when the layout is another (its symbols are then
    added, as before)."""
    try:
        return bytes(data[0][2][0])
    except (TypeError, IndexError, KeyError):
        return _HASH_SECRET


#: the cache roots this process has said are damaged and not writable
_SAID: set = set()


def _say_unrepairable(path: str) -> None:
    """Once a process per cache root: damaged entries in a directory this process cannot write
    (a read-only install) are compiled again and cached where it can; say so, and how to repair
    them."""
    dirs = cache_dirs()
    root = next((d for d in dirs.read if os.path.normpath(path).startswith(os.path.normpath(d))), path)
    if root in _SAID:
        return
    _SAID.add(root)
    print(f"okl: the compile cache in {root} has damaged entries this process cannot replace (not writable); "
          f"they are compiled again and cached in {dirs.write or 'no directory'}; to repair it, run "
          "`okl compile --force` as its owner (or delete it)", file=sys.stderr, flush=True)


class PackageCache(Cache):
    """Numba's per-function cache for okl's functions, on :func:`cache_dirs`: reads each
    directory in turn, writes the writable one; an entry that cannot be read or rebuilt is
    compiled again, and a directory that cannot be written costs only the time to compile."""

    _impl_class = _Impl

    def __init__(self, py_func):  # (Cache.__init__ with a file per directory)
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = self._impl_class(py_func)
        locator, dirs = self._impl.locator, cache_dirs()
        stamp, base = locator.get_source_stamp(), self._impl.filename_base
        self.files = [_SafeIndex(locator.path_in(d), base, stamp) for d in dirs.read]
        # (the directory written is always one of those read: cache_dirs)
        self.writer = self.files[dirs.read.index(dirs.write)] if dirs.write is not None else None
        self._cache_file = self.writer or self.files[-1]
        self._cache_path = self._cache_file._cache_path
        self.enable()

    def load_overload(self, sig, target_context):
        """Numba's ``Cache.load_overload`` without its ``target_context.refresh()``. That refresh
        installs every typing and lowering registry Numba has (it imports ~80 modules: NumPy's
        and the typed containers' implementations, cffi and pycparser): 0.2-0.5 s, paid by the
        first compiled call of a process. A cached entry is machine code already typed and
        lowered, so loading it needs only the symbols its code links to: Numba's C helpers and
        math functions (installed when the context is made), the NRT's (installed below) and,
        for an entry whose code names it (hashing a str or tuple: no okl entry so far), the hash
        secret (:mod:`numba.cpython.hashing`, at its import: 3 ms); no other Numba module adds a
        symbol (``parallel=True``'s, which okl does not use). A cache miss compiles, and Numba's
        compiler refreshes the registries itself (``CompilerBase.__init__``)."""
        start_runtime(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        for file in self.files:
            data = file.load(key)
            if data is not None:
                try:
                    if _HASH_SECRET in _machine_code(data):
                        import numba.cpython.hashing  # noqa: F401  (its import adds those symbols)
                    return self._impl.rebuild(target_context, data)
                except Exception:
                    file.damaged = True
            if file.damaged and file is not self.writer:
                _say_unrepairable(file._cache_path)
        return None

    def _save_overload(self, sig, data):
        if not self._enabled or self.writer is None or not self._impl.check_cachable(data):
            return
        key = self._index_key(sig, data.codegen)
        try:
            os.makedirs(self.writer._cache_path, exist_ok=True)
            self.writer.save(key, self._impl.reduce(data))
        except OSError:
            pass  # (a full disk or a directory gone read-only: the next process compiles it again)

    def has_entry_for(self, magic: tuple) -> bool:
        """Whether a directory holds a valid entry compiled for the CPU ``magic`` describes."""
        return any(key[1] == magic for file in self.files for key in file.keys())


class LazyCache:
    """A :class:`PackageCache` built at the function's first compile or cache lookup, not when its
    module is imported (the fingerprint and the directories are then decided once, in the first
    process that compiles or loads)."""

    def __init__(self, py_func):
        self._py_func = py_func
        self._real = None

    @property
    def real(self) -> Cache:
        if self._real is None:
            if _Locator.from_function(self._py_func, inspect.getfile(self._py_func)) is not None:
                self._real = PackageCache(self._py_func)
            else:  # (a function outside the package, decorated with okl's jit: Numba's own cache, if any)
                try:
                    self._real = FunctionCache(self._py_func)
                except RuntimeError:  # (no file to cache it beside: "<string>", a notebook cell)
                    self._real = NullCache()
        return self._real

    def __getattr__(self, name):
        return getattr(self.real, name)


def start_runtime(target_context) -> None:
    """``rtsys.initialize``: Numba's runtime (NRT), which every entry's code links to, with its
    compiled part (atomic reference counts, ``NRT_incref`` / ``NRT_decref``: Numba's
    ``nrtdynmod.compile_nrt_functions``) loaded from a cache file instead of compiled by LLVM in
    every process (~19 ms at its first compiled call). The file ``nrt-<key>.bin`` beside the
    entries (:func:`cache_dirs`) holds that library's machine code and bitcode (Numba's own
    ``serialize_using_object_code``: two byte strings and their SHA-256, no pickle), keyed by
    Numba's and llvmlite's versions and the CPU (:func:`cpu_magic`); a missing or damaged one is
    compiled as Numba does and written where a directory is writable. Numba's ``initialize``
    still does the rest (its C helpers' symbols, its statistics switch), and compiles its own
    when a compile (a cache miss) calls it first."""
    if getattr(rtsys, "_init", True):  # (started, or a Numba without the flag: its own path)
        rtsys.initialize(target_context)
        return
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import nrtdynmod

    with global_compiler_lock:  # (the lock rtsys.initialize takes: nothing else compiles meanwhile)
        compile_nrt = nrtdynmod.compile_nrt_functions
        nrtdynmod.compile_nrt_functions = functools.partial(_runtime_library, compile_nrt=compile_nrt)
        try:
            rtsys.initialize(target_context)
        finally:
            nrtdynmod.compile_nrt_functions = compile_nrt


_NRT_HEADER = b"okl nrt library 1\n"


def _runtime_file(dirpath: str) -> str:
    import llvmlite
    import numba

    key = hashlib.sha256(repr((numba.__version__, llvmlite.__version__, cpu_magic())).encode()).hexdigest()
    return os.path.join(dirpath, f"nrt-{key[:16]}.bin")


def _runtime_library(ctx, compile_nrt):
    """The NRT's library: loaded from the first readable cache file, else compiled (and saved)."""
    from numba.core.runtime import nrtdynmod

    dirs = cache_dirs()
    codegen = ctx.codegen()
    for d in dirs.read:
        try:
            with open(_runtime_file(d), "rb") as f:
                data = f.read()
            n = len(_NRT_HEADER) + 40
            if not data.startswith(_NRT_HEADER) or hashlib.sha256(data[n:]).digest() != data[n - 32:n]:
                continue  # (not a whole file of this kind: written by nothing else, or damaged)
            size = int.from_bytes(data[n - 40:n - 32], "little")
            return codegen.unserialize_library(("nrt", "object", (data[n:n + size], data[n + size:])))
        except Exception:  # (missing, truncated or unloadable: compiled below)
            continue
    try:
        ir_mod, library = nrtdynmod.create_nrt_module(ctx)
        library.enable_object_caching()  # (keeps the machine code it is compiled to)
        library.add_ir_module(ir_mod)
        library.finalize()
    except Exception:  # (a Numba whose NRT module is built otherwise: its own compile, not saved)
        return compile_nrt(ctx)
    if dirs.write is not None:
        _, _, (code, bitcode) = library.serialize_using_object_code()
        try:
            from okl._files import write_atomically

            os.makedirs(dirs.write, exist_ok=True)
            payload = code + bitcode
            write_atomically(_runtime_file(dirs.write), lambda f: f.write(
                _NRT_HEADER + len(code).to_bytes(8, "little") + hashlib.sha256(payload).digest() + payload))
        except OSError:
            pass  # (the next process compiles it again)
    return library


@functools.lru_cache(maxsize=None)
def cpu_magic() -> tuple:
    """Numba's description of this machine's code generation (target, CPU name and features): the
    part of an entry's key that ties it to a CPU."""
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


__all__ = ["PACKAGE_CACHE", "CacheDirs", "LazyCache", "PackageCache", "cache_dirs", "cpu_magic", "fingerprint"]
