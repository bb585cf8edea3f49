"""Model files: :meth:`save` / :meth:`load` (``.npz`` + JSON header, no pickle) and the state checks
(:class:`ModelFiles`, a mixin of :class:`okl.runtime.base.Learner`)."""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import zipfile
import zlib
from typing import Any, BinaryIO

import numpy as np

from okl._files import write_atomically
from okl.kernels import WIDTH_WINDOW, Kernel
from okl.runtime.categorical import load_map, map_header
from okl.runtime.events import drop_event_cache, event_state
from okl.runtime.registry import lookup
from okl.runtime.state import (MAX_DIM, MAX_HEADER_BYTES, MAX_ROUNDS, MODEL_FORMAT, MODEL_FORMAT_VERSION,
                               _BASE_STATE, ModelFileError, StateError, StateSpec, _Header, _SpecChecker,
                               _base_spec, _decode_param, encode_param, layout_key, state_attrs)
from okl.runtime.hyperparameters import param_names


def _writable(value: np.ndarray, dtype=None) -> np.ndarray:
    """``value`` as a writable, C-contiguous array (copied only when it is not one already)."""
    if value.flags.writeable and value.flags.c_contiguous and (dtype is None or value.dtype == dtype):
        return value
    return np.array(value, dtype=dtype or value.dtype, order="C", copy=True)


