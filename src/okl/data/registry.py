"""The dataset registry: names, files, assembly, preprocessing and per-dataset kernel widths.

``load_dataset(name)`` returns the dataset as the papers use it (DESIGN.md): train and test files
merged (train first), features min-max scaled to [0, 1] over the whole file (constant columns
become 0), binary labels mapped to -1/+1, regression targets min-max scaled to [0, 1]; rows in file
order (experiments permute them).

Files are looked up in ``data_dir``, then ``$OKL_DATA``, then ``~/.okl/data``; german also ships
inside the package so the demo runs anywhere. Each directory may hold the files flat or in the
sub-folders of the staged copy (``libsvm/``, ``uci/``, ``regression/``, ``openml/``).

Kernel widths
-------------
The Gaussian width decides results more than any algorithm (ALGORITHMS.md 9.9, 9.10). Each
dataset records a default ``sigma`` chosen by the rule of :mod:`okl.data.width` (SkeGD's kernel
alignment within a factor of two of the median pairwise distance, on the first 1000 examples of
permutation 0; no later example is looked at) together with that provenance; ``--sigma``
overrides it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from okl.data.readers import DataFormatError, numeric_table, read_arff, read_csv, read_delimited, read_svmlight

SUBDIRS = ("", "libsvm", "uci", "regression", "openml")


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    files: tuple[str, ...]
    task: str  # "classification" | "regression"
    rows: int
    features: int
    reader: Callable = field(repr=False, compare=False, default=None)
    sigma: float = 1.0
    sigma_rule: str = ""
    note: str = ""


def minmax_scale(X: np.ndarray) -> np.ndarray:
    """Scale each column to [0, 1]; constant columns become 0."""
    lo = X.min(axis=0)
    span = X.max(axis=0) - lo
    span[span == 0] = 1.0
    return (X - lo) / span


def _binary(y: np.ndarray, positive) -> np.ndarray:
    return np.where(positive(y), 1.0, -1.0)


# ---- per-dataset readers: (paths) -> (X raw, y raw) ------------------------------------------

def _svmlight(n_features):
    def reader(paths):
        parts = [read_svmlight(p, n_features=n_features) for p in paths]
        return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return reader


def _csv_last(sep=",", header=False):
    def reader(paths):
        parts = [read_csv(p, sep=sep, header=header) for p in paths]
        return np.vstack([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return reader


def _cadata(paths):
    X, y = read_csv(paths[0])
    return X[:, [7, 2, 3, 4, 5, 6, 1, 0]], y  # LIBSVM cadata column order (datasets README, B)


def _parkinson(paths):
    # Columns: subject#, age, sex, test_time, motor_UPDRS, total_UPDRS, 16 voice measures.
    # PNK's "5875 x 20" is read as: both UPDRS scores removed (the target and its near-copy),
    # the other 20 columns kept. Target: total_UPDRS.
    names, rows, linenos = read_delimited(paths[0], header=True)
    table = numeric_table(paths[0], rows, linenos)
    target = names.index("total_UPDRS")
    drop = [names.index("motor_UPDRS"), target]
    return np.delete(table, drop, axis=1), table[:, target]


def _pmlb(paths):
    names, rows, linenos = read_delimited(paths[0], sep="\t", header=True)
    table = numeric_table(paths[0], rows, linenos)
    t = names.index("target")
    return np.delete(table, t, axis=1), table[:, t]


def _arff_numeric(paths):
    data, names = read_arff(paths[0])
    table = np.column_stack([np.asarray(data[n], dtype=float) for n in names])
    return table[:, :-1], table[:, -1]


ADULT_CATEGORICAL = (1, 3, 5, 6, 7, 8, 9, 13)


def _adult(paths):
    rows = []
    for p in paths:
        _, r, linenos = read_delimited(p, sep=",")
        for fields, lineno in zip(r, linenos):
            if len(fields) != 15:
                raise DataFormatError(f"{p}:{lineno}: {len(fields)} fields, expected 15")
            rows.append(fields)
    label = np.array([1.0 if f[14].rstrip(".") == ">50K" else -1.0 for f in rows])
    cols = []
    for c in range(14):
        col = [f[c] for f in rows]
        if c in ADULT_CATEGORICAL:
            cats = sorted(set(col))  # "?" is its own category: 108 columns as in OPFES Table 1
            index = {v: i for i, v in enumerate(cats)}
            onehot = np.zeros((len(col), len(cats)))
            onehot[np.arange(len(col)), [index[v] for v in col]] = 1.0
            cols.append(onehot)
        else:
            cols.append(np.array(col, dtype=float)[:, None])
    return np.hstack(cols), label


SPLICE_CODES = {"A": 0.0, "C": 1.0, "G": 2.0, "T": 3.0}


def _splice(paths):
    data, names = read_arff(paths[0])
    attrs = [n for n in names if n not in ("Instance_name", "Class")]
    seqs = [[v.decode() if isinstance(v, bytes) else v for v in row] for row in data[attrs]]
    cls = [c.decode() if isinstance(c, bytes) else c for c in data["Class"]]
    keep = [i for i, s in enumerate(seqs) if all(v in SPLICE_CODES for v in s)]
    X = np.array([[SPLICE_CODES[v] for v in seqs[i]] for i in keep])
    y = np.array([-1.0 if cls[i] == "N" else 1.0 for i in keep])
    return X, y


def _classification(reader, positive=lambda y: y > 0):
    def load(paths):
        X, y = reader(paths)
        return X, _binary(y, positive)
    return load


def _above_mean(reader):
    def load(paths):
        X, y = reader(paths)
        return X, _binary(y, lambda t: t > t.mean())
    return load


_RULE = ("kernel alignment over median-distance x 2^[-1:0.5:1], first 1000 examples of permutation 0")

_SPECS = [
    DatasetInfo("german", ("german.numer_scale.gz",), "classification", 1000, 24,
                _classification(_svmlight(24)), 1.0, _RULE),
    DatasetInfo("svmguide3", ("svmguide3.gz", "svmguide3.t.gz"), "classification", 1284, 22,
                _classification(_svmlight(22)), 1.0, _RULE),
    DatasetInfo("spambase", ("spambase.data.gz",), "classification", 4601, 57,
                _classification(_csv_last()), 1.0, _RULE, "label 1 = spam -> +1"),
    DatasetInfo("codrna", ("cod-rna.t.gz",), "classification", 271617, 8,
                _classification(_svmlight(8)), 1.0, _RULE, "LIBSVM cod-rna.t (sorted by label: permute!)"),
    DatasetInfo("codrna-train", ("cod-rna.gz",), "classification", 59535, 8,
                _classification(_svmlight(8)), 1.0, _RULE, "the file FORKS's TISVD study reads"),
    DatasetInfo("ijcnn1", ("ijcnn1.gz", "ijcnn1.t.gz"), "classification", 141691, 22,
                _classification(_svmlight(22)), 1.0, _RULE),
    DatasetInfo("svmguide1", ("svmguide1.gz", "svmguide1.t.gz"), "classification", 7089, 4,
                _classification(_svmlight(4)), 1.0, _RULE, "labels 0/1 -> -1/+1"),
    DatasetInfo("cpusmall", ("cpusmall.gz",), "regression", 8192, 12, _svmlight(12), 1.0, _RULE),
    DatasetInfo("cadata", ("cal_housing.data.gz",), "regression", 20640, 8, _cadata, 1.0, _RULE,
                "cal_housing.data reordered to LIBSVM cadata's columns"),
    DatasetInfo("parkinson", ("parkinsons_updrs.data.gz",), "regression", 5875, 20, _parkinson, 1.0, _RULE,
                "target total_UPDRS; motor_UPDRS and total_UPDRS removed, the other 20 columns kept "
                "(PNK's 20 features are undocumented)"),
    DatasetInfo("pol", ("pol.tsv.gz",), "classification", 15000, 48, _above_mean(_pmlb), 1.0, _RULE,
                "+1 when target > mean (OpenML 722); 22 constant columns kept (scaled to 0)"),
    DatasetInfo("house16h", ("house_16H.tsv.gz",), "classification", 22784, 16, _above_mean(_pmlb), 1.0,
                _RULE, "+1 when target > mean (OpenML 821)"),
    DatasetInfo("elevators", ("elevators.arff.gz",), "classification", 16599, 18,
                _above_mean(_arff_numeric), 1.0, _RULE, "+1 when target > mean (OpenML 846)"),
    DatasetInfo("ailerons", ("ailerons.arff.gz",), "classification", 13750, 40,
                _above_mean(_arff_numeric), 1.0, _RULE, "+1 when target > mean (OpenML 734)"),
    DatasetInfo("adult", ("adult.data.gz", "adult.test.gz"), "classification", 48842, 108, _adult, 1.0,
                _RULE, "one-hot categoricals ('?' a category of its own); >50K -> +1"),
    DatasetInfo("splice", ("splice.arff.gz",), "classification", 3175, 60, _splice, 1.0, _RULE,
                "15 rows with ambiguous codes dropped; A,C,G,T -> 0..3; N -> -1, EI/IE -> +1"),
]

REGISTRY: dict[str, DatasetInfo] = {d.name: d for d in _SPECS}


def _apply_widths() -> None:
    from okl.data.width import DEFAULT_WIDTHS

    for name, sigma in DEFAULT_WIDTHS.items():
        info = REGISTRY[name]
        REGISTRY[name] = DatasetInfo(**{**info.__dict__, "sigma": sigma})


_apply_widths()


def data_dirs(data_dir: str | os.PathLike | None = None) -> list[Path]:
    """The directories searched, in order: ``data_dir``, ``$OKL_DATA``, ``~/.okl/data``."""
    dirs = []
    if data_dir is not None:
        dirs.append(Path(data_dir).expanduser())
    if os.environ.get("OKL_DATA"):
        dirs.append(Path(os.environ["OKL_DATA"]).expanduser())
    dirs.append(Path("~/.okl/data").expanduser())
    return dirs


def _bundled(filename: str) -> Path | None:
    p = resources.files("okl.data").joinpath("bundled", filename)
    return Path(str(p)) if p.is_file() else None


def find_files(name: str, data_dir=None) -> list[Path] | None:
    """Paths of the dataset's files, or None if some file is in no searched directory."""
    info = dataset_info(name)
    found = []
    for fname in info.files:
        path = None
        for d in data_dirs(data_dir):
            for sub in SUBDIRS:
                cand = d / sub / fname
                if cand.is_file():
                    path = cand
                    break
            if path:
                break
        path = path or _bundled(fname)
        if path is None:
            return None
        found.append(path)
    return found


