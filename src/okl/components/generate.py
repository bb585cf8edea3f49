"""Render :mod:`okl.components.dispatch`, the compiled dispatch of every compiled path over map and
step codes, from the component table (:data:`okl.components.MAPS`, :data:`okl.components.STEPS`)
and the template ``dispatch.py.tp`` beside it: one branch per component that declares a member
function for a site (:data:`SITES`), and one per step with a ``member_round`` (the steps that keep
their own dictionary). Run after adding a component (``python -m okl.components.generate``); the
file is checked in, and ``tests/test_components.py`` holds it equal to what this renders (as
scikit-learn renders ``_sgd_fast.pyx`` from ``_sgd_fast.pyx.tp``).

Why generated: Numba compiles the dispatch into each compiled path, so a branch must exist in
source for each component; written by hand, the branches were spread over the engine's files (a
new step took six sites there). Now the engine calls the template's functions and names no
component, and the dispatch is the one module that compares map and step codes."""

from __future__ import annotations

import pathlib
import string
import sys
import textwrap

from okl.components import MAPS, STEPS

#: the sites of a member's round and the signature each site's functions take (K outputs: ``nk``)
SITES = {
    "features": "F, I, R, j, x, xi, xv, own, q, pre",
    "block features": "F, I, R, j, X, r, nb, bound",
    "outputs one": "F, I, R, j, x, xi, xv, q, out",
    "outputs k": "F, I, R, j, x, xi, xv, q, nk, out",
    "learn one": "F, I, R, j, x, xi, xv, y, out, q",
    "learn k": "F, I, R, j, x, xi, xv, y, f, q, nk, g",
    "sparse outputs one": "F, I, R, j, x, xi, xv, q, out",
    "sparse outputs k": "F, I, R, j, x, xi, xv, q, nk, out",
    "sparse learn one": "F, I, R, j, x, xi, xv, y, out, q",
    "sparse learn k": "F, I, R, j, x, xi, xv, y, f, q, nk, g",
    # the single learners' per-event plan (okl.engine.fastpath: its buffer F, the scaled row xs)
    "event decision": "F, xs",
    "event features": "F, xs, z",
    "event window decision": "F, n",
    "event window learn": "F, x, y, n",
    "event rows step": "F, xs, g",
    "event step": "F, z, w, g, lkind",
}
#: the step every member not dispatched before takes (its branch is the last, ``else``)
DEFAULT_STEP = "ogd"
#: the rounds of the steps that keep their own dictionary (:mod:`okl.components.spec`)
ROUND = "F, o, SV, alpha, m, kind, a, b, c, x, y, f, lkind"


def _function(target: str) -> str:
    return target.rpartition(".")[2]


def _sites(table, site):
    """(code, name, function) of the components of ``table`` that declare ``site``, by code."""
    return [(comp.code, comp.name, _function(target))
            for comp in sorted(table.values(), key=lambda c: c.code) for s, target in comp.member if s == site]


def _one(table, site):
    """The function of the one component that declares ``site`` (its code, name, function)."""
    (row,) = _sites(table, site)
    return row


def _imports(body: str) -> str:
    """The imports of the member functions the rendered ``body`` calls."""
    targets = [t for c in (*MAPS.values(), *STEPS.values()) for _, t in c.member]
    targets += [c.member_round for c in STEPS.values() if c.member_round]
    targets = [t for t in targets if f"{_function(t)}(" in body]
    lines = []
    for module in sorted({t.rpartition(".")[0] for t in targets}):
        names = ", ".join(sorted({_function(t) for t in targets if t.rpartition(".")[0] == module}))
        head = f"from {module} import "
        lines.append(head + names if len(head + names) <= 120 else
                     textwrap.fill(names, 119, initial_indent=head + "(", subsequent_indent=" " * (len(head) + 1))
                     + ")")
    return "\n".join(lines)


def _branches(rows, code, call, indent=4, first="if") -> str:
    """``if code == ...: call(function)`` for each row (then ``elif``)."""
    pad = " " * indent
    out = []
    for i, (value, name, func) in enumerate(rows):
        out.append(f"{pad}{first if i == 0 else 'elif'} {code} == {value}:  # {name}")
        out.append(f"{pad}    {call(func)}")
    return "\n".join(out)


