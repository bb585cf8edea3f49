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

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from okl.data.readers import DataFormatError, numeric_table, read_arff, read_csv, read_delimited, read_svmlight
from okl.data.width import DEFAULT_WIDTHS, select_sigma

#: adversarial presets (okl.data.adversarial): name -> (base dataset, k_b, k_r); codrna values
#: are our choice (see okl.data.adversarial's docstring). Kept here, with the dataset names, so
#: that the registry can resolve a preset without importing the stream transforms.
ADVERSARIAL_PRESETS: dict[str, tuple[str, int, int]] = {
    "german-1": ("german", 500, 10),
    "german-2": ("german", 500, 20),
    "codrna-1": ("codrna", 500, 10),
    "codrna-2": ("codrna", 500, 20),
}

#: presets whose block sizes are a protocol choice of ours, not the paper's
CHOSEN_PRESETS = ("codrna-1", "codrna-2")

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
    source: str = ""  # canonical public page (LIBSVM data page, UCI repository, OpenML)
    licence: str = ""
    citation: str = ""
    #: False for a ``NAME:raw`` variant: the file's feature values as stored (no min-max scaling)
    scaled: bool = True

    @property
    def preprocessing(self) -> str:
        """What okl applies to the stored files (the module docstring), plus this set's own choices."""
        steps = ["files merged in the order listed" if len(self.files) > 1 else "one file",
                 "features min-max scaled to [0, 1] (constant columns -> 0)" if self.scaled
                 else "features as stored in the file (raw values, no scaling)",
                 "labels -> -1/+1" if self.task == "classification" else "target min-max scaled to [0, 1]"]
        return "; ".join(steps) + (f"; {self.note}" if self.note else "")

    @property
    def stored_files(self) -> tuple["FileSource", ...]:
        """Where each file comes from and its checksums (:data:`FILE_SOURCES`)."""
        return tuple(FILE_SOURCES[f] for f in self.files)


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

# ---- sources, checksums, licences ---------------------------------------------------------------
# The stored layout and the checksums are those of ../shared/datasets (its README.md tables): every
# stored file is gzip text; ``sha256`` is that of the stored .gz (what a mirror serves and what
# ``okl fetch --mirror`` checks), ``raw_sha256`` that of its decompressed content (what ``okl fetch``
# checks after converting a download from the canonical source: line endings -> LF, final newline,
# ``drop_prefix`` lines removed, then gzip).

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"


@dataclass(frozen=True)
class FileSource:
    """One stored file: its path in the stored layout, checksums, and where it is downloaded from.

    ``fmt`` is the format of the download: ``text`` (plain), ``gz`` (already the stored file),
    ``bz2``, or ``tar:MEMBER`` (a gzip tar archive holding the file). ``download_sha256`` is the
    checksum of the downloaded bytes when it is known (pinned copies); otherwise the content is
    checked by ``raw_sha256`` after conversion.
    """

    path: str            # e.g. "libsvm/cod-rna.t.gz", also the path under a mirror URL
    size: int            # bytes of the stored .gz
    sha256: str          # of the stored .gz
    raw_sha256: str      # of the decompressed content
    url: str             # canonical download
    fmt: str = "text"
    download_sha256: str | None = None
    drop_prefix: str | None = None   # drop source lines starting with this (UCI adult.test's "|1x3 ...")
    provenance: str = ""             # the copy the stored file was made from (datasets README)

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]


#: every stored file (the table is data: ``okl/data/files.json``, one :class:`FileSource` a row)
_FILES = [FileSource(**row) for row in json.loads(resources.files("okl.data").joinpath("files.json").read_text())]


#: stored file name -> :class:`FileSource`
FILE_SOURCES: dict[str, FileSource] = {f.filename: f for f in _FILES}

_UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"
_LIBSVM_CITE = ("C.-C. Chang and C.-J. Lin, LIBSVM: a library for support vector machines, ACM TIST 2(3), 2011 "
                "(LIBSVM data page); ")
_LIBSVM_LICENCE = "no licence stated on the LIBSVM page; see the original source"
_OPENML_LICENCE = "public (OpenML); PMLB / Torgo collection copies"

