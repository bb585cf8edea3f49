"""Grid values of a sweep: parsing ``--grid NAME=VALUES`` (:func:`parse_grid`) and one value list
(:func:`parse_values`; ``okl sweep --grid`` and ``--seeds``), for :mod:`okl.eval.sweep`.

Forms of VALUES:

``1e-3,0.1,1``            a list (numbers, or words such as ``auto``)
``100,150,...,500``       a progression: written as integers -> arithmetic; otherwise geometric
                          when the last value is a whole number of ratios away (``1e-5,1e-4,...,1``),
                          else arithmetic (``0.1,0.2,...,1``)
``lo:step:hi``            arithmetic, ends included (``0:0.25:1``)
``B^lo:step:hi``          powers of B with exponents lo:step:hi (``2^-5:0.5:7``, SkeGD's widths)

>>> parse_values("100,150,...,300")
[100, 150, 200, 250, 300]
>>> parse_values("1e-3,1e-2,...,1")
[0.001, 0.01, 0.1, 1.0]
>>> parse_values("2^-1:0.5:1")
[0.5, 0.7071067811865476, 1.0, 1.4142135623730951, 2.0]
"""

from __future__ import annotations

import math
import re
from typing import Sequence

_INT = re.compile(r"^[+-]?\d+$")


def _scalar(token: str):
    token = token.strip()
    if _INT.match(token):
        return int(token)
    try:
        return float(token)
    except ValueError:
        pass
    low = token.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    return token


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _range(lo: float, step: float, hi: float, text: str) -> list[float]:
    if step == 0 or (hi - lo) / step < -1e-9:
        raise ValueError(f"grid {text!r}: step {step} does not lead from {lo} to {hi}")
    count = int(math.floor((hi - lo) / step + 1e-9)) + 1
    if count > 100_000:
        raise ValueError(f"grid {text!r}: {count} values; too many")
    return [lo + i * step for i in range(count)]


def _progression(first, second, last, text: str) -> list:
    if all(isinstance(v, int) for v in (first, second, last)):
        step = second - first
        if step == 0 or (last - first) % step or (last - first) // step < 0:
            raise ValueError(f"grid {text!r}: {last} is not reached from {first} in steps of {step}")
        return list(range(first, last + (1 if step > 0 else -1), step))
    a, b, z = float(first), float(second), float(last)
    if a > 0 and b > 0 and z > 0 and not _close(a, b):
        n = math.log(z / a) / math.log(b / a)
        if n > -1e-9 and _close(n, round(n)):
            ratio = b / a
            return [float(f"{a * ratio ** i:.12g}") for i in range(int(round(n)) + 1)]
    if not _close(a, b):
        n = (z - a) / (b - a)
        if n > -1e-9 and _close(n, round(n)):
            return [float(f"{a + i * (b - a):.12g}") for i in range(int(round(n)) + 1)]
    raise ValueError(f"grid {text!r}: {last} is reached from {first}, {second} neither geometrically "
                     "nor arithmetically")


def parse_values(text: str) -> list:
    """Values of one grid entry (forms in the module docstring)."""
    text = text.strip()
    m = re.match(r"^([0-9.eE+-]+)\^([^:]+):([^:]+):([^:]+)$", text)
    if m:
        base = float(m.group(1))
        exps = _range(float(m.group(2)), float(m.group(3)), float(m.group(4)), text)
        return [float(base ** e) for e in exps]
    if text.count(":") == 2 and "," not in text:
        lo, step, hi = (float(p) for p in text.split(":"))
        return [float(f"{v:.12g}") for v in _range(lo, step, hi, text)]
    parts = [p.strip() for p in text.split(",")]
    if "..." in parts:
        i = parts.index("...")
        if i < 2 or i != len(parts) - 2:
            raise ValueError(f"grid {text!r}: write a progression as FIRST,SECOND,...,LAST")
        head = [_scalar(p) for p in parts[: i - 2]]
        return head + _progression(_scalar(parts[i - 2]), _scalar(parts[i - 1]), _scalar(parts[-1]), text)
    if any(p == "" for p in parts):
        raise ValueError(f"grid {text!r}: empty value")
    return [_scalar(p) for p in parts]


def parse_grid(items: Sequence[str] | None) -> dict[str, list]:
    """``["eta=1e-3,1e-2", "sigma=auto"]`` -> ``{"eta": [0.001, 0.01], "sigma": ["auto"]}``."""
    grid: dict[str, list] = {}
    for item in items or []:
        key, sep, values = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"--grid expects NAME=VALUES, got {item!r}")
        if key in grid:
            raise ValueError(f"--grid {key} given twice")
        # every problem of a value list names the option and the entry (not a bare float() error)
        try:
            grid[key] = parse_values(values)
        except OverflowError:
            raise ValueError(f"--grid {item}: a value is beyond the float range (about 1.8e308)") from None
        except ValueError as exc:
            text = str(exc)
            raise ValueError(f"--grid {item}: " + (text if text.startswith("grid ") else
                                                   f"not a number, a list or a range ({text})")) from None
        if key == "budget":
            from okl._validation import check_state_memory

            for b in grid[key]:  # before any cell allocates it, as --budget is checked
                if isinstance(b, (int, float)) and not isinstance(b, bool) and 1 <= b < float("inf"):
                    try:
                        check_state_memory(int(b), None)
                    except ValueError as exc:
                        raise ValueError(f"--grid {item}: {exc}") from None
        if not grid[key]:
            raise ValueError(f"--grid {key}: no values")
    return grid


__all__ = ["parse_grid", "parse_values"]
