"""A small progress line on stderr (done / total, rate, ETA, and the running loss of a run) for long runs."""

from __future__ import annotations

import sys
import time

from okl._jit import compile_seconds


class Progress:
    """``with Progress(total, "label") as p: ... p.advance()``; silent when ``enabled`` is False.

    Redraws at most every 0.2 s. On a non-terminal stream (a log file, CI) it prints one summary
    line per label when the labels change (``set_label``: ``okl run``'s learners) and at the end,
    else one line per 10 %. The rate and ETA leave out the seconds this process spent compiling
    (``eta=False``: no ETA, for steps of uneven length). :meth:`add_trace` adds the rounds of a
    learner's run to the running loss shown on the line (mistake rate % or mean squared loss,
    over the rounds of the current label so far: what Vowpal Wabbit's users read as it learns).
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
        self._labelled = False  # set_label was called: off a terminal, one line per label
        self._mark = (0, self.start, compile_seconds())  # (done, time, compile seconds) when the label began
        self._loss = [0.0, 0, ""]  # (sum of the metric over rounds, rounds, its name) of the label

    def __enter__(self):
        if self._tty or self.label:  # (off a terminal, an empty label waits for set_label's lines)
            self._draw(force=True)
        return self

    def __exit__(self, *exc):
        if self._labelled and not self._tty:
            self._summary()
        else:
            self._draw(force=True)
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()

    def set_label(self, label: str) -> None:
        """Start the next label (a learner): off a terminal, the one line of the label before."""
        if self._labelled and not self._tty and label != self.label:
            self._summary()
        self._labelled = True
        self.label = label
        self._mark = (self.done, time.perf_counter(), compile_seconds())
        self._loss = [0.0, 0, ""]

    def add_trace(self, trace) -> None:
        """Count a run's (or a piece of it) rounds into the running loss of the current label."""
        n = getattr(trace, "n_rounds", 0)
        if not n:
            return
        try:
            value = trace.metric
        except (ValueError, AttributeError):
            return
        if value == value:
            self._loss[0] += value * n
            self._loss[1] += n
            self._loss[2] = "mistakes" if trace.task == "classification" else "mse"

    def _loss_text(self) -> str:
        total, n, name = self._loss
        if not n:
            return ""
        value = total / n
        return f"  {name} {value:.2f}%" if name == "mistakes" else f"  {name} {value:.5g}"

    def _summary(self) -> None:
        """One line for the label that ends: its count, rate and final running loss."""
        if not self.enabled or self.done == self._mark[0]:
            return
        done = self.done - self._mark[0]
        elapsed = time.perf_counter() - self._mark[1] - (compile_seconds() - self._mark[2])
        rate = done / elapsed if elapsed > 0 else 0.0
        rate_s = f"{rate:.2f}" if rate < 100 else f"{rate:,.0f}"
        self.stream.write(f"{self.label:<24.24} {done:>7,} {self.unit} in {max(elapsed, 0.0):.1f}s ({rate_s} "
                          f"{self.unit}/s){self._loss_text()}; {self.done:,}/{self.total:,} done\n")
        self.stream.flush()

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
                f"{rate_s} {self.unit}/s  ETA {eta_s}{self._loss_text()}")

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._tty:
            if force or now - self._last > 0.2 or self.done == self.total:
                self.stream.write("\r" + self.line())
                self.stream.flush()
                self._last = now
        elif not self._labelled:
            decile = int(10 * self.done / self.total) if self.total else 10
            if force and self.done == 0 or decile > self._last_decile:
                self._last_decile = decile
                self.stream.write(self.line() + "\n")
                self.stream.flush()
