"""What :mod:`okl.sklearn` does to a table before its learner sees it: the columns named by
``categorical=`` (indices, a boolean mask, column names or ``"from_dtype"``), their levels, a cell
that is not a number, and missing values.

Missing values, one rule on every adapter: a missing number (NaN in a numeric column of the
scikit-learn adapters and of a DataFrame given to River's ``learn_many``; ``None`` or an absent key in
River's dicts, where a NaN value is refused as a corrupt reading) is the value 0, as River's
sparse dicts have always read an absent key; a missing category (None or NaN in a categorical
column or key) is no level (every indicator 0). The learner's input scale (:mod:`okl.scaling`)
then treats that 0 as any other value. Where 0 is a meaningful value of a column, impute it
before (e.g. ``SimpleImputer`` with an indicator) so missing and 0 stay apart.
"""

from __future__ import annotations

import numbers

import numpy as np


def is_missing(v) -> bool:
    """None or a float NaN (pandas' and NumPy's missing value)."""
    return v is None or (isinstance(v, (float, np.floating)) and v != v)


def levels(column) -> list:
    """The distinct non-missing values of a column, sorted (by type name and repr when they do not
    compare)."""
    seen = list(dict.fromkeys(v for v in column.tolist() if not is_missing(v)))
    try:
        return sorted(seen)
    except TypeError:
        return sorted(seen, key=lambda v: (type(v).__name__, repr(v)))


def not_a_number(X, columns=None, names=None) -> None:
    """Raise the ValueError naming the first cell of ``columns`` (default every column) of X that
    is not a number, its row and column, and ``categorical=`` (a column of strings is a category)."""
    X = np.asarray(X, dtype=object)
    if X.ndim != 2:
        return
    for j in range(X.shape[1]) if columns is None else columns:
        for i, v in enumerate(X[:, j]):
            try:
                float(v)
            except (TypeError, ValueError):
                name = names[j] if names is not None else None
                hint = (f"categorical=[{name!r}]" if name is not None else f"categorical=[{j}]")
                where = f"column {j} ({name!r})" if name is not None else f"column {j}"
                raise ValueError(f"row {i}, {where}: {v!r} is not a number (if it holds categories, name it: "
                                 f"{hint}, or categorical='from_dtype' with a pandas category dtype)") from None


def category_dtype_columns(X) -> list[int]:
    """The columns of a pandas DataFrame whose dtype is ``category`` (none for anything else)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return []
    return [j for j, dt in enumerate(list(dtypes)) if getattr(dt, "name", None) == "category"]


def categorical_columns(categorical, X, d: int) -> list[int]:
    """The column indices named by ``categorical``: ``"from_dtype"`` (a DataFrame's ``category``
    columns, as scikit-learn's HistGradientBoosting reads it), column indices, column names of a
    DataFrame, or a boolean mask of length d."""
    if isinstance(categorical, str) and categorical == "from_dtype":
        return category_dtype_columns(X)
    if isinstance(categorical, (str, bytes)) or not hasattr(categorical, "__iter__"):
        raise ValueError(f"categorical must be None, 'from_dtype', a list of column indices or names, or a "
                         f"boolean mask, got {categorical!r} (one column: categorical=[{categorical!r}])")
    cols = list(categorical)
    if cols and all(isinstance(c, (bool, np.bool_)) for c in cols):
        if len(cols) != d:
            raise ValueError(f"categorical: a boolean mask needs {d} entries (one per column), got {len(cols)}")
        return [j for j, c in enumerate(cols) if c]
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    out = []
    for c in cols:
        if isinstance(c, str):
            if names is None:
                raise ValueError(f"categorical: column name {c!r} needs X as a pandas DataFrame with named "
                                 "columns (for an array give column indices)")
            if c not in names:
                raise ValueError(f"categorical: no column named {c!r}; X's columns: {', '.join(names)}")
            out.append(names.index(c))
        elif isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral) or not -d <= c < d:
            raise ValueError(f"categorical: column {c!r} is not an index of X's {d} columns")
        else:
            out.append(int(c) % d)
    if len(set(out)) != len(out):
        raise ValueError(f"categorical: a column is named twice in {categorical!r}")
    return sorted(out)


def zero_missing(X):
    """X with every NaN replaced by 0 (the missing-value rule of the module docstring): dense or
    CSR, copied only when it holds a NaN."""
    data = X.data if hasattr(X, "toarray") else X
    nan = np.isnan(data)
    if not nan.any():
        return X
    if hasattr(X, "toarray"):
        X = X.copy()
        X.data[np.isnan(X.data)] = 0.0
        X.eliminate_zeros()
        return X
    return np.where(nan, 0.0, X)
