"""What every ``okl`` command shares: okl's argparse error convention, the numeric option
ranges checked before any work, ``--param NAME=VALUE`` parsing, the data-source options and the
loader behind ``--dataset``, and :func:`run_command` (a user's mistake is one line on stderr)."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys

from okl._validation import check_sigma, check_state_memory
from okl.data.registry import dataset_info, find_files, load_dataset
from okl.eval.sweep import applicable  # noqa: F401  (re-exported for the commands)
from okl.runtime.base import MAX_DIM
from okl.runtime.hyperparameters import BUDGET
from okl.runtime.registry import import_plugin

#: characters of an offending input echoed in an error message
ECHO_CHARS = 200
#: most runs (seeds) one command may ask for
MAX_RUNS = 10_000


def clip(text, limit: int = ECHO_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an offending input is echoed this way)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class OklArgumentParser(argparse.ArgumentParser):
    """argparse with okl's error convention: one line ``okl: error: ...`` on stderr, exit code 2,
    at most :data:`ECHO_CHARS` characters of any offending token (no usage block)."""

    def error(self, message):  # noqa: D401  (argparse API)
        self.exit(2, user_error(message) + "\n")


#: the range of every numeric option of every command (by destination name): the CLI checks each
#: before any work, whichever subcommand defined the option; ``check`` gets the value and returns
#: an error text or None
def _positive_finite(name):
    def check(v):
        if not math.isfinite(v) or v <= 0:
            return f"--{name} must be a finite number > 0, got {clip(v)}"
    return check


def _int_range(name, low, high=None):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            return f"--{name} must be an integer in [{low}, {'inf' if high is None else high}], got {clip(v)}"
    return check


NUMERIC_OPTIONS = {
    "runs": _int_range("runs", 1, MAX_RUNS),
    "max_rows": _int_range("max-rows", 1),
    "budget": _int_range("budget", BUDGET.low),  # (the learners' declared range)
    "first": _int_range("first", 1),
    "every": _int_range("every", 1),
    "dim": _int_range("dim", 1, MAX_DIM),
    "workers": _int_range("workers", 1, 4096),
    "blas_threads": _int_range("blas-threads", 1, 4096),
    "retries": _int_range("retries", 0, 100),
    "random_state": _int_range("random-state", 0, 2**63 - 1),
    "stats_every": _positive_finite("stats-every"),
    "timeout": _positive_finite("timeout"),
}

#: ``--param`` keys that a command's own option sets (by destination name): giving both is refused,
#: and ``--param`` alone is moved into the option, so the header, ``--csv`` and the memory check
#: see the value that runs (``--budget 50 --param budget=20`` ran B = 20 labelled 50)
OPTION_PARAMS = ("budget", "loss")
#: ``--param`` keys that take an object the command line cannot write, and the option that sets them
OBJECT_PARAMS = {"kernel": "--sigma WIDTH (a Gaussian kernel of that width)"}


def merge_param_options(args) -> None:
    """Move ``--param budget=...`` (and the other :data:`OPTION_PARAMS`) into their options; refuse
    the same setting given twice and ``--param`` keys of :data:`OBJECT_PARAMS` (ValueError)."""
    items = getattr(args, "param", None)
    if not items:
        return
    kept = []
    for item in items:
        key, sep, value = item.partition("=")
        key = key.replace("-", "_")
        if sep and key in OBJECT_PARAMS:
            raise ValueError(f"--param {clip(item)!r}: {key} is not a number or a name; set it with "
                             f"{OBJECT_PARAMS[key]}")
        if not (sep and key in OPTION_PARAMS and hasattr(args, key)):
            kept.append(item)
            continue
        option = "--" + key.replace("_", "-")
        if getattr(args, key) is not None:
            raise ValueError(f"{option} {getattr(args, key)} and --param {clip(item)} both set {key}; give it once")
        parsed = parse_value(value)
        if key == "budget":
            if isinstance(parsed, float) and parsed.is_integer():
                parsed = int(parsed)
            if isinstance(parsed, bool) or not isinstance(parsed, int):
                raise ValueError(f"--param {clip(item)}: budget must be an integer >= 1")
        elif not isinstance(parsed, str):
            raise ValueError(f"--param {clip(item)}: {key} must be a name")
        setattr(args, key, parsed)
    args.param = kept


def check_options(args) -> None:
    """Apply :data:`NUMERIC_OPTIONS` and the sigma rule to a parsed command line (ValueError),
    after :func:`merge_param_options`."""
    merge_param_options(args)
    for dest, check in NUMERIC_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or isinstance(value, str):  # strings: lists parsed by the command itself
            continue
        problem = check(value)
        if problem:
            raise ValueError(problem)
    plot = getattr(args, "plot", None)
    if isinstance(plot, str):
        check_plot_path(plot)
    names = getattr(args, "learners", None)
    if isinstance(names, str) and not any(n.strip() for n in names.split(",")):
        raise ValueError(f"--learners {names!r} names no learner; give comma-separated names, or leave the "
                         "option out where a default exists (okl.learners() lists them)")
    sigma = getattr(args, "sigma", None)
    if isinstance(sigma, float):
        check_sigma(sigma)
    follow = getattr(args, "follow", None)
    if isinstance(follow, float) and not (math.isfinite(follow) and follow >= 0):
        raise ValueError(f"--follow must be a finite number of seconds >= 0, got {clip(follow)}")
    seeds = getattr(args, "seeds", None)
    if isinstance(seeds, str):
        check_seeds(seeds)
    budget, dim = getattr(args, "budget", None), getattr(args, "dim", None)
    if isinstance(budget, int) or isinstance(dim, int):
        check_state_memory(budget if isinstance(budget, int) else None, dim if isinstance(dim, int) else None)


def check_plot_path(path: str) -> None:
    """``--plot FILE``: an image type matplotlib writes (from the suffix; none: PNG under that very
    name) in a directory that exists, checked before the run it would draw."""
    from okl.plotting import matplotlib

    matplotlib()  # an optional dependency: without it, what to install, before the run it would draw
    suffix = os.path.splitext(path)[1][1:].lower()
    if suffix:
        from matplotlib.backend_bases import FigureCanvasBase

        types = FigureCanvasBase.get_supported_filetypes()
        if suffix not in types:
            raise ValueError(f"--plot {clip(path)}: unknown image type {suffix!r} (give one of "
                             f"{', '.join(sorted(types))}, or no suffix for PNG)")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"--plot {clip(path)}: directory {directory} does not exist")


def check_seeds(text: str) -> list[int]:
    """``--seeds``: integers >= 0 (``0,1,5``, ``0,1,...,9`` or ``0:1:9``), at most MAX_RUNS of them."""
    from okl.eval.grid import parse_values

    hint = "give integers >= 0, e.g. 0,1,5 or 0,1,...,9 or 0:1:9"
    try:
        values = parse_values(text)
    except (ValueError, OverflowError):
        values = None
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                         or v < 0 or v != int(v) for v in values):
        raise ValueError(f"--seeds {clip(text)!r}: {hint}")
    if len(values) > MAX_RUNS:
        raise ValueError(f"--seeds {clip(text)!r}: {len(values)} seeds, at most {MAX_RUNS}")
    return [int(v) for v in values]


def parse_value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_params(items: list[str] | None) -> dict:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param expects NAME=VALUE, got {clip(item)!r}")
        out[key.replace("-", "_")] = parse_value(value)
    return out


def load_for_cli(args):
    """(base name, stream, task, X, y) of ``--dataset``: a registered name or preset, or a file path
    (svmlight / CSV / TSV, preprocessed like registered sets; its description is printed). A file
    with more than two classes gives task ``"multiclass"`` and y the class indices."""
    from okl.data.adversarial import parse_stream, resolve_dataset
    from okl.data.registry import is_data_file, load_file
    from okl.data.series import SERIES

    if args.dataset in SERIES and not is_data_file(args.dataset):
        return series_for_cli(args)
    if is_data_file(args.dataset):
        data = load_file(args.dataset, label=args.label, sep=args.sep,
                         header=None if args.header == "auto" else args.header == "yes", task=args.task)
        print(data.description)
        task = "multiclass" if data.classes is not None else data.task
        return args.dataset, parse_stream(getattr(args, "stream", None)), task, data.X, data.y
    for opt in ("label", "sep", "task"):
        if getattr(args, opt) is not None:
            raise ValueError(f"--{opt} applies to a data file, not to the registered dataset {args.dataset!r}")
    base, stream = resolve_dataset(args.dataset, getattr(args, "stream", None))
    info = dataset_info(base)
    if args.download and find_files(base, args.data_dir) is None:
        from okl.data.fetch import fetch_dataset

        fetch_dataset(base, args.data_dir, args.mirror, progress=not args.quiet, timeout=args.timeout,
                      log=lambda text: print(f"okl: {text}", file=sys.stderr))
    X, y = load_dataset(base, args.data_dir)
    return base, stream, info.task, X, y


def series_for_cli(args):
    """(name, stream, "regression", X, y) of a series of the literature (:data:`okl.data.series.SERIES`)
    as ``--dataset``: row t its time embedding of the literature's order (s_t .. s_{t-p+1}), the target
    s_{t+1}, the rows in time order (KAFBOX's one-step protocol, :func:`okl.data.series.embed`; the
    values as the file stores them). A permuted stream is refused: it would hand the learner the future."""
    from okl.data.adversarial import Identity, parse_stream
    from okl.data.series import SERIES, embed, load_series

    name = args.dataset
    for opt in ("label", "sep", "task"):
        if getattr(args, opt, None) is not None:
            raise ValueError(f"--{opt} applies to a data file, not to the series {name!r}")
    spec = getattr(args, "stream", None)
    stream = parse_stream("identity" if spec is None else spec)
    if not isinstance(stream, Identity):
        raise ValueError(f"--stream {spec}: the series {name!r} is learned in time order (a permuted or adversarial "
                         "stream would hand the learner later values); leave --stream out or give identity")
    X, y = embed(load_series(name, args.data_dir), SERIES[name][1])
    if not getattr(args, "quiet", False):
        print(f"{name}: {SERIES[name][2]}; rows: its time embedding of order {SERIES[name][1]}, the target the next "
              "value (one step ahead), in time order, values unscaled (okl forecast: every horizon)")
    return name, stream, "regression", X, y


def add_source_options(p) -> None:
    p.add_argument("--label", help="data file: the label column: first, last (default), a 1-based number or "
                                   "a header name")
    p.add_argument("--sep", help="data file: field separator (default: tab for .tsv, else comma)")
    p.add_argument("--header", choices=["auto", "yes", "no"], default="auto",
                   help="data file: whether the first line is a header (default: detected)")
    p.add_argument("--task", choices=["classification", "regression"],
                   help="data file: the task (default: inferred; two label values -> classification)")
    p.add_argument("--download", action="store_true",
                   help="fetch a missing registered dataset first (okl fetch; $OKL_MIRROR or --mirror)")
    p.add_argument("--mirror", help="with --download: base URL of a mirror of the stored layout")
    add_timeout_option(p)


def add_timeout_option(p) -> None:
    """``--timeout SECONDS`` of every command that downloads (okl.data.fetch explains the rule)."""
    from okl.data.fetch import DEFAULT_TIMEOUT, MIN_BYTES_PER_WINDOW

    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"downloads: give up on a server that sends nothing for SECONDS, or under "
                        f"{MIN_BYTES_PER_WINDOW} bytes in SECONDS (default {DEFAULT_TIMEOUT:g})")


def user_error(exc: BaseException | str) -> str:
    """The one line ``okl: error: ...`` for a user's mistake (no traceback)."""
    text = str(exc)
    if isinstance(exc, MemoryError):
        text = "not enough memory for this setting (lower --budget, --dim or --n-hashed, or the data size)" + (
            f": {text}" if text else "")
    for prefix in ("okl: error: ", "okl: ", "okl fetch: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    # a quoted input longer than ECHO_CHARS is cut there (the rest of the message is kept)
    text = re.sub(r"(['\"])([^'\"]{%d})[^'\"]*\1" % ECHO_CHARS, lambda m: f"{m.group(1)}{m.group(2)}...{m.group(1)}",
                  " ".join(text.split()))
    return f"okl: error: {clip(text, 3 * ECHO_CHARS)}"


def run_command(func, args) -> int:
    """Run a subcommand: every user mistake is one line on stderr and exit code 2; a failed
    download or an unreadable file (OSError) exit code 1."""
    from okl._jit import compile_notice, compile_notice_enabled
    from okl.plotting import PlotDependencyError

    was = compile_notice_enabled()
    if getattr(args, "quiet", False):
        compile_notice(False)  # --quiet: no compile notice either (restored after the command)
    try:
        for module in getattr(args, "imports", None) or ():
            import_plugin(module)  # (before the options: a learner it registers may be named there)
        check_options(args)
        return func(args)
    except (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError,
            MemoryError, OverflowError, KeyError, PlotDependencyError) as exc:
        print(user_error(exc), file=sys.stderr)
        return 2
    except OSError as exc:  # a failed download (okl.data.fetch.FetchError), a failing disk
        print(user_error(exc), file=sys.stderr)
        return 1
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(user_error(exc.code), file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        # Ctrl-C: one line saying what state the command leaves (``on_interrupt``, set by the
        # command), never a traceback; 130 = 128 + SIGINT, as a shell reports it
        note = getattr(args, "on_interrupt", None)
        print(f"okl: interrupted{'; ' + note if note else ''}", file=sys.stderr)
        return 130
    finally:
        compile_notice(was)




def add_import_option(p) -> None:
    """``--import MODULE`` (every command): a module on the path that registers learners
    (:mod:`okl.runtime.plugins`; installed packages use the entry-point group ``okl.learners``)."""
    p.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                   help="import MODULE first for the learners it registers (repeatable; also $OKL_PLUGINS; "
                        "worker processes import it too)")


def add_data_dir_options(p) -> None:
    """``--data-dir`` and ``--quiet`` (every command that reads registered data)."""
    p.add_argument("--data-dir", help="directory with the dataset files (else $OKL_DATA, ~/.okl/data)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
