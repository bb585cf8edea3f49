"""The user's own data: `okl run --dataset PATH` with svmlight and CSV/TSV files, and the CSV reader."""

import bz2
import csv
import gzip
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import okl
from okl.cli import main
from okl.data import DataFormatError, load_file, read_csv, read_svmlight
from okl.data.readers import read_delimited


@pytest.fixture(scope="module")
def german_raw():
    """german.numer_scale as published (features in [-1, 1], labels -1/+1) and its text (the copy okl bundles)."""
    path = Path(str(resources.files("okl.data").joinpath("bundled", "german.numer_scale.gz")))
    with gzip.open(path, "rt") as fh:
        text = fh.read()
    X, y = read_svmlight(path)
    return text, X, y


def _write_csv(path, X, y, header=True, label_last=True, quoting=csv.QUOTE_ALL, delimiter=","):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, quoting=quoting, delimiter=delimiter)
        names = [f"f{i + 1}" for i in range(X.shape[1])]
        if header:
            w.writerow(names + ["credit"] if label_last else ["credit"] + names)
        for xi, yi in zip(X, y):
            vals = [repr(float(v)) for v in xi]
            w.writerow(vals + [int(yi)] if label_last else [int(yi)] + vals)


def _row(out: str, learner: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith(f"| {learner} "))
    return [c.strip() for c in line.split("|")[2:-2]]


def test_german_written_by_the_user_runs_like_the_registered_set(german_raw, tmp_path, capsys):
    text, X, y = german_raw
    svm = tmp_path / "mine.svm"
    svm.write_text(text)
    mine_csv = tmp_path / "mine.csv"
    _write_csv(mine_csv, X, y)  # quoted fields, a header, the label last
    assert mine_csv.read_text().startswith('"f1","f2",') and '"-1.0"' in mine_csv.read_text()

    args = ["run", "--learners", "nogd,fogd,linear", "--runs", "3", "--quiet"]
    assert main(args + ["--dataset", "german"]) == 0
    registered = capsys.readouterr().out
    for path in (svm, mine_csv):
        assert main(args + ["--dataset", str(path)]) == 0
        out = capsys.readouterr().out
        assert f"file {path}:" in out and "task classification (inferred)" in out
        assert "labels -1 -> -1, 1 -> +1" in out and "1000 rows x 24 features" in out
        assert f"dataset {path}: T = 1000, d = 24, classification" in out
        for learner in ("nogd", "fogd", "linear"):
            assert _row(out, learner) == _row(registered, learner)
        assert 25.0 < float(_row(out, "nogd")[0].split("±")[0]) < 35.0
    assert "file " + str(mine_csv) + ": csv, header, label column 25 'credit' of 25" in out


