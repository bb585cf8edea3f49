"""The labels of ``okl stream`` (:class:`StreamLabels`, a mixin of
:class:`okl.streaming.runner.StreamRunner`): class names in order of appearance, the positive label,
and the switch to one-vs-rest when a third class appears."""

from __future__ import annotations

import numpy as np

from okl.data.readers import DataFormatError
from okl.runtime.multiclass import MultiClass


class StreamLabels:
    """A stream's labels as the learner takes them, and back to the names the predictions print."""

    # ---- class names: CSV labels that are not numbers, in order of appearance --------------
    #
    # The first name is the class -1, the second +1 (River's and the adapters' order), a third
    # and later ones 2, 3, ... (the stream then turns multi-class as a third number does); the
    # names are in the checkpoint (StreamPosition.label_names) and the predictions print them.

    def _code_of(self, name: str, where: str) -> float:
        names = self.pos.label_names
        if not self.classification:
            raise DataFormatError(f"{where}: target {name!r} is not a number (a regression loss)")
        if self.config.positive_label is not None:
            raise DataFormatError(f"{where}: label {name!r} is not a number (--positive-label compares numbers)")
        if self.pos.labels_seen and not names:
            raise DataFormatError(f"{where}: label {name!r} is not a number, and this stream's labels so far are "
                                  "numbers; give every label as a number or every one as a name")
        if name not in self._name_codes:
            names.append(name)
        return self._name_codes[name]

    @staticmethod
    def _code(i: int) -> float:
        """The class code of the i-th name: -1, +1, then 2, 3, ..."""
        return -1.0 if i == 0 else 1.0 if i == 1 else float(i)

    @property
    def _name_codes(self) -> dict:
        """name -> code over ``pos.label_names`` (rebuilt when the list grew or a refused event shrank it)."""
        if len(self._codes) != len(self.pos.label_names):
            self._codes = {n: self._code(i) for i, n in enumerate(self.pos.label_names)}
        return self._codes

    def _name_for(self, code: float) -> str:
        """The class name of ``code`` (the printed prediction of a stream of names; ? before it is seen)."""
        names = self.pos.label_names
        i = 0 if code == -1.0 else 1 if code == 1.0 else int(code)
        return names[i] if 0 <= i < len(names) else "?"

    def _target(self, label: float | str, where: str) -> float:
        if isinstance(label, str):
            label = self._code_of(label, where)
        elif self.pos.label_names:
            raise DataFormatError(f"{where}: label {label:g} is a number, but this stream's labels are names "
                                  f"({', '.join(map(repr, self.pos.label_names[:3]))}); give every label as a "
                                  "name or every one as a number")
        if not self.classification:
            return label
        if self.config.positive_label is not None:
            return 1.0 if label == self.config.positive_label else -1.0
        if not self.multi and label not in (1.0, -1.0):
            self._to_multiclass(label, where)
        return label

    def _to_multiclass(self, label: float, where: str) -> None:
        """A label that is neither -1 nor +1 (and no --positive-label): from here on one-vs-rest,
        through the one switch (:meth:`okl.runtime.multiclass.MultiClass.from_binary`): the
        binary learner's copy becomes the outputs (or heads) of the labels -1 / +1 it has learned
        (none of it is lost). The binary learner itself is left as it was, so when the event is
        refused (:meth:`process_line` puts it back) the checkpoint, a resume after the line is
        fixed and ``--skip-bad`` all continue from the state before that event."""
        seen = self.pos.labels_seen
        self.learner = MultiClass.from_binary(self.learner, -1.0 if seen & 1 else None, 1.0 if seen & 2 else None,
                                              random_state=self.learner.get_params().get("random_state"))
        self.multi = True

    def _said_multiclass(self, label: float | str, where: str) -> None:
        """The stderr line saying the stream turned multi-class (once its first event was learned)."""
        seen = self.pos.labels_seen
        if not self.quiet:
            names = self.pos.label_names
            signs = ((1, repr(names[0]) if names else "-1"), (2, repr(names[1]) if len(names) > 1 else "+1"))
            kept = " and ".join(v for bit, v in signs if seen & bit)
            label = repr(label) if isinstance(label, str) else f"{label:g}"
            form, part = (("K outputs over one feature map", "outputs") if self.learner.native
                          else ("one binary head per class", "heads"))
            before = f"after the labels {kept}" if kept else "before any other label"
            what = "a third class name" if names else "neither -1 nor +1"
            self.err.write(f"okl stream: {where}: label {label} is {what} ({before}): the labels are "
                           f"classes from here on, one-vs-rest (okl.MultiClass: {form})"
                           f"{f'; the {part} of ' + kept + ' continue the learner' if kept else ''}\n")

    def _classes_of(self, margins: np.ndarray) -> np.ndarray:
        """The predicted class per row of (n, K) margins (NaN where no class is known yet; a
        stream's labels are numbers)."""
        if margins.shape[1] == 0:
            return np.full(margins.shape[0], np.nan)
        best = np.argmax(margins, axis=1)
        known = np.isfinite(margins[np.arange(margins.shape[0]), best])
        return np.where(known, np.asarray(self.learner.classes_, dtype=float)[best], np.nan)
