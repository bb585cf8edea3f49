"""Reports from a results store: tables of mean ± std over seeds and trade-off / learning-curve figures.

``okl report STORE [--out DIR]`` groups the stored cells by (dataset, stream, learner,
hyperparameters, okl version) — the seeds of a group are its runs — and writes

* ``report.md``: per dataset and stream, a table of every group (mean ± population std over
  seeds of the mistake rate, every round counted, or of the mean squared loss; the authors' count
  beside it for two-stage learners; mean seconds; runs), then the best setting of each learner
  (lowest mean, chosen in hindsight: for reading a sweep, not for reporting a tuned result);
* ``report.csv``: one row per group;
* ``tradeoff_<dataset>.png``: mistake rate vs time per budget (FORKS Fig. 3 style): for each
  learner (and loss, when several were swept) one point per budget B — the best setting at that
  B — joined in order of B and labelled with B;
* ``curves_<dataset>.png``: the cumulative mistake rate (or mean squared loss) against the round
  on a log axis, mean over seeds with a band of one std (the permutations' spread), for each
  learner's best setting (the store keeps ~200 points per cell), and the baseline dashed (the
  running majority vote, or the running mean, on the same streams) where the data can be read.

A hyperparameter that varies between groups is shown with its value in every row: the learner's
default as ``0.5 (default)`` where a group left it out, ``n/a`` where the learner does not take
it; values sort as numbers (budget 50, 100, 200).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from okl.data.adversarial import stream_label
from okl.eval.store import ResultStore
from okl.eval.tables import markdown_table, mean_std, write_csv
from okl.runtime.hyperparameters import param_names


@dataclass
class Group:
    """The runs (seeds) of one (dataset, stream, learner, hyperparameters, version)."""

    dataset: str
    stream: str
    learner: str
    params: str
    okl_version: str
    task: str
    seeds: list[int] = field(default_factory=list)
    metric: list[float] = field(default_factory=list)
    authors: list[float | None] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    n_rounds: list[int] = field(default_factory=list)
    curves: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    diagnostics: list[dict] = field(default_factory=list)

    @property
    def param_dict(self) -> dict[str, Any]:
        return json.loads(self.params)

    @property
    def label(self) -> str:
        return stream_label(self.dataset, self.stream)

    @property
    def runs(self) -> int:
        return len(self.seeds)

    @property
    def metric_mean(self) -> float:
        return float(np.mean(self.metric))

    @property
    def metric_std(self) -> float:
        return float(np.std(self.metric))

    @property
    def authors_values(self) -> np.ndarray | None:
        if not self.authors or any(a is None for a in self.authors):
            return None
        return np.asarray(self.authors, float)

    @property
    def seconds_mean(self) -> float:
        return float(np.mean(self.seconds))

    def mean_curve(self) -> tuple[np.ndarray, np.ndarray] | None:
        spread = self.curve_spread()
        return None if spread is None else spread[:2]

    def curve_spread(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(rounds, mean, population std) of the seeds' stored curves (those on the same rounds)."""
        curves = [c for c in self.curves if c[0] is not None and len(c[0])]
        if not curves:
            return None
        rounds = curves[0][0]
        same = [v for r, v in curves if len(r) == len(rounds) and np.array_equal(r, rounds)]
        return rounds, np.mean(same, axis=0), np.std(same, axis=0)


def group_rows(rows: Iterable[dict]) -> list[Group]:
    """Group stored cells (``ResultStore.rows(curves=True)``) by everything but the seed."""
    groups: dict[tuple, Group] = {}
    for r in rows:
        k = (r["dataset"], r["stream"], r["learner"], r["params"], r["okl_version"])
        g = groups.get(k)
        if g is None:
            g = groups[k] = Group(*k, task=r["task"])
        g.seeds.append(r["seed"])
        g.metric.append(r["metric"])
        g.authors.append(r["authors_rate"])
        g.seconds.append(r["seconds"])
        g.n_rounds.append(r["n_rounds"])
        g.curves.append((r.get("curve_rounds"), r.get("curve_values")))
        g.diagnostics.append(r["diagnostics"])
    return sorted(groups.values(), key=lambda g: (g.dataset, g.stream, g.learner, _params_key(g.param_dict),
                                                  g.okl_version))


