"""The fourth fault round: quoted CSV fields and class names in ``okl stream``, its first-line
multi-class message, its regression summary, the resume notice on stdin, and messages for strings
where numbers are expected (River, scikit-learn)."""

import argparse
import io

import numpy as np
import pytest

from okl.cli.stream import add_stream_parser
from okl.data.readers import DataFormatError, read_labeled_table, split_fields
from okl.streaming.main import main_stream


def _run(argv, stdin=None):
    parser = argparse.ArgumentParser()
    add_stream_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    status = main_stream(parser.parse_args(["stream", *argv]), stdout=out, stderr=err,
                         stdin=None if stdin is None else io.BytesIO(stdin))
    return status, out.getvalue().splitlines(), err.getvalue()


def _quoted(path, n=300, seed=0):
    r = np.random.default_rng(seed)
    rows, names = [], []
    for _ in range(n):
        a, b = r.normal(size=2)
        name = "big, red" if a + b > 0 else "small, blue"
        rows.append(f'"{a:.4f}",{b:.4f},"{name}"\n')
        names.append(name)
    path.write_text("".join(rows))
    return names


def test_one_csv_dialect_for_every_reader():
    assert split_fields('"1.2882",1.4494,"big, red"\n') == ["1.2882", "1.4494", "big, red"]
    assert split_fields('1, 2 ,"say ""hi"""') == ["1", "2", 'say "hi"']
    assert split_fields("1;2;3", ";") == ["1", "2", "3"]


def test_okl_stream_reads_quoted_fields_and_class_names_as_okl_run_does(tmp_path):
    path = tmp_path / "q.csv"
    names = _quoted(path)
    X_run, labels_run, _, _ = read_labeled_table(path)  # okl run's reader: the same fields
    status, out, err = _run(["--format", "csv", "--input", str(path), "--learner", "linear"])
    assert status == 0, err
    assert len(out) == len(names) and labels_run == names
    assert out[0].split("\t")[2] == "?"  # nothing learned yet: no class to name
    predicted = [line.split("\t")[2] for line in out[1:]]
    assert set(predicted) <= {"big, red", "small, blue"}
    mistakes = sum(p != y for p, y in zip(predicted, names[1:]))
    assert mistakes < 0.25 * len(names)  # a linear class boundary: learned (the majority is ~50 %)
    rate = float(err.split("mistake rate ")[1].split(" %")[0])
    assert rate == pytest.approx(100 * (mistakes + 1) / len(names), abs=0.01)  # (event 0: a mistake)


def test_class_names_survive_a_checkpoint_and_a_third_name_turns_the_stream_multiclass(tmp_path):
    r = np.random.default_rng(1)
    X = r.normal(size=(400, 2))
    cls = np.where(X[:, 0] < -0.4, 0, np.where(X[:, 0] < 0.4, 1, 2))
    cls[:80] = np.where(X[:80, 0] < 0, 0, 1)  # two names first
    lines = [f"{a:.5f},{b:.5f},{['cat', 'dog', 'emu'][c]}\n" for (a, b), c in zip(X, cls)]
    whole = tmp_path / "all.csv"
    whole.write_text("".join(lines))
    argv = ["--format", "csv", "--learner", "nogd", "--budget", "30"]
    status, reference, err = _run(argv + ["--input", str(whole)])
    order = list(dict.fromkeys(["cat", "dog", "emu"][c] for c in cls))  # (names in order of appearance)
    assert status == 0 and f"label 'emu' is a third class name (after the labels {order[0]!r} and {order[1]!r})" \
        in err, err
    part, ck = tmp_path / "part.csv", tmp_path / "ck.okl"
    part.write_text("".join(lines[:150]))
    status, first, _ = _run(argv + ["--input", str(part), "--checkpoint", str(ck), "--every", "50"])
    assert status == 0
    part.write_text("".join(lines))  # the rest arrives
    status, rest, err = _run(argv + ["--input", str(part), "--checkpoint", str(ck), "--every", "50"])
    assert status == 0, err
    assert first + rest == reference  # the names, and which is which, came back from the checkpoint
    assert {line.split("\t")[2] for line in reference[100:]} == {"cat", "dog", "emu"}


