"""The constructor parameters several learners share, documented once: their help text
(:data:`SHARED_PARAMETER_DOCS`) and :func:`with_shared_parameters`, which writes it into each
learner's docstring (:meth:`okl.runtime.base.Learner.__init_subclass__`)."""

from __future__ import annotations

import re

from okl.runtime.categorical import CATEGORICAL_DOC

#: The parameter text several learners share, written once: a learner's docstring names the
#: parameters on one line, ``[[kernel, center_targets, scale]]``, where they go (at the
#: parameters' indentation), and its class gets their text there, in that order
#: (:meth:`Learner.__init_subclass__`), so ``help(okl.NOGD)`` reads in full.
SHARED_PARAMETER_DOCS = {
    "loss": 'loss : str or Loss, default "hinge"',
    "kernel": """kernel : Kernel or None, default None (a Gaussian whose width is chosen from the stream's first rows)""",
    "center_targets": """center_targets : bool, default True
    Regression: predict the targets' running mean plus this model of the residual
    (``Heads.centers_targets``); False: the paper's model alone.""",
    "scale": """scale : {"auto", "symlog", "range", "affine"} or None, default "auto"
    The per-feature input map fixed in the first 50 rows (:mod:`okl.scaling`): "auto" is
    "symlog" unless a kernel is given, "symlog" / "range" / "affine" always, None uses the
    features as given.""",
    "categorical": CATEGORICAL_DOC,
}
_SHARED_LINE = re.compile(r"^(\s*)\[\[([a-z_, ]+)\]\]\s*$")


def with_shared_parameters(doc: str | None) -> str | None:
    """``doc`` with each line ``[[name, ...]]`` replaced by those parameters' text in
    :data:`SHARED_PARAMETER_DOCS`, at that line's indentation."""
    if not doc or "[[" not in doc:
        return doc
    out = []
    for line in doc.split("\n"):
        match = _SHARED_LINE.match(line)
        if match is None:
            out.append(line)
            continue
        for name in (n.strip() for n in match.group(2).split(",")):
            out += [match.group(1) + text for text in SHARED_PARAMETER_DOCS[name].split("\n")]
    return "\n".join(out)


def with_categorical(doc: str | None) -> str | None:
    """``doc`` naming the ``categorical`` parameter every learner takes
    (:mod:`okl.runtime.categorical`): added to its last ``[[...]]`` line, or its text appended at
    the end of a docstring that has none and does not name it yet."""
    if not doc or re.search(r"\bcategorical\b", doc):
        return doc
    lines = doc.split("\n")
    shared = [i for i, line in enumerate(lines) if _SHARED_LINE.match(line)]
    if shared:
        i = shared[-1]
        lines[i] = lines[i].replace("]]", ", categorical]]")
        return "\n".join(lines)
    indent = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    return doc.rstrip() + "\n\n" + "\n".join(" " * indent + t for t in CATEGORICAL_DOC.split("\n")) + "\n"


__all__ = ["SHARED_PARAMETER_DOCS", "with_categorical", "with_shared_parameters"]