#: name -> (canonical source page, licence, citation)
_SOURCES = {
    "german": (f"{LIBSVM}/binary.html#german.numer", _UCI_LICENCE + " for the original Statlog data",
               _LIBSVM_CITE + "H. Hofmann, Statlog (German Credit Data), UCI, 1994"),
    "svmguide3": (f"{LIBSVM}/binary.html#svmguide3", _LIBSVM_LICENCE,
                  _LIBSVM_CITE + "C.-W. Hsu, C.-C. Chang, C.-J. Lin, A practical guide to support vector "
                  "classification, 2003"),
    "spambase": ("https://archive.ics.uci.edu/dataset/94/spambase", _UCI_LICENCE,
                 "M. Hopkins, E. Reeber, G. Forman, J. Suermondt, Spambase, UCI, 1999"),
    "codrna": (f"{LIBSVM}/binary.html#cod-rna", _LIBSVM_LICENCE,
               _LIBSVM_CITE + "A. V. Uzilov, J. M. Keegan, D. H. Mathews, BMC Bioinformatics 7:173, 2006"),
    "codrna-train": (f"{LIBSVM}/binary.html#cod-rna", _LIBSVM_LICENCE,
                     _LIBSVM_CITE + "A. V. Uzilov, J. M. Keegan, D. H. Mathews, BMC Bioinformatics 7:173, 2006"),
    "ijcnn1": (f"{LIBSVM}/binary.html#ijcnn1", _LIBSVM_LICENCE,
               _LIBSVM_CITE + "D. Prokhorov, IJCNN 2001 neural network competition"),
    "svmguide1": (f"{LIBSVM}/binary.html#svmguide1", _LIBSVM_LICENCE,
                  _LIBSVM_CITE + "C.-W. Hsu, C.-C. Chang, C.-J. Lin, A practical guide to support vector "
                  "classification, 2003"),
    "cpusmall": (f"{LIBSVM}/regression.html#cpusmall", _LIBSVM_LICENCE,
                 _LIBSVM_CITE + "Delve, comp-activ (University of Toronto)"),
    "cadata": (f"{LIBSVM}/regression.html#cadata", "StatLib; as distributed by scikit-learn "
               "(fetch_california_housing)", _LIBSVM_CITE + "R. K. Pace and R. Barry, Sparse spatial "
               "autoregressions, Statistics and Probability Letters 33, 1997"),
    "parkinson": ("https://archive.ics.uci.edu/dataset/189/parkinsons+telemonitoring", _UCI_LICENCE,
                  "A. Tsanas, M. A. Little, P. E. McSharry, L. O. Ramig, IEEE Trans. Biomed. Eng. 57(4), 2010"),
    "pol": ("https://www.openml.org/d/722", _OPENML_LICENCE,
            "OpenML 201/722 pol (L. Torgo's regression collection); PMLB, R. S. Olson et al., BioData Mining 2017"),
    "house16h": ("https://www.openml.org/d/821", _OPENML_LICENCE,
                 "OpenML 574/821 house_16H (US Census via Delve); PMLB, R. S. Olson et al., BioData Mining 2017"),
    "elevators": ("https://www.openml.org/d/846", _OPENML_LICENCE,
                  "OpenML 216/846 elevators (L. Torgo's regression collection)"),
    "ailerons": ("https://www.openml.org/d/734", _OPENML_LICENCE,
                 "OpenML 296/734 ailerons (L. Torgo's regression collection)"),
    "adult": ("https://archive.ics.uci.edu/dataset/2/adult", _UCI_LICENCE,
              "R. Kohavi and B. Becker, Adult, UCI, 1996"),
    "splice": ("https://www.openml.org/d/46", _UCI_LICENCE + " (UCI Molecular Biology, Splice-junction)",
               "G. Towell, M. Noordewier, J. Shavlik, Splice-junction Gene Sequences, UCI, 1991"),
}

# each default width is the one okl.data.width.DEFAULT_WIDTHS records (see regenerate_widths)
_SPECS = [DatasetInfo(**{**d.__dict__, "source": _SOURCES[d.name][0], "licence": _SOURCES[d.name][1],
                         "citation": _SOURCES[d.name][2], "sigma": DEFAULT_WIDTHS.get(d.name, d.sigma)})
          for d in _SPECS]

REGISTRY: dict[str, DatasetInfo] = {d.name: d for d in _SPECS}



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


#: suffix of a registered name whose features are read as the file stores them (``codrna:raw``):
#: the published-settings protocol of the paper tables (the authors' code read the LIBSVM values)
RAW_SUFFIX = ":raw"


def dataset_info(name: str) -> DatasetInfo:
    """The registry entry of ``name``; ``NAME:raw`` is NAME with its features left unscaled.

    >>> info = dataset_info("codrna:raw")
    >>> info.files, info.rows, info.scaled
    (('cod-rna.t.gz',), 271617, False)
    """
    base = name[:-len(RAW_SUFFIX)] if name.endswith(RAW_SUFFIX) else name
    if base not in REGISTRY:
        raise ValueError(f"unknown dataset {name!r}; registered: {', '.join(sorted(REGISTRY))} "
                         f"(each also as NAME{RAW_SUFFIX}: features unscaled)")
    info = REGISTRY[base]
    if base != name:
        from dataclasses import replace

        info = replace(info, name=name, scaled=False)
    return info


