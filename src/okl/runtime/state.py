"""State declarations (:class:`StateSpec` and its fields) and the checker that model files and
:meth:`Learner.check_state` run (see :mod:`okl.runtime.base`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from okl.kernels import Kernel, kernel_from_dict
from okl.losses import Loss, get_loss


MODEL_FORMAT = "okl-model"
MODEL_FORMAT_VERSION = 1
#: most classes (outputs) a model may hold (a forged count is refused before any array is read)
MAX_CLASSES = 100_000


class ModelFileError(ValueError):
    """A model file that cannot be loaded: damaged, foreign, or from an incompatible version."""



def encode_param(value):
    if isinstance(value, Kernel):
        return {"__kernel__": value.to_dict()}
    if isinstance(value, Loss):
        return {"__loss__": value.name}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode_param(value):
    if isinstance(value, dict) and "__kernel__" in value:
        return kernel_from_dict(value["__kernel__"])
    if isinstance(value, dict) and "__loss__" in value:
        return get_loss(value["__loss__"])
    return value


#: state every learner saves: its random generator, the kernel in use (chosen or given), whether
#: the learner's own state exists yet, and the rows buffered inside the width window
_BASE_STATE = ("_rng", "kernel_", "started_", "warmup_X_", "warmup_y_", "target_sum_", "scale_center_",
               "scale_spread_", "calibration_")

_PLAIN = (int, float, bool)


def state_attrs(learner) -> tuple:
    """The attributes of the learner's saved state as it is now: the base state's
    (:data:`_BASE_STATE`) and, once started, its own (``_state_attrs``)."""
    return _BASE_STATE + tuple(learner._state_attrs) if learner.started_ else _BASE_STATE


def layout_key(learner) -> list | None:
    """What a layout check of the learner's state depends on: its width, stage and count, and for
    each state attribute its value (None or a number) or its identity (an array: and whether it is
    writable); None before the first example (nothing to check). O(attributes)."""
    if learner.dim_ is None:
        return None
    key = [learner.dim_, learner.started_, learner.n_seen_]
    for attr in state_attrs(learner):
        v = getattr(learner, attr, None)
        if v is None or type(v) in _PLAIN:
            key.append((type(v), v))
        elif isinstance(v, np.ndarray):
            key.append((id(v), v.flags.writeable))
        else:
            key.append(id(v))
    return key


# --------------------------------------------------------------------------------------------
# State declarations (checked by Learner.load and Learner.check_state)
#
# A learner declares its saved state once, in ``_state_spec()``: every attribute of
# ``_state_attrs`` maps to an :class:`Arr` (an array: shape, dtype, finiteness, element range),
# a :class:`Num` (an int / float / bool: range), a :class:`Seq` (a list of ints) or
# :class:`Opaque` (not checked). Shapes and bounds are numbers, or names of *sizes* declared in
# :class:`StateSpec.sizes` (each with its own range); a size is fixed by the first array that
# uses it and every later use must agree. A bound may also be the name of a scalar field checked
# before it, or a tuple (the minimum of its entries). ``groups`` lists attributes that are None
# together (a stage not reached yet); ``rules`` are extra (predicate, field, message) checks on
# the loaded learner. The check runs in two passes: the layout (shapes, dtypes, scalars) from
# the ``.npy`` headers, *before* any array is read (so a header or zip bomb is refused without
# allocating), then the contents (finiteness, element ranges, rules). A learner without a
# declaration (``_state_spec`` returns None) gets only the base checks (its generator, kernel,
# width window, ``dim`` and ``n_seen``) and nothing extra is refused.
#
# Example (KOGD)::
#
#     def _state_spec(self):
#         return StateSpec(sizes={"cap": (1, ...)}, fields={
#             "SV_": Arr(("cap", "dim")), "alpha_": Arr(("cap",)),
#             "m_": Num(int, 0, ("cap", "n_seen"))})
#
# ``"dim"`` and ``"n_seen"`` are always available as sizes.

#: largest JSON header accepted in a model file (the arrays are checked against the declaration)
MAX_HEADER_BYTES = 64 << 20
#: largest input dimension a model file may declare
MAX_DIM = (1 << 31) - 1
#: largest round count a model file may declare
MAX_ROUNDS = 1 << 62


@dataclass(frozen=True)
class Arr:
    """A state array: ``shape`` (ints or size names), ``dtype``, all entries finite (unless
    ``finite=False``, e.g. NaN placeholders), entries within [low, high] (bounds as in
    :class:`Num`), or None when ``optional``."""

    shape: tuple
    dtype: Any = np.float64
    finite: bool = True
    low: Any = None
    high: Any = None
    optional: bool = False


@dataclass(frozen=True)
class Num:
    """A state number of type ``kind`` (int, float or bool) in [low, high], or None when
    ``optional``."""

    kind: type = int
    low: Any = None
    high: Any = None
    optional: bool = False


@dataclass(frozen=True)
class Seq:
    """A list of ints, of length ``length`` (an int or a size name), each in [low, high]."""

    length: Any = None
    low: Any = None
    high: Any = None


@dataclass(frozen=True)
class Opaque:
    """A state attribute that is saved but not checked (any JSON value or array)."""


@dataclass
class StateSpec:
    """One learner's state declaration (see the comment above :class:`Arr`)."""

    fields: dict[str, Any]
    sizes: dict[str, tuple] = field(default_factory=dict)
    groups: tuple = ()
    rules: tuple = ()