@pytest.mark.parametrize("variant", ["svm.gz", "svm.bz2", "csv-first-noheader", "tsv", "csv-named-label"])
def test_every_layout_gives_the_registered_arrays(german_raw, tmp_path, variant):
    text, X, y = german_raw
    Xg, yg = okl.load_dataset("german")
    kw = {}
    if variant == "svm.gz":
        p = tmp_path / "g.svm.gz"
        with gzip.open(p, "wt") as fh:
            fh.write(text)
    elif variant == "svm.bz2":
        p = tmp_path / "g.txt.bz2"  # format sniffed from the content
        p.write_bytes(bz2.compress(text.encode()))
    elif variant == "csv-first-noheader":
        p = tmp_path / "g.csv"
        _write_csv(p, X, y, header=False, label_last=False, quoting=csv.QUOTE_MINIMAL)
        kw = {"label": "first"}
    elif variant == "tsv":
        p = tmp_path / "g.tsv"
        _write_csv(p, X, y, header=True, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
    else:
        p = tmp_path / "g.csv"
        _write_csv(p, X, y, header=True, label_last=False)
        kw = {"label": "credit"}
    d = load_file(p, **kw)
    assert d.task == "classification"
    np.testing.assert_array_equal(d.X, Xg)
    np.testing.assert_array_equal(d.y, yg)


def test_string_labels_and_regression_targets(tmp_path, capsys):
    p = tmp_path / "s.csv"
    p.write_text('a,b,outcome\n1,"2",no\n3,4,"yes"\n5,10,no\n')
    d = load_file(p)
    np.testing.assert_array_equal(d.y, [-1, 1, -1])
    np.testing.assert_array_equal(d.X, [[0, 0], [0.5, 0.25], [1, 1]])
    assert "labels 'no' -> -1, 'yes' -> +1" in d.description
    r = tmp_path / "r.csv"
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(300, 3))
    target = Xr @ [1.0, -2.0, 0.5] + 10
    np.savetxt(r, np.column_stack([Xr, target]), delimiter=",", header="x1,x2,x3,price", comments="")
    d = load_file(r)
    assert d.task == "regression" and d.y.min() == 0.0 and d.y.max() == 1.0
    np.testing.assert_allclose(d.y, (target - target.min()) / (target.max() - target.min()))
    assert main(["run", "--dataset", str(r), "--learners", "nogd", "--runs", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "task regression (inferred)" in out and "mean squared loss" in out


def test_quoted_fields_in_the_csv_reader(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('"0.1","0.2",1\n"0.3", "0.4" ,-1\n')
    X, y = read_csv(p)
    np.testing.assert_array_equal(X, [[0.1, 0.2], [0.3, 0.4]])
    np.testing.assert_array_equal(y, [1, -1])
    p.write_text('name,value\n"a, b",1\n"say ""hi""",2\n')
    names, rows, linenos = read_delimited(p, header=True)
    assert names == ["name", "value"] and rows == [["a, b", "1"], ['say "hi"', "2"]] and linenos == [2, 3]


@pytest.mark.parametrize("content, option, message", [
    ('a,b,y\n1,2,1\n3,"x",0\n', [], r"bad.csv:3: column 2 \('b'\) value 'x' is not a number"),
    ("a,b,y\n1,2,1\n3,4\n", [], r"bad.csv:3: 2 fields, expected 3"),
    ('a,b,y\n1,2,1\n3,"4,0\n5,6,1\n', [], r"bad.csv:3: a quoted field runs from line 3 to line 4 \(unbalanced quotes\?\)"),
    ("a,b,y\n1,2,1\n3,,0\n", [], r"bad.csv:3: column 2 \('b'\) is empty"),
    ("a,b,y\n1,2,1\n3,4,0\n", ["--label", "target"], r"bad.csv: no column named 'target' \(a, b, y\)"),
    ("1,2,1\n3,4,1\n", [], r"bad.csv: every label is 1.0"),
])
def test_bad_files_give_one_line_with_file_and_line(tmp_path, content, option, message):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    r = subprocess.run([sys.executable, "-m", "okl.cli", "run", "--dataset", str(p), "--learners", "linear",
                        "--runs", "1", "--quiet", *option], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("okl: error: ")
    import re
    assert re.search(message, lines[0]), lines[0]


def test_bad_svmlight_line_and_missing_file(tmp_path, capsys):
    p = tmp_path / "bad.svm"
    p.write_text("+1 1:0.5 2:1\n-1 2:abc\n")
    assert main(["run", "--dataset", str(p), "--quiet"]) == 2
    assert "bad.svm:2: value 'abc' of feature 2 is not a number" in capsys.readouterr().err
    assert main(["run", "--dataset", str(tmp_path / "none.csv"), "--quiet"]) == 2
    assert "none.csv: no such file" in capsys.readouterr().err
    with pytest.raises(DataFormatError):
        load_file(p)


def test_sigma_accepts_a_file(german_raw, tmp_path, capsys):
    text, _, _ = german_raw
    p = tmp_path / "mine.svm"
    p.write_text(text)
    assert main(["sigma", "--dataset", str(p), "--quiet"]) == 0
    from_file = capsys.readouterr().out
    assert main(["sigma", "--dataset", "german", "--quiet"]) == 0
    registered = capsys.readouterr().out
    choices = [line for line in from_file.splitlines() if line.startswith("choices:")][0]
    assert registered.split("choices: ")[1].startswith(choices[len("choices: "):])
