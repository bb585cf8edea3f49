"""A small progress line on stderr (done / total, rate, ETA) for long runs."""

from __future__ import annotations

import sys
import time

from okl._jit import compile_seconds


class Progress:
    """``with Progress(total, "label") as p: ... p.advance()``; silent when ``enabled`` is False.

    Redraws at most every 0.2 s; on a non-terminal stream it prints one line per 10 % instead. The
    rate and ETA leave out the seconds this process spent compiling (``eta=False``: no ETA, for
    steps of uneven length).
    """

    def __init__(self, total: int, label: str = "", enabled: bool = True, stream=None, unit: str = "runs",
                 eta: bool = True):
        self.total, self.label, self.enabled, self.unit = max(int(total), 0), label, enabled, unit
        self.eta = eta
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.start = time.perf_counter()
        self._compiled0 = compile_seconds()
        self._last = 0.0
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_decile = -1

    def __enter__(self):
        self._draw(force=True)
        return self

    def __exit__(self, *exc):
        self._draw(force=True)
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()

    def set_label(self, label: str) -> None:
        self.label = label

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._draw()

    def line(self) -> str:
        # (seconds spent compiling okl's code are not working time: a rate and ETA from them would
        # promise minutes for a run that takes seconds once compiled)
        elapsed = time.perf_counter() - self.start - (compile_seconds() - self._compiled0)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 and self.eta else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta_s = f"{eta:6.1f}s" if eta == eta else "   ?  "
        rate_s = f"{rate:7.2f}" if rate < 100 else f"{rate:7,.0f}"
        return (f"{self.label:<24.24} {self.done:>5,}/{self.total:<5,} {pct:5.1f}%  "
                f"{rate_s} {self.unit}/s  ETA {eta_s}")

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._tty:
            if force or now - self._last > 0.2 or self.done == self.total:
                self.stream.write("\r" + self.line())
                self.stream.flush()
                self._last = now
        else:
            decile = int(10 * self.done / self.total) if self.total else 10
            if force and self.done == 0 or decile > self._last_decile:
                self._last_decile = decile
                self.stream.write(self.line() + "\n")
                self.stream.flush()
