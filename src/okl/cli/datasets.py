"""``okl datasets``: the registered datasets, their sources and whether their files are found."""

from __future__ import annotations

from okl.cli._common import add_data_dir_options
from okl.data.registry import dataset_info, datasets, find_files
from okl.eval import markdown_table

def cmd_datasets(args) -> int:
    from okl.data.series import KAFBOX_SOURCE, SERIES, find_series

    if args.names:
        for name in args.names:
            if name in SERIES:  # a series of the literature: okl run embeds it in time order
                path = find_series(name, args.data_dir)
                print(f"## {name}\n\n- {SERIES[name][2]}; time series, embedding order {SERIES[name][1]} "
                      f"(okl run: one step ahead in time order; okl forecast --series {name}: every horizon)")
                print(f"- source: {KAFBOX_SOURCE.replace('NAME', name)}")
                print(f"- available: {path if path else f'no (kaf/{SERIES[name][0]} in a data directory)'}\n")
                continue
            info = dataset_info(name)
            paths = find_files(name, args.data_dir)
            print(f"## {name}\n")
            print(f"- {info.rows} rows x {info.features} features, {info.task}")
            print(f"- source: {info.source}")
            print(f"- licence: {info.licence}")
            print(f"- citation: {info.citation}")
            print(f"- preprocessing: {info.preprocessing}")
            print(f"- available: {', '.join(str(p) for p in paths) if paths else 'no (okl fetch ' + name + ')'}")
            for f in info.stored_files:
                known = f"sha256 {f.download_sha256}" if f.download_sha256 else "content checked by raw sha256"
                print(f"- file {f.path} ({f.size:,} B): sha256 (gz) {f.sha256}, sha256 (raw) {f.raw_sha256}")
                print(f"  download {f.url} ({f.fmt}; {known}); made from {f.provenance}")
            print()
        return 0
    rows = []
    for info in datasets():
        paths = find_files(info.name, args.data_dir)
        rows.append([info.name, info.rows, info.features, info.task, f"{info.sigma:g}",
                     "yes" if paths else "no (okl fetch)", info.source, info.note])
    for name, (_, order, what) in SERIES.items():
        found = "yes" if find_series(name, args.data_dir) else f"no (kaf/{SERIES[name][0]})"
        rows.append([name, "", order, "series", "", found, KAFBOX_SOURCE.replace("NAME", name),
                     f"{what}: embedded in time order (order = features)"])
    print(markdown_table(["name", "rows", "features", "task", "sigma", "available", "source", "note"], rows))
    print(f"\nsigma: {datasets()[0].sigma_rule} (okl sigma --dataset NAME shows the scores)")
    print("okl fetch NAME downloads a missing set (checksums, licence, citation: okl datasets NAME)")
    return 0


def add_parser(sub):
    d = sub.add_parser("datasets", help="list registered datasets, their sources and whether their files are found")
    d.add_argument("names", nargs="*", help="show these in full: files, URLs, sha256, licence, citation")
    d.set_defaults(func=cmd_datasets)
    add_data_dir_options(d)
    return d