def _available_memory() -> int:
    """Bytes of memory available now (a generous bound when it cannot be read)."""
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def _shown(value) -> str:
    """A header value in an error: an integer as is, anything else by repr and type, so the
    string "1" is not shown as if it were the version 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value!r} (a {type(value).__name__}, not an integer)"


def check_header(meta, name: str, what: str, fmt: str, kind: str, version: int,
                 version_key: str = "format_version", hint: str = "", error: type = ModelFileError) -> dict:
    """``meta``, a file's decoded JSON header, when it declares ``"format": fmt`` and
    ``version_key: version``; else ``error`` naming ``name``: not ``what`` (with the format it
    declares), or ``kind`` format version N (:func:`_shown`: the string "1" is not the version 1)
    but this okl reads ``version``, then ``hint``. One check for every okl file with a header: model
    files, :class:`okl.MultiClass` files, ``okl stream`` checkpoints, forecaster files."""
    from okl._version import __version__

    if not isinstance(meta, dict) or meta.get("format") != fmt:
        declared = meta.get("format") if isinstance(meta, dict) else None
        raise error(f"{name}: not {what} (format {repr(declared)[:200]})")
    if meta.get(version_key) != version:
        raise error(f"{name}: {kind} format version {_shown(meta.get(version_key))} "
                    f"but this okl ({__version__}) reads version {version}{hint}")
    return meta


# ---- zips of model files (okl.MultiClass files, okl stream checkpoints) ---------------------
#
# A file that holds model files as entries of an outer zip is read in place: each entry must be
# stored (not compressed), so its bytes are a stretch of the outer file and reading it can never
# inflate anything; it is opened as a window onto that stretch (:class:`ZipEntryFile`), never
# extracted to a temporary directory, and every error names the user's file and the entry.


class ZipEntryFile(io.RawIOBase):
    """The bytes of one stored entry of an open zip file, read in place (seekable, read-only):
    a window onto ``[start, start + size)`` of the outer file."""

    def __init__(self, fh: BinaryIO, start: int, size: int):
        super().__init__()
        self._fh, self._start, self._size, self._pos = fh, start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        n = max(0, min(len(buffer), self._size - self._pos))
        if n == 0:
            return 0
        self._fh.seek(self._start + self._pos)
        data = self._fh.read(n)
        buffer[:len(data)] = data
        self._pos += len(data)
        if len(data) < n:
            raise EOFError("the file ends inside this entry (truncated)")
        return len(data)


def _archive_size(fh: BinaryIO) -> int:
    here = fh.tell()
    size = fh.seek(0, 2)
    fh.seek(here)
    return size


def cut_short(zf: zipfile.ZipFile) -> bool:
    """Whether an open zip written by okl (``np.savez``, :meth:`okl.MultiClass.save`, a stream
    checkpoint: no comment, the first entry at byte 0) was cut short: zipfile then finds the
    directory of a zip stored inside it (a model file in a multi-class file or checkpoint, an
    ``auto`` member's file in its blob), whose end lies before the cut, the rest read as a
    "comment"."""
    infos = zf.infolist()
    return bool(zf.comment) or bool(infos and min(i.header_offset for i in infos) != 0)


def open_model_zip(source, name: str, entries: str) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """Open ``source`` (a path or a binary file) as a zip of okl's own making and check its
    directory before anything is read: not cut short (the directory found at its end must be
    its own, not that of a model file inside it), every entry named once, a plain relative name
    (no ``..``, no absolute path), a regular file (not a symbolic link), not encrypted, stored
    (not compressed) and lying inside the file. ``entries`` says what the file should be (for
    the errors). Returns the open zip and its entries by name; raises :class:`ModelFileError`
    naming ``name`` and the problem."""
    def bad(what: str) -> ModelFileError:
        return ModelFileError(f"{name}: {what}")

    try:
        zf = zipfile.ZipFile(source)
    except FileNotFoundError:
        raise bad("no such file") from None
    except zipfile.BadZipFile as exc:
        raise bad(f"not a zip file or truncated (no zip directory at its end: {exc}); expected {entries}") from None
    except (OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise bad(f"cannot be read as a zip file ({type(exc).__name__}: {str(exc)[:200]}); "
                  f"expected {entries}") from None
    try:
        infos = zf.infolist()
        size = _archive_size(zf.fp)
        if cut_short(zf):
            raise bad(f"truncated or damaged ({size} bytes; the zip directory at its end is not the "
                      f"file's own); expected {entries}")
        found: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            entry = info.filename
            if entry in found:
                raise bad(f"entry {entry!r} appears twice")
            parts = entry.replace("\\", "/").split("/")
            if entry.startswith(("/", "\\")) or ".." in parts or ":" in entry or len(parts) > 1:
                raise bad(f"entry {entry!r} is not a plain file name (okl's files hold no directories)")
            if stat.S_ISLNK(info.external_attr >> 16):
                raise bad(f"entry {entry!r} is a symbolic link")
            if info.flag_bits & 0x1:
                raise bad(f"entry {entry!r} is encrypted")
            if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
                raise bad(f"entry {entry!r} is compressed ({info.compress_size} bytes inflating to "
                          f"{info.file_size}); okl stores its entries uncompressed and does not inflate them")
            if info.header_offset + 30 + info.file_size > size:
                raise bad(f"entry {entry!r} declares {info.file_size} bytes from byte {info.header_offset}, "
                          f"beyond the end of the file ({size} bytes): truncated or forged")
            found[entry] = info
    except BaseException:
        zf.close()
        raise
    return zf, found


def zip_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> ZipEntryFile:
    """The bytes of a stored entry checked by :func:`open_model_zip`, read in place."""
    fh = zf.fp
    fh.seek(info.header_offset)
    local = fh.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise ModelFileError(f"{name}: entry {info.filename!r}: no local header at byte {info.header_offset} "
                             "(truncated or damaged)")
    # (zipfile.structFileHeader: the name and extra-field lengths end its fixed 30 bytes)
    n_name, n_extra = struct.unpack("<HH", local[26:30])
    if fh.read(n_name) != info.orig_filename.encode("cp437" if not info.flag_bits & 0x800 else "utf-8"):
        raise ModelFileError(f"{name}: entry {info.filename!r}: its local header names another entry")
    start = info.header_offset + 30 + n_name + n_extra
    if start + info.file_size > _archive_size(fh):
        raise ModelFileError(f"{name}: entry {info.filename!r} ends beyond the end of the file (truncated)")
    return ZipEntryFile(fh, start, info.file_size)


class ModelFiles:
    """The public state methods of :class:`okl.runtime.base.Learner` (save, load, check_state,
    check_layout, unpickling); the work is its state I/O object's (:class:`StateIO`,
    ``Learner.files``)."""

    def save(self, path: str | os.PathLike) -> None:
        """Write the hyperparameters and complete state to ``path`` (a ``.npz`` file, no pickle).

        The file is written to a temporary name, flushed and renamed
        (:func:`okl._files.write_atomically`), so a crash never leaves a half-written model under
        ``path``, and a failed write (full disk) leaves no temporary file and names ``path``.
        """
        write_atomically(path, lambda fh: self.files.write(self, fh))

    def check_state(self) -> "Learner":
        """Check the whole state against the learner's declaration (as :meth:`load` does) and make
        read-only arrays writable copies; raises :class:`StateError` (a ValueError) naming the
        field. Nothing to check before the first example."""
        drop_event_cache(self)
        checker = self.files.layout_checker(self)
        if checker is not None:
            self.files.check_base_values(self)
            checker.layout()
            checker.contents()
        return self

    def check_layout(self) -> "Learner":
        """:meth:`check_state` without reading every entry (shapes, dtypes and counters only):
        cheap enough for every call of a compiled loop."""
        key = layout_key(self)
        if key is None:
            return self
        # unchanged since the last check (same array objects, writable, same numbers): nothing to do
        if self._event.layout != key:
            self.files.layout_checker(self).layout()
        # a new stamp for every check passed (the learner's event state keeps it): the per-event
        # path sees that one ran in a round (EventPath.learn_generic)
        event_state(self).layout = key
        return self

    def __setstate__(self, state: dict) -> None:
        """Unpickling (e.g. joblib's read-only memory maps): read-only arrays become copies."""
        for key, value in state.items():
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                state[key] = _writable(value)
        self.__dict__.update(state)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Learner":
        """Rebuild a learner saved by :meth:`save`. Nothing in the file is executed or unpickled.

        Every refusal is a :class:`ModelFileError` naming the file (and the state field): the
        header, the hyperparameters, then the whole state against the learner's declaration
        (:meth:`_state_spec`). Array sizes are checked from the ``.npy`` headers before any array
        is read, so a file declaring more than the hyperparameters imply is refused without
        allocating it; read-only or non-contiguous arrays are copied.
        """
        return load_from(os.fspath(path), os.fspath(path), cls)


def load_from(source, path: str, cls=None) -> "Learner":
    """:meth:`Learner.load` from ``source``, a path or a seekable binary file (an entry of a
    :class:`okl.MultiClass` file or of a checkpoint, :func:`zip_entry`), named ``path`` in every
    error; ``cls``: the learner class the file must hold (None: any registered learner)."""
    try:
        try:
            zf = zipfile.ZipFile(source)
        except zipfile.BadZipFile as exc:
            raise ModelFileError(f"{path}: not an okl model file, or truncated (no zip directory at its "
                                 f"end: {exc})") from None
        with zf:
            return _load_zip(cls, zf, path)
    except ModelFileError:
        raise
    except StateError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except MemoryError:
        raise ModelFileError(f"{path}: an array does not fit in memory") from None
    except (OSError, ValueError, TypeError, KeyError, zipfile.BadZipFile, EOFError, RuntimeError,
            NotImplementedError, OverflowError, zlib.error) as exc:
        raise ModelFileError(f"{path}: not a readable okl model file ({type(exc).__name__}: "
                             f"{str(exc)[:200]})") from None


def write_model(model, fh: BinaryIO) -> None:
    """The model file's bytes of ``model`` (a learner, through its :class:`StateIO`, or a
    :class:`okl.MultiClass`) into an open binary file."""
    files = getattr(model, "files", None)
    if isinstance(files, StateIO):
        files.write(model, fh)
    else:
        model._write_model(fh)


class StateIO:
    """A learner's state I/O (``Learner.files``, one object per class): its model file's bytes
    (:meth:`write`), the declaration of its whole state (:meth:`spec`: the base state's plus the
    learner's ``_state_spec``) and the checks a loaded file or a live state pass. Holds nothing:
    the state is the learner's attributes; a learner whose file needs more (``auto`` packs its
    members) gives a subclass."""

    def write(self, learner, fh: BinaryIO) -> None:
        """The model file's bytes into an open binary file (what :meth:`Learner.save` writes
        atomically; a :class:`okl.MultiClass` file and an ``okl stream`` checkpoint hold them as
        entries)."""
        from okl._version import __version__

        learner.events.check_usable(learner)  # (a state a numerical failure left is not written)
        self.check_declared(learner)
        meta: dict[str, Any] = {
            "format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "okl_version": __version__,
            "learner": type(learner).__module__ + "." + type(learner).__qualname__, "name": learner.name,
            "params": {k: encode_param(v) for k, v in learner.get_params().items()},
            "dim": learner.dim_, "n_seen": learner.n_seen_, "state": {},
        }
        arrays: dict[str, np.ndarray] = {}
        if learner.dim_ is not None:
            for attr in state_attrs(learner):
                value = getattr(learner, attr)
                if isinstance(value, np.ndarray):
                    arrays["state__" + attr] = value
                    meta["state"][attr] = {"array": True}
                elif isinstance(value, np.random.Generator):
                    meta["state"][attr] = {"rng": value.bit_generator.state}
                else:
                    meta["state"][attr] = {"value": encode_param(value)}
        if map_header(learner) is not None:  # the levels of categorical columns (okl.categories)
            meta["categorical_map"] = map_header(learner)
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        np.savez(fh, **arrays)

    #: learned attributes (trailing underscore) a model file holds outside ``_state_attrs``: the
    #: header's input width, round count and the levels of categorical columns
    HEADER_STATE = ("dim_", "n_seen_", "categorical_map_")

    def check_declared(self, learner) -> None:
        """Refuse (:class:`StateError` naming it) a learned attribute (a public name with a
        trailing underscore, scikit-learn's convention) that the learner's declaration does not
        list (``_state_attrs`` and the base state): a file written without it would load and
        then fail, or continue differently."""
        declared = {*_BASE_STATE, *learner._state_attrs, *self.HEADER_STATE}
        undeclared = sorted(a for a in vars(learner) if a.endswith("_") and not a.startswith("_") and a not in declared)
        if undeclared:
            raise StateError(undeclared[0], f"is state that {type(learner).__name__} does not declare: a model file "
                             "would be written without it; list it in _state_attrs and _state_spec "
                             "(docs/adding-a-learner.md), or name it without the trailing underscore if it is "
                             "not state" + (f" (also undeclared: {', '.join(undeclared[1:])})" if undeclared[1:] else ""))

    def spec(self, learner) -> StateSpec:
        """The declaration of the learner's whole state: the base state's (:func:`_base_spec`)
        plus, once started, its own (``_state_spec``), which must declare every ``_state_attrs``."""
        base = _base_spec(learner)
        own = learner._state_spec() if learner.started_ else None
        if own is None:
            return base
        missing = set(learner._state_attrs) - set(own.fields)
        if missing:
            raise StateError(sorted(missing)[0], f"is not declared in {type(learner).__name__}._state_spec")
        return StateSpec(fields={**base.fields, **own.fields}, sizes={**base.sizes, **own.sizes},
                         groups=base.groups + tuple(own.groups), rules=base.rules + tuple(own.rules))

    def check_base_values(self, learner) -> None:
        """The base state's values that the declaration cannot say: the generator, the kernel and
        the stage (the width window or started)."""
        if not isinstance(learner.started_, (bool, np.bool_)):
            raise StateError("started_", f"must be True or False, got {learner.started_!r}")
        if not isinstance(learner._rng, np.random.Generator):
            raise StateError("_rng", "must be a random generator")
        kernel = getattr(learner, "kernel_", None)
        if kernel is not None and not isinstance(kernel, Kernel):
            raise StateError("kernel_", f"must be a kernel, got {type(kernel).__name__}")
        if learner.started_:
            if kernel is None and "kernel" in param_names(learner):
                raise StateError("kernel_", "is missing although the learner has started")
        else:
            if not learner.inputs.uses_window(learner):
                raise StateError("started_", "is False but the learner chooses neither its width nor its input scale")
            if kernel is not None and learner.inputs.chooses_width(learner):
                raise StateError("kernel_", "is set inside the width window")
            if not 0 <= learner.n_seen_ < WIDTH_WINDOW:
                raise StateError("n_seen", f"= {learner.n_seen_} inside the width window of {WIDTH_WINDOW} rows")

    def layout_checker(self, learner) -> "_SpecChecker | None":
        """The checker of the learner's state against :meth:`spec` (read-only arrays made writable
        copies first); None before the first example."""
        if learner.dim_ is None:
            return None
        values = {}
        for attr in state_attrs(learner):
            value = getattr(learner, attr, None)
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                value = _writable(value)
                setattr(learner, attr, value)
            values[attr] = value
        return _SpecChecker(learner, self.spec(learner), values)


#: the state I/O of every learner that does not give its own
STATE_IO = StateIO()


def _npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, what: str):
    """(shape, dtype, data bytes) of a ``.npy`` member, from its header only."""
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ModelFileError(f"{path}: array {what}: unsupported .npy version {version}")
        offset = fh.tell()
    if dtype.hasobject:
        raise ModelFileError(f"{path}: not a readable okl model file (array {what} holds Python "
                             "objects, i.e. pickled data, which okl never loads)")
    if dtype.kind not in "biuf" or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ModelFileError(f"{path}: not a readable okl model file (array {what} has the "
                             f"unsupported type {dtype} {shape})")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes != info.file_size - offset:
        raise ModelFileError(f"{path}: array {what}: its header declares {nbytes} bytes of data but "
                             f"the file holds {max(info.file_size - offset, 0)}")
    return _Header(shape, dtype), nbytes