class _Header:
    """Shape and dtype of an array not read yet (from its ``.npy`` header)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


class StateError(ValueError):
    """A state that does not fit its declaration; ``field`` names the attribute."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"state {field_name}: {message}")
        self.field = field_name


#: the base state's fields in the order they are checked (the input map's and the heads' interleaved
#: as they were declared together)
_BASE_ORDER = ("warmup_X_", "warmup_y_", "target_sum_", "calibration_", "scale_center_", "scale_spread_")


def _base_spec(learner: "Learner") -> StateSpec:
    """The declaration of the state every learner saves (:data:`_BASE_STATE`): its input map's
    (:meth:`okl.runtime.inputs.InputMap.spec`) and its heads' (:meth:`okl.runtime.heads.Heads.spec`)."""
    inputs, heads = learner.inputs.spec(learner), learner.heads.spec(learner)
    fields = {**inputs.fields, **heads.fields}
    return StateSpec(fields={k: fields[k] for k in _BASE_ORDER}, sizes={**inputs.sizes, **heads.sizes},
                     groups=tuple(inputs.groups) + tuple(heads.groups), rules=tuple(inputs.rules) + tuple(heads.rules))


class _SpecChecker:
    """Checks one learner's state against a :class:`StateSpec` (layout, then contents)."""

    def __init__(self, learner: "Learner", spec: StateSpec, values: dict[str, Any]):
        self.learner, self.spec, self.values = learner, spec, values
        self.bound: dict[str, int] = {"dim": int(learner.dim_), "n_seen": int(learner.n_seen_)}

    def resolve(self, bound, what: str):
        """A bound: None, a number, a size or scalar-field name, or a tuple (their minimum)."""
        if bound is None or bound is Ellipsis:
            return None
        if isinstance(bound, tuple):
            vals = [v for v in (self.resolve(b, what) for b in bound) if v is not None]
            return min(vals) if vals else None
        if isinstance(bound, str):
            if bound in self.bound:
                return self.bound[bound]
            value = self.values.get(bound)
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                return value
            raise StateError(what, f"bound {bound!r} is not known yet (declaration error)")
        return bound

    def bind(self, size: str, value: int, attr: str) -> None:
        if size in self.bound:
            if self.bound[size] != value:
                raise StateError(attr, f"size {size} is {value} here but {self.bound[size]} elsewhere")
            return
        low, high = self.spec.sizes.get(size, (0, None))
        low, high = self.resolve(low, attr), self.resolve(high, attr)
        if (low is not None and value < low) or (high is not None and value > high):
            raise StateError(attr, f"size {size} = {value} outside [{low}, {'inf' if high is None else high}]")
        self.bound[size] = value

    def layout(self) -> None:
        for group in self.spec.groups:
            present = [a for a in group if self.values.get(a) is not None]
            if present and len(present) != len(group):
                missing = next(a for a in group if self.values.get(a) is None)
                raise StateError(missing, f"is None while {present[0]} is set (they belong together)")
        for attr, decl in self.spec.fields.items():
            value = self.values.get(attr)
            if isinstance(decl, Opaque):
                continue
            if isinstance(decl, Arr):
                self._array_layout(attr, decl, value)
            elif isinstance(decl, Num):
                self._number(attr, decl, value)
            elif isinstance(decl, Seq):
                self._seq(attr, decl, value)

    def _array_layout(self, attr, decl: Arr, value) -> None:
        if value is None:
            if decl.optional:
                return
            raise StateError(attr, "is missing (None)")
        if not isinstance(value, (np.ndarray, _Header)):
            raise StateError(attr, f"must be an array, got {type(value).__name__}")
        if value.dtype != np.dtype(decl.dtype):
            raise StateError(attr, f"must be {np.dtype(decl.dtype).name}, got {value.dtype}")
        if len(value.shape) != len(decl.shape):
            raise StateError(attr, f"must have {len(decl.shape)} dimension(s), got shape {value.shape}")
        for n, want in zip(value.shape, decl.shape):
            if isinstance(want, str):
                self.bind(want, int(n), attr)
            elif n != want:
                raise StateError(attr, f"has shape {value.shape}, expected {self.shape_text(decl.shape)}")

    def shape_text(self, shape) -> str:
        return "(" + ", ".join(str(self.bound.get(s, s)) if isinstance(s, str) else str(s) for s in shape) + ")"

    def _number(self, attr, decl: Num, value) -> None:
        if value is None:
            if decl.optional:
                return
            raise StateError(attr, "is missing (None)")
        if decl.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise StateError(attr, f"must be True or False, got {value!r}")
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise StateError(attr, f"must be a number, got {type(value).__name__}")
        if decl.kind is int and not (isinstance(value, (int, np.integer))
                                     or (np.isfinite(value) and float(value).is_integer())):
            raise StateError(attr, f"must be an integer, got {value!r}")
        if not np.isfinite(value):
            raise StateError(attr, f"must be finite, got {value!r}")
        self._in_range(attr, value, decl.low, decl.high)

    def _in_range(self, attr, value, low, high) -> None:
        lo, hi = self.resolve(low, attr), self.resolve(high, attr)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise StateError(attr, f"= {value!r} outside [{'-inf' if lo is None else lo}, "
                                   f"{'inf' if hi is None else hi}]")

    def _seq(self, attr, decl: Seq, value) -> None:
        if not isinstance(value, list):
            raise StateError(attr, f"must be a list, got {type(value).__name__}")
        if decl.length is not None:
            if isinstance(decl.length, str):
                self.bind(decl.length, len(value), attr)
            elif len(value) != decl.length:
                raise StateError(attr, f"has {len(value)} entries, expected {decl.length}")
        lo, hi = self.resolve(decl.low, attr), self.resolve(decl.high, attr)
        for v in value:
            if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (
                    hi is not None and v > hi):
                raise StateError(attr, f"entry {v!r} is not an integer in [{lo}, {hi}]")

    def contents(self) -> None:
        for attr, decl in self.spec.fields.items():
            value = self.values.get(attr)
            if not isinstance(decl, Arr) or not isinstance(value, np.ndarray) or value.size == 0:
                continue
            if decl.finite and value.dtype.kind == "f" and not np.isfinite(value).all():
                raise StateError(attr, "has a non-finite entry (NaN or infinity)")
            lo, hi = self.resolve(decl.low, attr), self.resolve(decl.high, attr)
            with np.errstate(invalid="ignore"):
                if lo is not None and (value < lo).any():
                    raise StateError(attr, f"has an entry {value.min()!r} below {lo}")
                if hi is not None and (value > hi).any():
                    raise StateError(attr, f"has an entry {value.max()!r} above {hi}")
        for predicate, attr, message in self.spec.rules:
            try:
                ok = bool(predicate(self.learner))
            except (ValueError, TypeError, IndexError, AttributeError, ArithmeticError):
                ok = False
            if not ok:
                raise StateError(attr, message)


_F64 = np.dtype(np.float64)