def dataset_info(name: str) -> DatasetInfo:
    if name not in REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; registered: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def datasets(data_dir=None, available_only: bool = False) -> list[DatasetInfo]:
    """Registered datasets (optionally only those whose files are found)."""
    out = list(REGISTRY.values())
    if available_only:
        out = [d for d in out if find_files(d.name, data_dir) is not None]
    return out


@lru_cache(maxsize=8)
def _load_cached(name: str, paths: tuple[str, ...]):
    info = REGISTRY[name]
    X, y = info.reader(list(paths))
    X = minmax_scale(np.asarray(X, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    if info.task == "regression":
        y = minmax_scale(y[:, None])[:, 0]
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def load_dataset(name: str, data_dir: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load a registered dataset, preprocessed as the papers do (see the module docstring).

    >>> X, y = load_dataset("german")
    >>> X.shape, float(X.min()), float(X.max()), int((y == 1).sum())
    ((1000, 24), 0.0, 1.0, 300)
    """
    info = dataset_info(name)
    paths = find_files(name, data_dir)
    if paths is None:
        searched = ", ".join(str(d) for d in data_dirs(data_dir))
        raise FileNotFoundError(
            f"dataset {name!r} needs {', '.join(info.files)}; not found in {searched} "
            "(pass --data-dir or set OKL_DATA)")
    X, y = _load_cached(name, tuple(str(p) for p in paths))
    return X.copy(), y.copy()


def permutation(n: int, seed: int) -> np.ndarray:
    """The stream order of run ``seed``: ``numpy.random.default_rng(seed).permutation(n)``
    (the order used to rerun the authors' code, ALGORITHMS.md 9.9)."""
    return np.random.default_rng(seed).permutation(n)
