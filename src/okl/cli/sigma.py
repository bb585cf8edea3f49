"""``okl sigma``: the kernel-width rules' alignment scores, optionally against a sweep of learners."""

from __future__ import annotations

from okl.cli._common import add_data_dir_options, add_source_options, load_for_cli
from okl.data.registry import dataset_info, datasets
from okl.eval import Progress, evaluate, markdown_table, mean_std
from okl.kernels import RBF

def datasets_by_name() -> set[str]:
    return {d.name for d in datasets()}


def cmd_sigma(args) -> int:
    from okl.data.registry import permutation
    from okl.data.width import DEFAULT_GRID, PAPER_GRID, RULES, alignment_scores, select_sigma
    from okl.eval.sweep import default_budget

    _, _, task, X, y = load_for_cli(args)
    if task == "multiclass":
        raise ValueError(f"{args.dataset}: okl sigma scores widths on two classes or a regression target; "
                         "this file has more than two classes")
    order = permutation(len(y), 0)[: args.first]
    Xf, yf = X[order], y[order]
    choices = {rule: select_sigma(Xf, yf, rule) for rule in RULES}
    grid = sorted(set(DEFAULT_GRID) | (set(PAPER_GRID) if args.wide else set()) | set(choices.values()))
    centered = alignment_scores(Xf, yf, grid, args.first, centered=True)
    plain = alignment_scores(Xf, yf, grid, args.first, centered=False)
    learners_ = args.learners.split(",") if args.sweep else []
    info = dataset_info(args.dataset) if args.dataset in datasets_by_name() else None
    rows = []
    with Progress(len(grid) * len(learners_) * args.runs, "sweep", enabled=args.sweep and not args.quiet) as p:
        for s in grid:
            marks = ", ".join(rule for rule, value in choices.items() if value == s)
            row = [f"{s:.4g}", marks, f"{centered[s]:.4f}", f"{plain[s]:.4f}"]
            for name in learners_:
                res = evaluate(name, X, y, runs=args.runs, budget=args.budget or default_budget(len(y)),
                               kernel=RBF(sigma=s), loss="hinge" if task == "classification" else "squared",
                               progress=p, max_rows=args.max_rows)
                row.append(mean_std(res.metric, 2 if task == "classification" else 5))
            rows.append(row)
    print(f"dataset {args.dataset}: rules applied to the first {args.first} examples of permutation 0")
    print("choices: " + "; ".join(f"{rule} {value:.4g}" for rule, value in choices.items())
          + (f"; registry default {info.sigma:.4g} ({info.sigma_rule})" if info else ""))
    if args.sweep:
        print(f"sweep: {args.runs} permutations" + (f", first {args.max_rows} rows" if args.max_rows else "")
              + ", every round counted")
    print()
    print(markdown_table(["sigma", "chosen by", "centered alignment", "uncentered alignment"] + learners_, rows))
    return 0


def add_parser(sub):
    s = sub.add_parser("sigma", help="kernel-width rule: alignment scores, optionally against a sweep")
    s.add_argument("--dataset", default="german", help="registered name or a data file (as okl run)")
    s.add_argument("--first", type=int, default=1000, help="examples the rule may look at (default 1000)")
    s.add_argument("--sweep", action="store_true", help="also run learners at every width")
    s.add_argument("--wide", action="store_true", help="include SkeGD's grid 2^[-5:0.5:7]")
    s.add_argument("--learners", default="nogd,fogd")
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--budget", type=int)
    s.add_argument("--max-rows", type=int)
    s.set_defaults(func=cmd_sigma)
    add_source_options(s)
    add_data_dir_options(s)
    return s
