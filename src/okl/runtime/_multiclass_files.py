"""The model files of :class:`okl.runtime.multiclass.MultiClass` (:meth:`~MultiClass.save` /
:meth:`~MultiClass.load`; no pickle): one zip holding ``multiclass.json`` and the okl model file
of the K-output learner (``core.npz``) or one per head (``head<k>.npz``), written and read here,
every field of a file read checked before it is used."""

from __future__ import annotations

import io
import json
import math
import zipfile

import numpy as np

from okl.runtime._multiclass_core import _has_k_outputs, _learner_params
from okl.runtime._multiclass_temperature import A_MAX, A_MIN
from okl.runtime.base import Learner, ModelFileError
from okl.runtime.modelfile import check_header, load_from, open_model_zip, zip_entry
from okl.runtime.state import MAX_CLASSES, MAX_ROUNDS

#: the format name and version written in ``multiclass.json``
FORMAT, VERSION = "okl-multiclass", 1
_EPOCH = (1980, 1, 1, 0, 0, 0)


def is_multiclass_file(path) -> bool:
    """Whether ``path`` (a path or a seekable binary file) is meant as a :meth:`MultiClass.save`
    file: a zip holding ``multiclass.json``, ``core.npz`` or ``head0.npz`` (its directory only is
    read; :meth:`MultiClass.load` then says what is wrong with a damaged one)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return not {"multiclass.json", "core.npz", "head0.npz"}.isdisjoint(zf.namelist())
    except (OSError, EOFError, ValueError, zipfile.BadZipFile):
        return False


def write_multiclass_model(multiclass, fh) -> None:
    """The bytes of ``multiclass``'s :meth:`MultiClass.save` file into an open binary file
    (:meth:`MultiClass._write_model`: what ``save`` writes atomically; an ``okl stream``
    checkpoint holds them as its model entry)."""
    for label in multiclass.classes_:
        if not isinstance(label, (str, int, float, bool)):
            raise ValueError(f"class label {label!r} cannot be saved: model files hold str, int, float "
                             "or bool labels")
    meta = {"format": FORMAT, "version": VERSION, "learner": multiclass.learner,
            "params_keys": sorted(multiclass.params), "classes": list(multiclass.classes_),
            "signs": list(multiclass.signs_) if multiclass.core_ is None else [1.0] * len(multiclass.classes_),
            "fixed": multiclass.fixed, "n_seen": int(multiclass.n_seen_), "random_state": multiclass.random_state,
            "temperature": [float(v) for v in multiclass.temperature_], "native": multiclass.core_ is not None}
    models = [("core", multiclass.core_)] if multiclass.core_ is not None else [
        (f"head{k}", head) for k, head in enumerate(multiclass.heads_)]
    # fixed entry times: the same state gives the same bytes (okl stream's resumed checkpoints)
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("multiclass.json", _EPOCH), json.dumps(meta))
        for name, model in models:
            buffer = io.BytesIO()
            model.files.write(model, buffer)
            zf.writestr(zipfile.ZipInfo(f"{name}.npz", _EPOCH), buffer.getvalue())


def read_multiclass_model(cls, source, path: str):
    """:meth:`MultiClass.load` from ``source`` (a path or a seekable binary file, e.g. the model
    entry of an ``okl stream`` checkpoint), named ``path`` in every error; ``cls`` is the class
    built (:class:`MultiClass` or a subclass)."""
    def bad(what: str) -> ModelFileError:
        return ModelFileError(f"{path}: {what}")

    zf, entries = open_model_zip(source, path, "an okl multi-class model file (MultiClass.save)")
    with zf:
        info = entries.get("multiclass.json")
        if info is None:
            single = "__meta__.npy" in entries
            raise bad("no multiclass.json: not an okl multi-class model file" + (
                " (it holds one learner: load it with okl.Learner.load)" if single else ""))
        if info.file_size > 1 << 24:
            raise bad("multiclass.json is larger than 16 MiB")
        try:
            meta = json.loads(zip_entry(zf, info, path).read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise bad(f"multiclass.json is not valid JSON ({str(exc)[:200]})") from None
        except (OSError, EOFError) as exc:
            raise bad(f"multiclass.json cannot be read ({exc})") from None
        check_header(meta, path, "an okl multi-class model file", FORMAT, "multi-class model",
                     VERSION, version_key="version")
        meta, native, n_seen = _checked_meta(meta, bad)
        classes, signs = meta["classes"], meta["signs"]
        names = ["core"] if native else [f"head{k}" for k in range(len(classes))]
        missing = [n for n in names if f"{n}.npz" not in entries]
        if missing:
            raise bad(f"{missing[0]}.npz is missing")
        extra = sorted(set(entries) - {"multiclass.json"} - {f"{n}.npz" for n in names})
        if extra:
            raise bad(f"unexpected entry {extra[0]!r} (a file with {len(classes)} classes holds "
                      f"multiclass.json and {', '.join(n + '.npz' for n in names[:3])}{', ...' if len(names) > 3 else ''})")
        heads = []
        for name in names:
            entry = entries[f"{name}.npz"]
            try:
                heads.append(load_from(zip_entry(zf, entry, path), f"{path}: {name}.npz"))
            except (OSError, EOFError) as exc:
                raise bad(f"{name}.npz cannot be read ({exc})") from None
    return _assemble(cls, meta, heads, native, n_seen, bad)


def _checked_meta(meta, bad) -> tuple[dict, bool, int]:
    """``multiclass.json``'s fields, each checked (see :meth:`MultiClass.load`; its format and
    version by :func:`okl.runtime.modelfile.check_header` before)."""
    classes, signs = meta.get("classes"), meta.get("signs")
    if not isinstance(classes, list) or not isinstance(signs, list) or len(classes) != len(signs) \
            or len(classes) > MAX_CLASSES:
        raise bad(f"classes and signs must be lists of equal length <= {MAX_CLASSES}")
    if any(isinstance(c, (list, dict)) or c is None or (isinstance(c, float) and not math.isfinite(c))
           for c in classes) or len(set(classes)) != len(classes):
        raise bad("classes must be distinct str, int, float or bool labels (NaN and infinities are not labels)")
    if any(s not in (1.0, -1.0) for s in signs):
        raise bad("signs must be +1 or -1")
    n_seen, rs = meta.get("n_seen"), meta.get("random_state")
    if isinstance(n_seen, bool) or not isinstance(n_seen, int) or not 0 <= n_seen <= MAX_ROUNDS:
        raise bad(f"n_seen must be an integer in [0, {MAX_ROUNDS}], got {str(n_seen)[:40]}")
    if not (rs is None or (isinstance(rs, int) and not isinstance(rs, bool) and 0 <= rs < 1 << 63)):
        raise bad(f"random_state must be an integer in [0, 2^63) or null, got {str(rs)[:40]}")
    temp = meta.get("temperature")
    if not (isinstance(temp, list) and len(temp) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in temp)
            and A_MIN <= temp[0] <= A_MAX and 1.0 <= temp[1] < math.inf):
        raise bad(f"temperature must be [a, H] with a in [{A_MIN}, {A_MAX}] and H >= 1 finite")
    native = meta.get("native", False)
    if not isinstance(native, bool):
        raise bad("native must be true or false")
    if not isinstance(meta.get("learner"), str):
        raise bad("learner must be a registered learner name")
    return meta, native, n_seen


def _assemble(cls, meta: dict, heads: list, native: bool, n_seen: int, bad):
    """The MultiClass of a checked ``multiclass.json`` and its loaded heads (or core), each
    matched against the header: learner name, task, outputs, dimensions and counters."""
    classes, signs, name, rs = meta["classes"], meta["signs"], meta["learner"], meta.get("random_state")
    core = heads.pop() if native else None
    for k, head in enumerate([core] if native else heads):
        entry = "core.npz" if native else f"head{k}.npz"
        if head.task != "classification":
            raise bad(f"{entry} holds a {head.name!r} learner with the regression loss "
                      f"{getattr(head, 'loss', None)!r}; a multi-class model's learners classify")
        if head.n_seen_ > n_seen or (native and head.n_seen_ != n_seen):
            raise bad(f"{entry} has learned {head.n_seen_} events, but multiclass.json says n_seen = "
                      f"{n_seen}{'' if native else ' in all'}")
    if native:
        if core.name != "auto" or core.n_outputs_ != len(classes) or not _has_k_outputs(core):
            raise bad(f"core.npz must be an auto learner with {len(classes)} outputs, got a "
                      f"{core.name!r} with {core.n_outputs_}")
        specs = core.member_specs()
        if name != "auto" and len(specs) != 1:
            raise bad(f"core.npz holds an auto pool of {len(specs)} members, but multiclass.json names "
                      f"the single learner {name!r} (whose core is a pool of one member)")
        try:
            params = _learner_params(core, name)
        except (ValueError, TypeError) as exc:
            raise bad(f"core.npz does not hold a {name!r} learner ({exc})") from None
    elif not heads:
        params = {}
    else:
        params = {k: v for k, v in heads[0].get_params().items() if k != "random_state"}
        for k, h in enumerate(heads):
            if h.name != name:
                raise bad(f"head{k}.npz holds a {h.name!r} learner, but multiclass.json names {name!r}")
        dims = {h.dim_ for h in heads if h.dim_ is not None}
        if len(dims) > 1:
            raise bad(f"the heads have different input dimensions {sorted(dims)}")
    try:
        out = cls(name, params, random_state=rs)
    except ValueError as exc:
        raise bad(str(exc)) from None
    out.fixed = bool(meta.get("fixed"))
    if native and out.core_ is None:
        raise bad(f"native is true, but a {name!r} learner with these parameters has no K-output form")
    if not native:
        out.core_ = None  # heads (a single learner turned multi-class by from_binary, or no K-output form)
    if native:
        core._raw_member = name != "auto"
        out.core_ = core
        for label in classes:
            out._add(label)
    for label, head, sign in zip(classes, heads, signs):
        out._add(label, head, float(sign))
    out.n_seen_ = n_seen
    out.temperature_ = np.array(meta["temperature"], dtype=np.float64)
    return out