def _site_branches(table, site, code, ret=True, indent=4, first="if", skip=()):
    rows = [row for row in _sites(table, site) if row[1] not in skip]
    return _branches(rows, code, lambda f: ("return " if ret else "") + f"{f}({SITES[site]})", indent, first)


def render() -> str:
    """The source of :mod:`okl.components.dispatch` for the current table."""
    second = [c.name for c in (*MAPS.values(), *STEPS.values()) if c.own_root]  # (the second root's only)
    features = [row for row in _sites(MAPS, "features") if row[1] not in second]
    dictionary = sorted((c for c in STEPS.values() if c.member_round), key=lambda c: c.code)
    linear, linear_name, _ = _one(MAPS, "sparse outputs one")
    if [c.code for c in dictionary] != list(range(dictionary[0].code, dictionary[-1].code + 1)):
        raise ValueError("the steps that keep their own dictionary must have consecutive codes")
    window, window_name, window_decision = _one(MAPS, "event window decision")
    values = {
        "linear": linear, "linear_name": linear_name, "ogd": STEPS[DEFAULT_STEP].code, "ogd_name": DEFAULT_STEP,
        "features": _site_branches(MAPS, "features", "mp", skip=(features[-1][1], *second)),
        "last_features": f"{features[-1][2]}({SITES['features']})  # {features[-1][1]}",
        "block": _site_branches(MAPS, "block features", "mp", ret=False, indent=8),
    }
    for k in ("one", "k"):
        values[f"outputs_{k}"] = "\n".join((_site_branches(MAPS, f"outputs {k}", "mp", ret=False, skip=second),
                                            _site_branches(STEPS, f"outputs {k}", "st", ret=False, first="elif",
                                                           skip=second)))
        values[f"sparse_outputs_{k}"] = _one(MAPS, f"sparse outputs {k}")[2]
        values[f"learn_{k}"] = _site_branches(STEPS, f"learn {k}", "st", skip=(DEFAULT_STEP, *second))
        values[f"sparse_learn_{k}"] = _one(MAPS, f"sparse learn {k}")[2]
        values[f"default_learn_{k}"] = [f for _, n, f in _sites(STEPS, f"learn {k}") if n == DEFAULT_STEP][0]
    values.update(
        dictionary_rounds=_branches([(c.code, c.name, _function(c.member_round)) for c in dictionary], "step",
                                    lambda f: f"return {f}({ROUND})"),
        columns=MAPS["column expansion"].code, expansion=MAPS["expansion"].code, first_dictionary=dictionary[0].code,
        last_dictionary=dictionary[-1].code,
        own_root_map_outputs=_branches([row for row in _sites(MAPS, "outputs one") if row[1] in second], "mp",
                                       lambda f: f"return {f}({SITES['outputs one']})"),
        own_root_outputs=_branches([row for row in _sites(STEPS, "outputs one") if row[1] in second], "st",
                                   lambda f: f"return {f}({SITES['outputs one']})"),
        own_root_learns=_branches([row for row in _sites(STEPS, "learn one") if row[1] in second], "st",
                                  lambda f: f"return {f}({SITES['learn one']})"),
        window=window, window_name=window_name, window_decision=window_decision,
        window_learn=_one(MAPS, "event window learn")[2],
        event_decisions=_site_branches(MAPS, "event decision", "kind"),
        event_features=_site_branches(MAPS, "event features", "kind", ret=False),
        event_rows_steps=_site_branches(STEPS, "event rows step", "st"),
        event_steps=_site_branches(STEPS, "event step", "st", ret=False, indent=8),
    )
    template = pathlib.Path(__file__).with_name("dispatch.py.tp").read_text()
    body = string.Template(template).safe_substitute(values)
    return string.Template(body).substitute(imports=_imports(body))


def main(argv=None) -> int:
    path = pathlib.Path(__file__).with_name("dispatch.py")
    path.write_text(render())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
