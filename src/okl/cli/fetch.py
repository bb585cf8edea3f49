"""``okl fetch``: download registered datasets (checksum-verified) into the data directory."""

from __future__ import annotations

import sys

from okl.cli._common import add_data_dir_options, add_timeout_option
from okl.data.registry import dataset_info, datasets

def cmd_fetch(args) -> int:
    from okl.data.fetch import FetchError, fetch_dataset, fetch_test_files, target_dir

    opts = dict(retries=args.retries, progress=not args.quiet, force=args.force, log=print, timeout=args.timeout)
    if args.tests:
        if args.names or args.all:
            raise ValueError("okl fetch: --tests fetches the test suite's files; give it without names or --all")
        try:
            paths = fetch_test_files(args.data_dir, args.mirror, **opts)
        except FetchError as exc:
            print(f"okl fetch: error: tests: {exc}", file=sys.stderr)
            return 1
        where = target_dir(args.data_dir)
        print(f"the {len(paths)} files the tests read are in {where}"
              + ("" if args.data_dir is None else f"; run the tests with OKL_TEST_DATA={where}"))
        return 0
    names = sorted(d.name for d in datasets()) if args.all else args.names
    if not names:
        raise ValueError("okl fetch: name at least one dataset (or --all, or --tests); okl datasets lists them")
    for name in names:
        dataset_info(name)  # unknown names fail before any download
    failed = 0
    for name in names:
        try:
            fetch_dataset(name, args.data_dir, args.mirror, **opts)
        except FetchError as exc:
            print(f"okl fetch: error: {name}: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def add_parser(sub):
    f = sub.add_parser("fetch", help="download registered datasets (checksum-verified) into the data directory")
    f.add_argument("names", nargs="*", metavar="NAME")
    f.add_argument("--all", action="store_true", help="every registered dataset")
    f.add_argument("--tests", action="store_true",
                   help="the files okl's test suite reads, in the layout the tests expect (then OKL_TEST_DATA=DIR "
                        "when --data-dir DIR is given)")
    f.add_argument("--mirror", metavar="URL_OR_DIR",
                   help="base URL serving the stored layout, e.g. URL/libsvm/cod-rna.t.gz, or a directory holding "
                        "it (default $OKL_MIRROR, else the canonical sources)")
    f.add_argument("--retries", type=int, default=3, help="retries of a failed transfer (default 3)")
    add_timeout_option(f)
    f.add_argument("--force", action="store_true", help="download again even if a verified copy is present")
    f.set_defaults(func=cmd_fetch, on_interrupt="nothing partial is left in the data directory "
                                                "(verified files stay; rerun to go on)")
    add_data_dir_options(f)
    return f