def _npy_read(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    with zf.open(info) as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _load_zip(cls, zf: zipfile.ZipFile, path: str) -> "Learner":
    from okl._version import __version__

    if cut_short(zf):
        raise ModelFileError(f"{path}: truncated or damaged (the zip directory at its end is not the "
                             "file's own: a zip stored inside it)")
    members = {info.filename[:-4]: info for info in zf.infolist() if info.filename.endswith(".npy")}
    if "__meta__" not in members:
        raise ModelFileError(f"{path}: no okl model header")
    head, nbytes = _npy_header(zf, members["__meta__"], path, "__meta__")
    if head.dtype != np.uint8 or len(head.shape) != 1 or nbytes > MAX_HEADER_BYTES:
        raise ModelFileError(f"{path}: the okl model header must be at most {MAX_HEADER_BYTES} bytes "
                             f"of text, got a {head.dtype} array of shape {head.shape}")
    try:
        meta = json.loads(_npy_read(zf, members["__meta__"]).tobytes().decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: no okl model header ({exc})") from None
    check_header(meta, path, "an okl model file", MODEL_FORMAT, "model", MODEL_FORMAT_VERSION)
    if meta.get("okl_version") != __version__:
        raise ModelFileError(f"{path}: written by okl {meta.get('okl_version')}, this is okl "
                             f"{__version__}; state layouts may differ between versions")
    name = meta.get("name")
    target = lookup(name) if isinstance(name, str) else None
    if target is None:
        raise ModelFileError(f"{path}: unknown learner {name!r}")
    # (cls None: any learner; a learner's categorical form loads files of its class)
    if cls is not None and not issubclass(target, getattr(cls, "plain_class", cls)):
        raise ModelFileError(f"{path}: holds a {target.__name__} ({name}), not a {cls.__name__}")
    # A header that passed the checks above but does not fit the learner (edited or forged
    # files) must still fail with ModelFileError, and may only set the learner's own state.
    try:
        params = {k: _decode_param(v) for k, v in meta["params"].items()}
        learner = target(**params)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ModelFileError(f"{path}: invalid hyperparameters for {target.__name__} ({exc})") from None
    learner.name = name
    try:
        if meta["dim"] is not None:
            _load_state(learner, meta, zf, members, path)
        load_map(learner, meta)
    except (ModelFileError, MemoryError):
        raise
    except StateError as exc:
        raise ModelFileError(f"{path}: {target.__name__}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ModelFileError(f"{path}: invalid state for {target.__name__} ({exc!r})") from None
    return learner


def _load_state(learner: "Learner", meta: dict, zf: zipfile.ZipFile, members: dict,
                path: str) -> None:
    target = type(learner)
    for key, high in (("dim", MAX_DIM), ("n_seen", MAX_ROUNDS)):
        value = meta[key]
        if isinstance(value, bool) or not isinstance(value, int) or not (key != "dim" or value >= 1) \
                or not 0 <= value <= high:
            raise StateError(key, f"must be an integer in [{1 if key == 'dim' else 0}, {high}], got {value!r}")
    learner.dim_ = int(meta["dim"])
    learner.n_seen_ = int(meta["n_seen"])
    state = meta["state"]
    if not isinstance(state, dict) or not all(isinstance(e, dict) for e in state.values()):
        raise StateError("state", "must map each attribute to its entry")
    started = state.get("started_", {}).get("value") is True
    expected = {*_BASE_STATE, *(target._state_attrs if started else ())}
    if "n_outputs_" in expected and "n_outputs_" not in state:
        state = {**state, "n_outputs_": {"value": 0}}  # a file from before K outputs: one output
    for attr, value in getattr(target, "_state_added", {}).items():  # (files from before they were)
        if attr in expected and attr not in state:
            state = {**state, attr: {"value": value}}
    if set(state) != expected:
        raise ModelFileError(
            f"{path}: state attributes {sorted(state)} do not match "
            f"{target.__name__}'s {sorted(expected)}")
    values: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    for attr, entry in state.items():
        if "array" in entry:
            info = members.get("state__" + attr)
            if info is None:
                raise ModelFileError(f"{path}: state array {attr!r} is missing")
            values[attr], sizes[attr] = _npy_header(zf, info, path, attr)
        elif "rng" in entry:
            rng = np.random.default_rng()
            rng.bit_generator.state = entry["rng"]
            values[attr] = rng
        elif "value" in entry:
            values[attr] = _decode_param(entry["value"])
        else:
            raise StateError(attr, "has neither an array, a generator nor a value")
    for attr in _BASE_STATE:
        if not isinstance(values[attr], _Header):
            setattr(learner, attr, values[attr])
    learner.files.check_base_values(learner)
    for attr, value in values.items():
        if not isinstance(value, _Header):
            setattr(learner, attr, value)
    spec = learner.files.spec(learner)
    checker = _SpecChecker(learner, spec, values)
    checker.layout()  # shapes from the headers: nothing large is read before this passes
    undeclared = sum(n for a, n in sizes.items() if a not in spec.fields)
    if undeclared > _available_memory():
        raise ModelFileError(f"{path}: its arrays declare {undeclared} bytes, more than the "
                             "memory available")
    for attr, value in values.items():
        if isinstance(value, _Header):
            decl = spec.fields.get(attr)
            array = _npy_read(zf, members["state__" + attr])
            if array.shape != value.shape or array.dtype != value.dtype:
                raise StateError(attr, "changed between its header and its data")
            values[attr] = _writable(array, getattr(decl, "dtype", None))
            setattr(learner, attr, values[attr])
    checker.contents()
