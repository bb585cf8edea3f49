"""The machinery the paper tables run on: a table's specification (:class:`TableSpec` and its
:class:`Row` s) and :func:`run_table`, which runs a spec's cells through the resumable sweep store and
backends and writes the table (Markdown, CSV and an ours-vs-paper plot). The tables themselves (published
numbers, specs, their ``okl reproduce`` registrations) are in :mod:`okl.experiments.tables`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from okl.data.adversarial import ADVERSARIAL_PRESETS, parse_stream, preset_note, resolve_dataset
from okl.data.registry import dataset_info, find_files, load_dataset
from okl.eval.backends import make_backend
from okl.eval.progressive import majority_rate
from okl.eval.store import CellKey, ResultStore
from okl.eval.sweep import default_budget, resolve_params, run_sweep
from okl.eval.tables import markdown_table, mean_std, write_csv
from okl.experiments import ExperimentContext, ExperimentResult
from okl.runtime.base import accepts, learner_class, learners as registered_learners

ParamsFn = Callable[[int, int], dict]  # (T, B) -> extra hyperparameters


@dataclass(frozen=True)
class Row:
    label: str
    learner: str
    params: ParamsFn | None = None
    note: str = ""


@dataclass
class TableSpec:
    id: str
    title: str
    datasets: tuple[str, ...]
    rows: tuple[Row, ...]
    paper: dict
    paper_counts_authors: bool  # the paper's numbers use the authors' count for two-stage learners
    fixed_budget: int | None = None
    quick_datasets: tuple[str, ...] = ("german",)
    quick_rows: tuple[str, ...] = ()
    protocol: list[str] = field(default_factory=list)
    #: the protocol this spec runs (``okl reproduce ID --protocol``): "okl" or "published"
    protocol_name: str = "okl"
    #: column name -> registry dataset actually streamed (default: the column name)
    bases: dict[str, str] = field(default_factory=dict)
    #: (row, T) -> the width and budget of that row (``{"sigma": ..., "budget": ...}``), overriding the
    #: dataset's recorded width and the table's budget; None: every row takes those
    row_setting: Callable[[Row, int], dict] | None = None
    #: the sigma column of the dataset table under this protocol
    sigma_note: str = "recorded width (okl datasets)"
    #: (row, dataset column) -> (N, reason): cells too slow at this protocol's setting run on the first N
    #: rounds of each run's stream; the table marks them and its header states N and the reason
    prefix: Callable[[Row, str], tuple[int, str] | None] | None = None

def _options_list(ctx, key: str):
    value = ctx.options.get(key)
    if value is None:
        return None
    return [v.strip() for v in str(value).split(",") if v.strip()]


@dataclass
class CellStats:
    metric: list[float] = field(default_factory=list)
    authors: list = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    sigmas: list = field(default_factory=list)  # widths the 'auto' rule chose, per run


def _backend_factory(ctx: ExperimentContext):
    """The backend named by ``--param backend/workers/scheduler``, started only if cells are left."""
    return lambda: make_backend(str(ctx.options.get("backend", "auto")),
                                int(ctx.options["workers"]) if "workers" in ctx.options else None,
                                ctx.options.get("scheduler"))


def _flag(ours: float, paper: tuple[float, float, float]) -> str:
    mean, std, _ = paper
    return "" if abs(ours - mean) <= 2 * std + 1e-12 else "outside"


def run_table(ctx: ExperimentContext, spec: TableSpec) -> ExperimentResult:
    """Run ``spec`` through the store and backend; write Markdown, CSV and PNG into ``ctx.out_dir``."""
    out = ctx.out_dir
    notes: list[str] = []
    runs = min(ctx.runs, 2) if ctx.quick else ctx.runs
    max_rows = ctx.options.get("max_rows", 300 if ctx.quick else None)
    datasets = _options_list(ctx, "datasets") or list(spec.quick_datasets if ctx.quick else spec.datasets)
    wanted_rows = _options_list(ctx, "learners")
    rows = [r for r in spec.rows if (wanted_rows is None and (not ctx.quick or r.label in spec.quick_rows))
            or (wanted_rows is not None and (r.learner in wanted_rows or r.label in wanted_rows))]
    missing = [w for w in wanted_rows or () if not any(w in (r.learner, r.label) for r in spec.rows)]
    if missing:  # (a paper table's rows are its published ones: another learner is compared by a sweep)
        raise ValueError(f"learners: {missing} are not rows of this table (its rows: "
                         f"{', '.join(dict.fromkeys(r.label for r in spec.rows))}); to set another registered "
                         f"learner (a plugin's too) beside them on these datasets, use okl sweep --datasets "
                         f"{','.join(datasets)} --learners {','.join(missing)} --store FILE, then okl report FILE")
    have = set(registered_learners(kind="streaming"))
    for r in list(rows):
        if r.learner not in have:
            notes.append(f"{r.label}: learner {r.learner!r} is not registered yet; row skipped")
            rows.remove(r)
    sigma_override = ctx.options.get("sigma")
    drop_last = str(ctx.options.get("drop_last", "0")) == "1"

    cells: dict[tuple[str, str], list[CellKey]] = {}
    cell_setting: dict[tuple[str, str], tuple] = {}
    cut: dict[tuple[str, str], int] = {}   # cells run on a prefix (spec.prefix): the rounds kept
    cut_notes: list[str] = []
    info_rows = []
    for name in datasets:
        stream = None
        if max_rows is not None:
            stream = f"permutation:rows={int(max_rows)}"
        base, transform = resolve_dataset(spec.bases.get(name, name), stream)
        if drop_last and transform.kind == "adversarial":
            transform = parse_stream(transform.spec + ",drop_last=1")
        if find_files(base, ctx.data_dir) is None:
            notes.append(f"{name}: files of dataset {base!r} not found (--data-dir); column skipped")
            continue
        info = dataset_info(base)
        T = transform.length(info.rows)
        B = int(ctx.options["budget"]) if "budget" in ctx.options else (spec.fixed_budget or default_budget(T))
        sigma = float(sigma_override) if sigma_override is not None else float(info.sigma)
        own = bool(spec.row_setting) and sigma_override is None
        settings = {r.label: {"budget": B, "sigma": sigma, **(spec.row_setting(r, T) if own else {})}
                    for r in rows}
        if "budget" in ctx.options:
            settings = {k: {**v, "budget": B} for k, v in settings.items()}
        row_sigmas = sorted({str(v["sigma"]) if isinstance(v["sigma"], str) else f"{v['sigma']:.4g}"
                             for v in settings.values()})
        row_budgets = sorted({v["budget"] for v in settings.values()})
        line = [name, base, transform.spec, T, "/".join(map(str, row_budgets)), " / ".join(row_sigmas),
                "--param sigma" if sigma_override is not None else spec.sigma_note]
        if transform.kind == "permutation":
            X, y = load_dataset(base, ctx.data_dir)
            line.append(f"{majority_rate(y):.2f}")
        else:
            line.append("~50 (labels flip by block)")
        info_rows.append(line)
        for r in rows:
            # the published setting (Learner.paper_params), then the table's own
            rB, rsigma = settings[r.label]["budget"], settings[r.label]["sigma"]
            rT, rtransform = T, transform
            limit = spec.prefix(r, name) if spec.prefix and max_rows is None else None
            if limit is not None and limit[0] < T and transform.kind == "permutation":
                rT = int(limit[0])
                _, rtransform = resolve_dataset(spec.bases.get(name, name), f"permutation:rows={rT}")
                cut[(r.label, name)] = rT
                cut_notes.append(f"{r.label} on {name}: the first {rT:,} rounds of each permutation (of {T:,}; "
                                 f"horizon = {rT:,}). {limit[1]}")
            extra = {**learner_class(r.learner).paper_params(rB), **(r.params(rT, rB) if r.params else {})}
            params = {"budget": rB, "sigma": rsigma, "loss": "hinge", **extra}
            params = {k: v for k, v in params.items()
                      if (k == "sigma" and accepts(r.learner, "kernel")) or accepts(r.learner, k)}
            params = resolve_params(r.learner, base, rT, params)
            cells[(r.label, name)] = [CellKey.make(base, rtransform.spec, r.learner, params, s)
                                      for s in range(runs)]
            cell_setting[(r.label, name)] = (params.get("budget", ""), params.get("sigma", ""))

    all_cells = [c for cs in cells.values() for c in cs]
    stem = spec.id if spec.protocol_name == "okl" else f"{spec.id}-{spec.protocol_name}"
    store_path = Path(ctx.options.get("store", out / f"{stem}.sqlite"))
    with ResultStore(store_path) as store:
        sweep = run_sweep(all_cells, store, _backend_factory(ctx), ctx.data_dir, progress=ctx.progress,
                          label=spec.id)
        stats: dict[tuple[str, str], CellStats] = {}
        for k, cs in cells.items():
            st = stats[k] = CellStats()
            for key, res in store.results(cs):
                st.metric.append(res.metric)
                st.authors.append(res.authors_rate)
                st.seconds.append(res.seconds)
                st.sigmas.append((res.diagnostics or {}).get("sigma"))

    md_rows, csv_rows = [], []
    flagged = far = 0
    for name in [d[0] for d in info_rows]:
        for r in rows:
            st = stats.get((r.label, name))
            if st is None or not st.metric:
                continue
            cB, csig = cell_setting[(r.label, name)]
            csig = f"{csig:.4g}" if isinstance(csig, float) else str(csig)
            chosen = [v for v in st.sigmas if isinstance(v, (int, float))]
            if csig == "auto" and chosen:
                csig = f"auto ({min(chosen):.3g}-{max(chosen):.3g})"
            authors = None if any(a is None for a in st.authors) else np.array(st.authors, float)
            paper = spec.paper.get((r.label, name))
            uses_authors = spec.paper_counts_authors and authors is not None
            compared = float(np.mean(authors if uses_authors else st.metric))
            flag = _flag(compared, paper) if paper else ""
            flagged += bool(flag)
            mark = f" † ({cut[(r.label, name)]:,} rounds)" if (r.label, name) in cut else ""
            md_rows.append([name, r.label, cB, csig, mean_std(st.metric) + mark,
                            mean_std(authors) if authors is not None else "",
                            f"{paper[0]:.3f} ± {paper[1]:.3f}" if paper else "-",
                            ("authors'" if uses_authors else "all") if paper else "",
                            flag.upper() if flag else ("ok" if paper else ""),
                            f"{100 * (compared / paper[0] - 1):+.1f}" if paper and paper[0] else "",
                            f"{np.mean(st.seconds):.3f}", f"{paper[2]:g}" if paper else "-"])
            far += bool(paper and paper[0] and abs(compared / paper[0] - 1) > 0.2)
            csv_rows.append([spec.id, name, r.label, r.learner, len(st.metric), float(np.mean(st.metric)),
                             float(np.std(st.metric)), "" if authors is None else float(authors.mean()),
                             "" if authors is None else float(authors.std()),
                             "" if not paper else paper[0], "" if not paper else paper[1],
                             "authors" if uses_authors else "all", flag, float(np.mean(st.seconds)),
                             "" if not paper else paper[2], cut.get((r.label, name), "")])
    csv_path = out / f"{stem}.csv"
    write_csv(csv_path, ["experiment", "dataset", "algorithm", "learner", "runs", "mistake_mean", "mistake_std",
                         "authors_mean", "authors_std", "paper_mean", "paper_std", "compared_count", "flag",
                         "seconds_mean", "paper_seconds", "prefix_rounds"], csv_rows)
    png_path = out / f"{stem}.png"
    _plot_vs_paper(png_path, spec, csv_rows)

    parts = [f"## {spec.title} — protocol: {spec.protocol_name}\n",
             f"{runs} run(s) per cell (seeds 0..{runs - 1}); mistake rate % = every round counted (mean ± "
             "population std); authors' % = first stage skipped, still divided by T (two-stage learners, "
             "ALGORITHMS.md 4); 'vs paper' compares the count named in 'count' with the paper's mean ± 2 std; "
             "seconds = learner time per run on this machine (the paper's machine differs).\n",
             "Datasets (kernel width = Gaussian sigma; no width is published, ALGORITHMS.md 9.9; B and sigma "
             "per row in the table below):\n",
             markdown_table(["dataset", "base", "stream", "T", "B", "sigma", "sigma from", "majority %"],
                            info_rows) + "\n",
             "Protocol choices:\n" + "\n".join(f"- {p}" for p in spec.protocol) + "\n"]
    if ctx.quick:
        parts.append(f"- QUICK configuration: first {max_rows} rounds, {runs} runs, learners "
                     f"{', '.join(r.label for r in rows)}: numbers are a smoke test, not a reproduction.\n")
    if not ctx.quick and (wanted_rows is not None or _options_list(ctx, "datasets") is not None):
        left = [r.label for r in spec.rows if r not in rows] + [d for d in spec.datasets if d not in datasets]
        parts.append(f"- restricted by --param learners / datasets: left out {', '.join(left) or 'nothing'}\n")
    presets = [d for d in datasets if d in ADVERSARIAL_PRESETS]
    if presets:
        parts.append("Adversarial streams:\n" + "\n".join(f"- {preset_note(p)}" for p in presets) + "\n")
    if cut_notes:
        parts.append("Slow cells, run on a stated prefix (marked † in the table; their 'off %' compares a prefix "
                     "with the paper's whole stream):\n" + "\n".join(f"- {n}" for n in cut_notes) + "\n")
    if notes:
        parts.append("Notes:\n" + "\n".join(f"- {n}" for n in notes) + "\n")
    parts.append(markdown_table(["dataset", "algorithm", "B", "sigma", "ours %", "authors' %", "paper %", "count",
                                 "vs paper", "off %", "ours s", "paper s"], md_rows) + "\n")
    parts.append(f"{flagged} of {sum(1 for r in csv_rows if r[9] != '')} cells with a published number lie "
                 f"outside its mean ± 2 std; {far} are more than 20 % from it ('off %' = 100 (ours / paper - 1), "
                 f"ours in the count the paper used). Store: {store_path} ({sweep.summary()}).\n")
    md = "\n".join(parts)
    md_path = out / f"{stem}.md"
    md_path.write_text(md)
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    return ExperimentResult(md, [md_path, csv_path, png_path])


def _plot_vs_paper(path: Path, spec: TableSpec, csv_rows: list) -> None:
    from okl.plotting import pyplot

    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.2, 5.6))
    datasets = list(dict.fromkeys(r[1] for r in csv_rows))
    markers = "osD^v<>ph*"
    lo, hi = math.inf, -math.inf
    for i, d in enumerate(datasets):
        pts = [r for r in csv_rows if r[1] == d and r[9] != ""]
        if not pts:
            continue
        x = [r[9] for r in pts]
        xe = [2 * r[10] for r in pts]
        y = [r[7] if r[11] == "authors" else r[5] for r in pts]
        ye = [r[8] if r[11] == "authors" else r[6] for r in pts]
        ax.errorbar(x, y, xerr=xe, yerr=ye, fmt=markers[i % len(markers)], capsize=2, label=d, alpha=0.8)
        for r, xi, yi in zip(pts, x, y):
            ax.annotate(r[2], (xi, yi), textcoords="offset points", xytext=(3, 2), fontsize=6)
        lo, hi = min(lo, *x, *y), max(hi, *x, *y)
    if math.isfinite(lo):
        pad = 0.05 * (hi - lo + 1)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "k--", lw=0.8, label="ours = paper")
    ax.set_xlabel("paper mistake rate % (bars: ± 2 std)")
    ax.set_ylabel("ours % (count the paper used; bars: ± std)")
    ax.set_title(spec.title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["CellStats", "ParamsFn", "Row", "TableSpec", "run_table"]