def datasets(data_dir=None, available_only: bool = False) -> list[DatasetInfo]:
    """Registered datasets (optionally only those whose files are found)."""
    out = list(REGISTRY.values())
    if available_only:
        out = [d for d in out if find_files(d.name, data_dir) is not None]
    return out


@lru_cache(maxsize=8)
def _load_cached(name: str, paths: tuple[str, ...]):
    info = dataset_info(name)
    X, y = info.reader(list(paths))
    X = np.asarray(X, dtype=np.float64)
    if info.scaled:
        X = minmax_scale(X)
    y = np.asarray(y, dtype=np.float64)
    if info.task == "regression":
        y = minmax_scale(y[:, None])[:, 0]
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def fetch_hint(names, data_dir=None) -> str:
    """The prompt-free advice for missing registered datasets: the command that downloads them."""
    where = f" --data-dir {data_dir}" if data_dir is not None else ""
    sources = "; ".join(f"{n}: {dataset_info(n).source}" for n in names)
    return (f"Download with: okl fetch {' '.join(names)}{where} (add --mirror URL for a local copy; "
            f"source {sources})")


def missing_datasets(names, data_dir=None) -> list[str]:
    """The registered datasets among ``names`` (adversarial presets resolved) whose files are not found."""
    out = []
    for name in names:
        base = ADVERSARIAL_PRESETS[name][0] if name in ADVERSARIAL_PRESETS else name
        if base in REGISTRY and base not in out and find_files(base, data_dir) is None:
            out.append(base)
    return out


