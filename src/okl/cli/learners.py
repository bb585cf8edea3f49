"""``okl learners``: the registered learners, their kind and the package or module each came from
(okl's own, a plugin package's entry point in ``okl.learners``, ``$OKL_PLUGINS`` or ``--import``)."""

from __future__ import annotations

from okl.eval import markdown_table
from okl.runtime.base import learner_class, learners
from okl.runtime.plugins import GROUP, ENV, plugin_failures
from okl.runtime.registry import learner_kind, learner_source


def _summary(cls: type) -> str:
    """The first sentence of the class's docstring (at most 100 characters)."""
    text = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
    text = text.split("; see ")[0].split(". ")[0].rstrip(".")
    return text if len(text) <= 100 else text[:97] + "..."


def cmd_learners(args) -> int:
    names = learners(kind=args.kind)
    rows = [[name, learner_kind(name), learner_source(name), _summary(learner_class(name, kind=None))]
            for name in names]
    print(markdown_table(["learner", "kind", "from", "summary"], rows))
    print(f"\nplugins: a package's entry points in group {GROUP!r}, modules in ${ENV} or --import MODULE "
          "(docs/adding-a-learner.md)")
    for line in plugin_failures():
        print(line)
    return 0


def add_parser(sub):
    p = sub.add_parser("learners", help="list the registered learners and the package each came from")
    p.add_argument("--kind", choices=["streaming", "evolvable"], help="only the learners of this kind")
    p.set_defaults(func=cmd_learners)
    return p