def test_a_number_among_names_is_refused_by_line(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_text("0.1,0.2,a\n0.3,0.1,b\n0.2,0.2,1\n")
    with pytest.raises(DataFormatError, match=r"mixed.csv:3: label 1 is a number, but this stream's labels are "
                                              r"names \('a', 'b'\)"):
        _run(["--format", "csv", "--input", str(path), "--learner", "linear"])


def test_a_zero_one_stream_says_what_it_saw_on_its_first_line(tmp_path):
    path = tmp_path / "b01.csv"
    r = np.random.default_rng(1)
    path.write_text("".join(f"{r.random():.4f},{r.random():.4f},{int(r.random() > .5)}\n" for _ in range(60)))
    status, _, err = _run(["--format", "csv", "--input", str(path), "--learner", "linear"])
    assert status == 0
    first = next(line for line in err.splitlines() if "b01.csv:" in line)
    assert "more than two classes" not in first and "is neither -1 nor +1" in first, first


def test_the_regression_summary_starts_at_the_second_labelled_event(tmp_path):
    r = np.random.default_rng(2)
    x = r.random(500)
    y = 1e9 + 1e3 * x
    path = tmp_path / "reg.csv"
    path.write_text("".join(f"{a:.4f},{b:.4f}\n" for a, b in zip(x, y)))
    status, out, err = _run(["--format", "csv", "--loss", "squared", "--input", str(path), "--learner", "linear"])
    assert status == 0, err
    f = np.array([float(line.split("\t")[1]) for line in out])
    expected = float(np.mean((f[1:] - y[1:]) ** 2))
    shown = float(err.split("mean squared loss ")[1].split()[0])
    assert shown == pytest.approx(expected, rel=1e-3) and shown < 1e7  # (with the first event: ~2e15)
    assert "from the second labelled event" in err


def test_resuming_on_stdin_says_how_many_bytes_it_skips(tmp_path):
    lines = [f"{i % 2 * 2 - 1} 1:{i / 100:.3f}\n" for i in range(100)]
    ck = tmp_path / "ck.okl"
    argv = ["--learner", "linear", "--dim", "1", "--input", "-", "--checkpoint", str(ck)]
    data = "".join(lines[:60]).encode()
    assert _run(argv, stdin=data)[0] == 0
    status, _, err = _run(argv, stdin="".join(lines).encode())
    assert status == 0
    assert f"on stdin its first {len(data):,} bytes (60 lines) are skipped unread" in err, err


def test_strings_where_numbers_are_expected_name_the_column_and_categorical():
    pytest.importorskip("river")
    from okl.river import OKLRiverClassifier
    from okl.sklearn import OKLClassifier

    m = OKLRiverClassifier(seed=0)
    for i in range(30):
        m.learn_one({"c": "ab"[i % 2], "v": i / 100}, i % 2 == 0)
    # None is a missing value (as an absent key: okl._tabular), not a non-numeric one
    assert m.predict_proba_one({"c": None, "v": 0.1}) == m.predict_proba_one({"v": 0.1})
    m.learn_one({"c": None, "v": 0.1}, True)
    with pytest.raises(ValueError, match=r"feature 'c' has a non-numeric value \[1\]; .*categorical=\['c'\]"):
        m.learn_one({"c": [1], "v": 0.1}, True)
    X = np.array([["a", 1.0], ["b", 2.0]] * 20, dtype=object)
    with pytest.raises(ValueError, match=r"row 0, column 0: 'a' is not a number .*categorical=\[0\]"):
        OKLClassifier().fit(X, [0, 1] * 20)