def load_dataset(name: str, data_dir: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Load a registered dataset, preprocessed as the papers do (see the module docstring).

    >>> X, y = load_dataset("german")
    >>> X.shape, float(X.min()), float(X.max()), int((y == 1).sum())
    ((1000, 24), 0.0, 1.0, 300)
    >>> Xr, _ = load_dataset("german:raw")  # the file's values (german.numer_scale is in [-1, 1])
    >>> float(Xr.min()), float(Xr.max())
    (-1.0, 1.0)
    """
    info = dataset_info(name)
    paths = find_files(name, data_dir)
    if paths is None:
        searched = ", ".join(str(d) for d in data_dirs(data_dir))
        raise FileNotFoundError(
            f"dataset {name!r} needs {', '.join(info.files)}; not found in {searched} "
            f"(pass --data-dir or set OKL_DATA). {fetch_hint([name], data_dir)}")
    X, y = _load_cached(name, tuple(str(p) for p in paths))
    return X.copy(), y.copy()


def permutation(n: int, seed: int) -> np.ndarray:
    """The stream order of run ``seed``: ``numpy.random.default_rng(seed).permutation(n)``
    (the order used to rerun the authors' code, ALGORITHMS.md 9.9)."""
    return np.random.default_rng(seed).permutation(n)


# ---- the user's own files ------------------------------------------------------------------------

@dataclass(frozen=True)
class UserData:
    """A user's data file after the registry's preprocessing (:func:`load_file`)."""

    path: str
    X: np.ndarray
    y: np.ndarray
    task: str
    description: str  # one line: format, label column, label mapping, inferred task
    #: more than two classes: the labels, sorted; ``y`` then holds their indices (okl.MultiClass)
    classes: list | None = None


def _user_labels(path: str, labels: list, linenos: list[int], task: str | None):
    """Labels -> (y, task, mapping text, classes): two values -> -1/+1 (the larger number, or the later
    name in sorted order, is +1); more names, or more numbers with ``task="classification"`` ->
    classes (y their indices in sorted order, ``classes`` the labels; learned with one head per
    class, :class:`okl.runtime.multiclass.MultiClass`); more numeric values without a task -> a
    regression target. A label that is a number
    but not finite (``nan``, ``inf``: how many programs write a missing value) is refused by line,
    never taken as a class name beside the numeric ones."""
    for v, lineno in zip(labels, linenos):
        if isinstance(v, str) and _is_float(v) and _number(v) is None:
            raise DataFormatError(f"{path}:{lineno}: label {v!r} is not finite (a missing label?); "
                                  "remove the line or give it a label")
    numeric = all(isinstance(v, float) for v in labels) or all(_number(v) is not None for v in labels)
    values = [float(v) for v in labels] if numeric else [str(v) for v in labels]
    distinct = sorted(set(values))
    if len(distinct) < 2:
        raise DataFormatError(f"{path}: every label is {distinct[0]!r}; nothing to learn")
    if task is None:
        task = "classification" if len(distinct) == 2 or not numeric else "regression"
    fmt = (lambda v: f"{v:g}") if numeric else repr
    if task == "classification":
        if len(distinct) > 2:
            index = {v: k for k, v in enumerate(distinct)}
            y = np.array([index[v] for v in values], dtype=float)
            shown = ", ".join(fmt(v) for v in distinct[:8]) + (", ..." if len(distinct) > 8 else "")
            classes = [int(v) if numeric and float(v).is_integer() else v for v in distinct]
            return y, task, f"{len(distinct)} classes ({shown}): one-vs-rest", classes
        neg, pos = distinct
        y = np.where(np.asarray(values, dtype=object) == pos, 1.0, -1.0)
        return y, task, f"labels {fmt(neg)} -> -1, {fmt(pos)} -> +1", None
    if task != "regression":
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if not numeric:
        bad = next(i for i, v in enumerate(labels) if _number(v) is None)
        raise DataFormatError(f"{path}:{linenos[bad]}: target {labels[bad]!r} is not a number (regression)")
    y = np.asarray(values, dtype=float)
    return y, task, f"target {y.min():g}..{y.max():g} scaled to [0, 1]", None


def _is_float(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if np.isfinite(v) else None


def is_data_file(spec: str) -> bool:
    """True when ``spec`` names a file rather than a registered dataset or adversarial preset."""
    if spec in REGISTRY or spec in ADVERSARIAL_PRESETS or spec == "kuairec":
        return False
    return os.path.isfile(spec) or os.sep in spec or "/" in spec or "." in os.path.basename(spec)


def load_file(path: str | os.PathLike, label: str | int | None = None, sep: str | None = None,
              header: bool | None = None, task: str | None = None) -> UserData:
    """Load the user's own svmlight (plain/.gz/.bz2/.xz) or CSV/TSV file with the registry's
    preprocessing: features min-max scaled to [0, 1], two label values -> -1/+1 (the larger number,
    or the later name in sorted order, is +1), a numeric label with more values -> a regression target
    scaled to [0, 1]. CSV/TSV: quoted fields, header detected (or ``header``), label column
    ``label`` = "first", "last" (default), a 1-based number or a header name. Bad lines raise
    :class:`DataFormatError` naming file and line.

    The whole-file [0, 1] scaling uses the whole file (hindsight), but it changes no decision of a
    learner at its defaults: each learner fixes its own per-feature scale from its first rows
    (:mod:`okl.scaling`), which follows any per-feature affine map of the input. It matters only
    with ``scale=None`` or a given width, where it is the papers' preprocessing (the tables use
    it) and keeps ``--sigma`` in the units the registered sets are documented in.
    """
    from okl.data.readers import check_data_path, read_labeled_table, sniff_format

    path = os.fspath(path)
    check_data_path(path)
    fmt = sniff_format(path)
    if fmt == "svmlight":
        if label not in (None, "first"):
            raise ValueError(f"{path}: an svmlight file has its label first; --label does not apply")
        X, yraw = read_svmlight(path)
        labels, linenos = [float(v) for v in yraw], list(range(1, len(yraw) + 1))
        where = "svmlight, label first"
    else:
        X, labels, linenos, desc = read_labeled_table(path, label=label, sep=sep, header=header)
        name = f" {desc['label_name']!r}" if desc["label_name"] else ""
        where = (f"{desc['format']}, {'header' if desc['header'] else 'no header'}, label column "
                 f"{desc['label_column']}{name} of {desc['columns']}")
    given = task is not None
    y, task, mapping, classes = _user_labels(path, labels, linenos, task)
    X = minmax_scale(np.asarray(X, dtype=np.float64))
    if task == "regression":
        y = minmax_scale(y[:, None])[:, 0]
    text = (f"file {path}: {where}; {X.shape[0]} rows x {X.shape[1]} features scaled to [0, 1]; {mapping}; "
            f"task {task} ({'given' if given else 'inferred'})")
    return UserData(path, X, y, task, text, classes)


def regenerate_widths(data_dir=None) -> dict[str, float]:
    """The default widths of :data:`okl.data.width.DEFAULT_WIDTHS` computed anew (the rule of
    :func:`okl.data.width.select_sigma` on the first 1000 rows of permutation 0) for every
    registered dataset whose files are found:
    ``python -c "from okl.data.registry import regenerate_widths; print(regenerate_widths())"``."""
    out = {}
    for name in REGISTRY:
        if find_files(name, data_dir) is None:
            continue
        X, y = load_dataset(name, data_dir)
        order = permutation(len(y), 0)[:1000]
        out[name] = select_sigma(X[order], y[order])
    return out