def _value_key(v) -> tuple:
    """Order of a hyperparameter's values: numbers by value (50 < 100 < 200), then the rest by text."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    return (1, 0.0, json.dumps(v, sort_keys=True))


def _params_key(params: dict[str, Any]) -> tuple:
    return tuple((k, _value_key(params[k])) for k in sorted(params))


def _shown_value(learner: str, key: str, params: dict[str, Any]) -> str:
    """A varying hyperparameter's cell: its value; where the group left it out, the learner's
    default as its value (``"0.5 (default)"``), or "n/a" where the learner does not take it."""
    if key in params:
        return _fmt(params[key])
    from okl.runtime.base import learner_class

    try:
        cls = learner_class(learner)
    except ValueError:
        return "?"
    if key == "sigma":
        return "from stream (default)" if "kernel" in param_names(cls) else "n/a"
    if key not in param_names(cls):
        return "n/a"
    import inspect

    default = inspect.signature(cls.__init__).parameters[key].default
    return f"{_fmt(default)} (default)" if default is not inspect.Parameter.empty else "(default)"


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _split_params(groups: list[Group]) -> tuple[dict[str, Any], list[str]]:
    """(hyperparameters common to every group, keys that vary between groups)."""
    values: dict[str, set] = defaultdict(set)
    presence: dict[str, int] = defaultdict(int)
    for g in groups:
        for k, v in g.param_dict.items():
            values[k].add(json.dumps(v))
            presence[k] += 1
    common = {k: json.loads(next(iter(v))) for k, v in values.items()
              if len(v) == 1 and presence[k] == len(groups)}
    varying = sorted(k for k in values if k not in common)
    return common, varying


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "dataset"


def best_groups(groups: list[Group], by: tuple[str, ...] = ()) -> dict[tuple, Group]:
    """For each (learner, *values of ``by`` keys) the group with the lowest mean metric."""
    best: dict[tuple, Group] = {}
    for g in groups:
        p = g.param_dict
        k = (g.learner,) + tuple(json.dumps(p.get(b)) for b in by)
        if k not in best or g.metric_mean < best[k].metric_mean:
            best[k] = g
    return best


def _plot_tradeoff(path: Path, title: str, groups: list[Group]) -> None:
    from okl.plotting import pyplot

    plt = pyplot()

    losses = {g.param_dict.get("loss") for g in groups}
    by_loss = len(losses) > 1
    lines: dict[tuple, list[Group]] = defaultdict(list)
    for (learner, budget, loss), g in best_groups(groups, ("budget", "loss")).items():
        lines[(learner, json.loads(loss) if by_loss else None)].append(g)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for (learner, loss), gs in sorted(lines.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        gs.sort(key=lambda g: (g.param_dict.get("budget") is None, g.param_dict.get("budget") or 0))
        xs = [g.seconds_mean for g in gs]
        ys = [g.metric_mean for g in gs]
        es = [g.metric_std for g in gs]
        label = learner + (f" ({loss})" if loss else "")
        line = ax.errorbar(xs, ys, yerr=es, marker="o", capsize=2, label=label)
        for g, x, y in zip(gs, xs, ys):
            b = g.param_dict.get("budget")
            if b is not None and len(gs) > 1:
                ax.annotate(f"B={b}", (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7,
                            color=line[0].get_color())
    ax.set_xscale("log")
    ax.set_xlabel("seconds per run (learner only, mean over seeds)")
    ax.set_ylabel("mistake rate (%)" if groups[0].task == "classification" else "mean squared loss")
    _finish(fig, ax, title, path)
    plt.close(fig)


def _finish(fig, ax, title: str, path: Path) -> None:
    """Title, grid and legend of a report figure, then write it to ``path``."""
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _plot_curves(path: Path, title: str, groups: list[Group], baseline=None) -> bool:
    """Each learner's best setting: its cumulative metric against the round (log axis), mean over
    seeds with a band of one std, and ``baseline`` (label, rounds, values) dashed."""
    from okl.plotting import pyplot

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    drawn = False
    for (learner,), g in sorted(best_groups(groups).items()):
        spread = g.curve_spread()
        if spread is None:
            continue
        rounds, mean, std = spread
        line, = ax.plot(rounds, mean, label=f"{learner} ({g.runs} runs)")
        if g.runs > 1:  # the spread over the seeds' permutations
            ax.fill_between(rounds, mean - std, mean + std, color=line.get_color(), alpha=0.15, lw=0)
        drawn = True
    if drawn and baseline is not None:
        label, rounds, values = baseline
        ax.plot(rounds, values, "k--", lw=1.0, label=label)
    if drawn:
        ax.set_xscale("log")
        ax.set_xlabel("round t (log scale); band: mean ± std over seeds")
        ax.set_ylabel("cumulative mistake rate (%)" if groups[0].task == "classification"
                      else "cumulative mean squared loss")
        _finish(fig, ax, title, path)
    plt.close(fig)
    return drawn


def plot_run_curves(path, title: str, curves: dict[str, np.ndarray], task: str,
                    reference: tuple[str, np.ndarray] | None = None, first_round: int = 10) -> Path:
    """``okl run --plot``: each learner's running metric (mean over runs) against the round, on a
    log round axis from ``first_round`` on (the first rounds' rates are a handful of mistakes over
    a handful of rounds and would otherwise set the scale), with the baseline ``reference`` (the
    majority class's or the running mean's curve) dashed. The legend sits outside the axes, ordered
    by the final value, so 17 learners do not cover the curves."""
    from okl.plotting import pyplot

    plt = pyplot()

    path = Path(path)
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    order = sorted(curves, key=lambda name: float(curves[name][-1]) if len(curves[name]) else float("inf"))
    tops = []
    # tab10 repeats after 10 curves: tab20 and a second line style keep 17 learners apart
    colors = plt.get_cmap("tab10" if len(order) <= 10 else "tab20").colors
    for i, name in enumerate(order):
        c = curves[name]
        t = np.arange(1, len(c) + 1)
        keep = t >= min(first_round, len(c))
        ax.plot(t[keep], c[keep], lw=1.2, color=colors[i % len(colors)], ls="-" if i < len(colors) else ":",
                label=f"{name} ({c[-1]:.2f})" if task == "classification"
                else f"{name} ({c[-1]:.4f})")
        tops.append(float(np.max(c[keep])) if keep.any() else 0.0)
    if reference is not None:
        label, c = reference
        t = np.arange(1, len(c) + 1)
        keep = t >= min(first_round, len(c))
        ax.plot(t[keep], c[keep], "k--", lw=1.0, label=label)
        tops.append(float(np.max(c[keep])) if keep.any() else 0.0)
    ax.set_xscale("log")
    ax.set_xlabel("round t (log scale)")
    ax.set_ylabel("cumulative mistake rate (%)" if task == "classification" else "cumulative mean squared loss")
    if tops:
        ax.set_ylim(0.0, 1.05 * max(tops))
    ax.set_title(title, fontsize=10, wrap=True)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    # the format follows the suffix; a name without one is written as PNG under that very name
    # (savefig would otherwise write NAME.png while okl run reported NAME)
    fig.savefig(path, dpi=120, bbox_inches="tight", format=path.suffix[1:].lower() or "png")
    plt.close(fig)
    return path


def _baseline(dataset: str, stream: str, groups: list[Group], data_dir=None):
    """(label, rounds, values) of the baseline on the groups' own streams (the majority so far, or
    the running mean; :func:`okl.eval.progressive.baselines`), mean over their seeds, at the
    rounds of the stored curves; None when the data cannot be read here."""
    from okl.eval.progressive import baseline_curves
    from okl.eval.sweep import _stream_arrays

    spreads = [g.curve_spread() for g in groups]
    rounds = next((s[0] for s in spreads if s is not None), None)
    if rounds is None or groups[0].task not in ("classification", "regression"):
        return None
    n = int(rounds[-1])
    try:
        ys = [_stream_arrays(dataset, stream, seed, data_dir)[1][:n] for seed in sorted({s for g in groups for s in g.seeds})]
        label, curve, _ = baseline_curves(ys, groups[0].task)
    except Exception:  # noqa: BLE001  (data not here, or a stream this okl cannot rebuild: no baseline)
        return None
    if len(curve) < n:
        return None
    return label, rounds, curve[np.asarray(rounds, dtype=int) - 1]


def report(store: ResultStore, out_dir: str | os.PathLike | None = None, figures: bool = True,
           data_dir=None) -> tuple[str, list[Path]]:
    """Markdown text of the report, and the files written into ``out_dir`` (none when None); the
    curves' baseline reads the datasets from ``data_dir`` (else $OKL_DATA) when they are there."""
    groups = group_rows(store.rows(curves=figures))
    files: list[Path] = []
    out = None if out_dir is None else Path(out_dir)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    if not groups:
        return f"{store.path}: no finished cells yet\n", files
    versions = sorted({g.okl_version for g in groups})
    parts = [f"# Results in {store.path}\n",
             f"{sum(g.runs for g in groups)} cells in {len(groups)} groups; okl version(s): {', '.join(versions)}. "
             "Mean ± population std over seeds; mistake rates count every round; the authors' count "
             "(first stage skipped, divided by T) is shown for two-stage learners only.\n"]
    csv_rows = []
    blocks: dict[tuple, list[Group]] = defaultdict(list)
    for g in groups:
        blocks[(g.dataset, g.stream)].append(g)
    for (dataset, stream), gs in blocks.items():
        label = gs[0].label
        task = gs[0].task
        digits = 2 if task == "classification" else 5
        metric_name = "mistake %" if task == "classification" else "mean sq. loss"
        common, varying = _split_params(gs)
        has_authors = any(g.authors_values is not None for g in gs)
        show_version = len(versions) > 1
        header = (["learner"] + varying + (["okl"] if show_version else []) + ["runs", metric_name]
                  + (["authors' %"] if has_authors else []) + ["seconds", "T"])
        rows = []
        for g in gs:
            p = g.param_dict
            a = g.authors_values
            rows.append([g.learner] + [_shown_value(g.learner, k, p) for k in varying]
                        + ([g.okl_version] if show_version else []) + [g.runs, mean_std(g.metric, digits)]
                        + ([mean_std(a, digits) if a is not None else ""] if has_authors else [])
                        + [f"{g.seconds_mean:.3f}", int(np.max(g.n_rounds))])
            csv_rows.append([g.dataset, g.stream, g.learner, g.params, g.okl_version, g.runs, g.task,
                             g.metric_mean, g.metric_std,
                             "" if a is None else float(a.mean()), "" if a is None else float(a.std()),
                             g.seconds_mean, float(np.std(g.seconds)), int(np.max(g.n_rounds))])
        parts.append(f"## {label}\n")
        parts.append(f"stream `{stream}`; common hyperparameters: "
                     + (", ".join(f"{k}={_fmt(v)}" for k, v in sorted(common.items())) or "none") + "\n")
        parts.append(markdown_table(header, rows) + "\n")
        best = best_groups(gs)
        if len(best) < len(gs):
            brow = []
            for (learner,), g in sorted(best.items(), key=lambda kv: kv[1].metric_mean):
                p = g.param_dict
                shown = {k: _shown_value(learner, k, p) for k in varying}
                brow.append([learner, ", ".join(f"{k}={v}" for k, v in shown.items() if v != "n/a") or "-",
                             mean_std(g.metric, digits), f"{g.seconds_mean:.3f}"])
            parts.append("Best setting per learner (lowest mean, chosen in hindsight):\n\n"
                         + markdown_table(["learner", "setting", metric_name, "seconds"], brow) + "\n")
        if out is not None and figures:
            slug = _slug(label)
            tpath = out / f"tradeoff_{slug}.png"
            _plot_tradeoff(tpath, f"{label}: {metric_name} vs time (best setting per budget)", gs)
            files.append(tpath)
            cpath = out / f"curves_{slug}.png"
            if _plot_curves(cpath, f"{label}: cumulative {metric_name} (best setting per learner)", gs,
                            _baseline(dataset, stream, gs, data_dir)):
                files.append(cpath)
            parts.append(f"Figures: `{tpath.name}`" + (f", `{cpath.name}`" if cpath in files else "") + "\n")
    text = "\n".join(parts)
    if out is not None:
        csv_path = out / "report.csv"
        write_csv(csv_path, ["dataset", "stream", "learner", "params", "okl_version", "runs", "task",
                             "metric_mean", "metric_std", "authors_mean", "authors_std", "seconds_mean",
                             "seconds_std", "n_rounds"], csv_rows)
        md_path = out / "report.md"
        md_path.write_text(text)
        files = [md_path, csv_path] + files
    return text, files


__all__ = ["Group", "best_groups", "group_rows", "report"]
