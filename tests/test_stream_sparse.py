"""``okl stream`` on svmlight lines as CSR rows (indices and values, no dense block) and on named
features hashed with a sign (``--n-hashed K``): the decisions of ``Learner.run`` on the dense matrix."""

from __future__ import annotations

import argparse
import io
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

import okl
from okl.categories import signed_bucket
from okl.cli.stream import add_stream_parser
from okl.data import DataFormatError, permutation
from okl.streaming import main as stream_main
from okl.streaming import runner as stream_runner
from okl.streaming.checkpoint import CheckpointError
from okl.streaming.lines import parse_hashed_line, parse_sparse_event
from okl.streaming.main import main_stream

N_EVENTS = 600
SIGMA = 0.25


def _run(argv, stdin: bytes | None = None):
    parser = argparse.ArgumentParser()
    add_stream_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    status = main_stream(parser.parse_args(["stream", *argv]), stdout=out, stderr=err,
                         stdin=None if stdin is None else io.BytesIO(stdin))
    return status, out.getvalue().splitlines(), err.getvalue()


def _table(out):
    return np.array([line.split("\t") for line in out], dtype=float)


def _recording(monkeypatch, seen: list, dense_row_limit: int | None = None):
    """build_learner wrapped: the learner says it takes CSR rows (``accepts_csr``) and records what
    the stream hands it; it learns them through its own dense loops (the rows densified here, in
    the test: the same arithmetic as the stream's dense path)."""
    build = stream_main.build_learner

    # (plain svmlight lines reach a CSR-taking learner dense, as okl run reads the file: the hand-off
    # of CSR rows is tested here on them by letting it take them)
    monkeypatch.setattr(stream_runner, "takes_csr", lambda learner, hashed: learner.accepts_csr is True)

    def wrapped(*args, **kwargs):
        learner = build(*args, **kwargs)
        cls, inner = type(learner), learner.events

        def rounds(X, y):
            seen.append(("block", X))
            assert sp.isspmatrix_csr(X) and X.has_sorted_indices
            if dense_row_limit is not None:  # (a wide block: one dense row at a time)
                return np.array([inner.learn_round(learner, X[i].toarray()[0], float(y[i]))
                                 for i in range(X.shape[0])])
            return inner.learn_rounds(learner, np.ascontiguousarray(X.toarray()), y)

        def one(x, y):
            if sp.issparse(x):
                seen.append(("row", x))
                assert sp.isspmatrix_csr(x) and x.shape[0] == 1
                x = x.toarray()[0]
            return inner.learn_round(learner, x, y)

        def predict(x):
            if sp.issparse(x):  # (the learner calls predict_one itself with dense rows)
                seen.append(("predict", x))
                assert sp.isspmatrix_csr(x) and x.shape[0] == 1
                x = x.toarray()[0]
            return cls.predict_one(learner, x)

        learner.accepts_csr = True
        class Recording:  # (the learner's per-event path, its rounds recorded)
            def __getattr__(self, name):
                return getattr(inner, name)

            def learn_rounds(self, _, X, y):
                return rounds(X, y)

            def learn_round(self, _, x, y):
                return one(x, y)

        learner.events, learner.predict_one = Recording(), predict
        return learner

    monkeypatch.setattr(stream_main, "build_learner", wrapped)


@pytest.fixture(scope="module")
def rows(svmguide1_rows):
    return svmguide1_rows(N_EVENTS)


def _nogd_argv(tmp_path, lines) -> list:
    """``okl stream``'s arguments for NOGD on ``lines`` written to in.svm (4 features, bad lines skipped)."""
    path = tmp_path / "in.svm"
    path.write_text("".join(lines))
    return ["--learner", "nogd", "--budget", "50", "--sigma", str(SIGMA), "--input", str(path), "--dim", "4",
            "--quiet", "--skip-bad"]


def _svmlight(X, y) -> str:
    return "".join("%d %s\n" % (yi, " ".join("%d:%.17g" % (j + 1, v) for j, v in enumerate(xi) if v != 0))
                   for xi, yi in zip(X, y))


def test_svmlight_stream_hands_csr_blocks_and_equals_run(tmp_path, rows, monkeypatch):
    """A learner that takes CSR rows gets every svmlight event as CSR (blocks and the per-line
    path), with the file's values; the decisions equal Learner.run on the dense matrix (1e-9) and
    the unwrapped stream's output (the dense hand-off of today) bit for bit."""
    X, y = rows
    lines = _svmlight(X, y).splitlines(keepends=True)
    # lines that go the per-line way: a bad one (skipped with --skip-bad) and an unlabelled event
    lines.insert(100, "4:0.5 1:1\n")  # (indices do not increase)
    lines.insert(300, "1:0.5 2:0.25\n")
    argv = _nogd_argv(tmp_path, lines)
    status, plain, _ = _run(argv)
    assert status == 0
    seen: list = []
    _recording(monkeypatch, seen)
    status, out, err = _run(argv)
    assert status == 0
    assert out == plain  # bit for bit: the CSR hand-off is the dense one's arithmetic
    assert "in.svm:101" in err and "does not increase" in err
    blocks = [x for kind, x in seen if kind == "block"]
    assert sum(b.shape[0] for b in blocks) == N_EVENTS and all(b.shape[1] == 4 for b in blocks)
    assert sum(b.nnz for b in blocks) == int(np.count_nonzero(X))
    np.testing.assert_array_equal(sp.vstack(blocks).toarray(), X)
    predicted = [x for kind, x in seen if kind == "predict"]
    assert len(predicted) == 1 and predicted[0].toarray().tolist() == [[0.5, 0.25, 0.0, 0.0]]
    table = _table(out)
    assert len(table) == N_EVENTS + 1
    keep = np.ones(len(table), dtype=bool)
    keep[299] = False  # (the unlabelled event: file line 301, after the skipped line 101)
    trace = okl.make("nogd", budget=50, kernel=okl.RBF(sigma=SIGMA), random_state=0).run(X, y)
    np.testing.assert_allclose(table[keep, 1], trace.decisions, rtol=0, atol=1e-9)


def test_bad_value_in_a_block_goes_the_per_line_way_as_csr_rows(tmp_path, rows, monkeypatch):
    """A bad value makes scikit-learn's block reader refuse the block: its lines go one at a time,
    each a 1 x d CSR row; the bad line is named, the others learned as in the dense stream."""
    X, y = rows
    lines = _svmlight(X[:200], y[:200]).splitlines(keepends=True)
    lines.insert(50, "+1 1:abc\n")
    argv = _nogd_argv(tmp_path, lines)
    status, plain, _ = _run(argv)
    seen: list = []
    _recording(monkeypatch, seen)
    status, out, err = _run(argv)
    assert status == 0 and out == plain and len(out) == 200
    assert "in.svm:51" in err and "value 'abc' of feature 1 is not a number" in err
    learned = [x for kind, x in seen if kind == "row"]
    assert len(learned) == 200 and all(x.shape == (1, 4) for x in learned)
    np.testing.assert_array_equal(sp.vstack(learned).toarray(), X[:200])


# ---- --n-hashed: named features, signed feature hashing ------------------------------------------


def _crc_column(name: str, k: int):
    """The hand computation: CRC-32 of repr(name), column h mod k, sign from bit 31."""
    h = zlib.crc32(repr(name).encode("utf-8"))
    return h % k, (-1.0 if h >= 2**31 else 1.0)


def test_hashed_line_hand_computed():
    k = 1 << 20
    label, cols, values = parse_hashed_line("+1 word:1 other:2.5 word:0.5 # comment\n", "in:1", k)
    expected = {}
    for name, v in (("word", 1.0), ("other", 2.5), ("word", 0.5)):
        c, s = _crc_column(name, k)
        expected[c] = expected.get(c, 0.0) + s * v
    assert label == 1.0
    assert cols.tolist() == sorted(expected)
    assert values.tolist() == [expected[c] for c in sorted(expected)]
    assert [signed_bucket(n, k) for n in ("word", "other")] == [
        tuple(int(v) for v in _crc_column(n, k)) for n in ("word", "other")]
    # the same hash as the River adapter's key: the name's repr; a name may hold ':' (the value is
    # after the last one); an unlabelled line starts with name:value
    label, cols, values = parse_hashed_line("url:http://a:3\n", "in:2", k)
    c, s = _crc_column("url:http://a", k)
    assert label is None and cols.tolist() == [c] and values.tolist() == [3 * s]
    row, label = parse_sparse_event("-1 a:2 b:1\n", "in:3", k, n_hashed=k)
    assert sp.isspmatrix_csr(row) and row.shape == (1, k) and row.nnz == 2 and label == -1.0
    for bad, problem in (("+1 word\n", "token 'word' is not name:value"), ("+1 :2\n", "token ':2' is not name:value"),
                         ("+1 w:abc\n", "value 'abc' of feature 'w' is not a number"),
                         ("+1 w:inf\n", "value 'inf' of feature 'w' is not finite"),
                         ("yes w:1\n", "label 'yes' is not a number")):
        with pytest.raises(DataFormatError, match=f"in:9: {problem}"):
            parse_hashed_line(bad, "in:9", k)


def _colliding_names(k: int):
    """Two names in one column of k, with opposite signs and with the same sign."""
    first = {}
    opposite = same = None
    for i in range(10000):
        name = f"w{i}"
        c, s = _crc_column(name, k)
        if c in first:
            other, t = first[c]
            if s != t and opposite is None:
                opposite = (other, name)
            if s == t and same is None:
                same = (other, name)
        else:
            first[c] = (name, s)
        if opposite and same:
            return opposite, same
    raise AssertionError("no collision found")


def test_hashed_collision_hand_computed():
    """Two names in one column: their signed values add (cancel when the signs differ)."""
    k = 16
    (a, b), (c, d) = _colliding_names(k)
    _, cols, values = parse_hashed_line(f"+1 {a}:2 {b}:2\n", "in:1", k)
    col, s = _crc_column(a, k)
    assert cols.tolist() == [col] and values.tolist() == [0.0]  # 2 s - 2 s
    _, cols, values = parse_hashed_line(f"+1 {c}:2 {d}:0.5\n", "in:1", k)
    col, s = _crc_column(c, k)
    assert cols.tolist() == [col] and values.tolist() == [2.5 * s]


def _text_stream(n: int, vocabulary: int = 50, words: int = 8, seed: int = 0):
    """A synthetic text stream: each event names ``words`` distinct words (counts 1-3); the label
    is the sign of the sum of the words' hidden weights."""
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal(vocabulary)
    lines, events = [], []
    for _ in range(n):
        ids = rng.choice(vocabulary, words, replace=False)
        counts = rng.integers(1, 4, words).astype(float)
        label = 1 if float(weight[ids] @ counts) >= 0 else -1
        events.append((label, [(f"tok{i}", v) for i, v in zip(ids, counts)]))
        lines.append(f"{label:+d} " + " ".join(f"tok{i}:{v:g}" for i, v in zip(ids, counts)) + "\n")
    return lines, events


def _hashed_dense(events, k: int):
    X = np.zeros((len(events), k))
    for r, (_, feats) in enumerate(events):
        for name, v in feats:
            c, s = _crc_column(name, k)
            X[r, c] += s * v
    return X, np.array([float(label) for label, _ in events])


@pytest.mark.parametrize("learner", ["linear", "nogd"])
def test_hashed_stream_equals_run_on_the_hand_hashed_matrix(tmp_path, learner):
    """--n-hashed 64 on a text stream: the decisions equal Learner.run on the matrix hashed by hand
    (collisions included: 50 words in 64 columns), to 1e-9."""
    k = 64
    lines, events = _text_stream(N_EVENTS)
    path = tmp_path / "text.svm"
    path.write_text("".join(lines))
    extra = ["--budget", "50"] if learner == "nogd" else []
    status, out, _ = _run(["--learner", learner, *extra, "--input", str(path), "--n-hashed", str(k), "--quiet"])
    assert status == 0
    X, y = _hashed_dense(events, k)
    model = okl.make(learner, random_state=0, **({"budget": 50} if learner == "nogd" else {}))
    trace = model.run(X, y)
    table = _table(out)
    np.testing.assert_allclose(table[:, 1], trace.decisions, rtol=0, atol=1e-9)
    rate = 100.0 * float(np.mean(np.where(table[:, 1] >= 0, 1.0, -1.0) != y))
    assert rate == pytest.approx(trace.mistake_rate, abs=1e-9)
    assert rate < {"linear": 25.0, "nogd": 30.0}[learner]  # measured 22.33 / 26.83 %; the majority class 36.17 %


def test_hashed_stream_hands_wide_csr_rows(tmp_path, monkeypatch):
    """--n-hashed 2^20: the learner gets CSR blocks 2^20 wide holding only the named values."""
    k = 1 << 20
    lines, events = _text_stream(120)
    path = tmp_path / "text.svm"
    path.write_text("".join(lines))
    seen: list = []
    _recording(monkeypatch, seen, dense_row_limit=1)
    status, out, _ = _run(["--learner", "linear", "--param", "scale=null", "--input", str(path),
                           "--n-hashed", str(k), "--quiet"])
    assert status == 0 and len(out) == 120
    blocks = [x for kind, x in seen if kind == "block"]
    assert sum(b.shape[0] for b in blocks) == 120 and all(b.shape[1] == k for b in blocks)
    assert sum(b.nnz for b in blocks) == 120 * 8


def test_hashed_stream_options_and_resume(tmp_path):
    lines, _ = _text_stream(50)
    path = tmp_path / "text.svm"
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match="--n-hashed .* does not apply to --format csv"):
        _run(["--format", "csv", "--n-hashed", "8", "--input", str(path)])
    with pytest.raises(ValueError, match="--dim 7 and --n-hashed 8"):
        _run(["--dim", "7", "--n-hashed", "8", "--input", str(path)])
    with pytest.raises(ValueError, match=r"--n-hashed must be an integer in \[1, "):
        _run(["--n-hashed", "0", "--input", str(path)])
    ck = tmp_path / "ck.okl"
    common = ["--learner", "linear", "--input", str(path), "--quiet", "--checkpoint", str(ck)]
    status, _, _ = _run(common + ["--n-hashed", "32"])
    assert status == 0
    with pytest.raises(CheckpointError, match="n_hashed = 32, now 16"):
        _run(common + ["--n-hashed", "16"])
    with pytest.raises(CheckpointError, match="n_hashed = 32, now None"):
        _run(common + ["--dim", "32"])


def test_auto_learns_plain_svmlight_lines_dense_and_hashed_names_sparse(tmp_path):
    """auto takes CSR rows (accepts_csr), but plain svmlight lines reach it dense: okl stream prints
    okl run's decisions on the same file (the dense rows' input map); --n-hashed lines reach it as
    CSR rows: run() on the hashed CSR matrix (its window kept sparse: centre 0)."""
    rng = np.random.default_rng(3)
    X = sp.random(400, 30, density=0.15, random_state=rng, format="csr")
    X.data[:] = 1.0
    y = np.where(np.asarray(X[:, :3].sum(axis=1)).ravel() > 0, 1.0, -1.0)
    path = tmp_path / "onehot.svm"
    path.write_text("".join("%d %s\n" % (yi, " ".join(f"{j + 1}:1" for j in X[i].indices)) if X[i].nnz
                            else "%d\n" % yi for i, yi in enumerate(y)))
    status, out, err = _run(["--learner", "auto", "--budget", "20", "--input", str(path), "--dim", "30", "--quiet",
                             "--random-state", "0"])
    assert status == 0, err
    dense = okl.make("auto", budget=20, random_state=0).run(X.toarray(), y).decisions
    np.testing.assert_allclose(_table(out)[:, 1], dense, rtol=1e-15, atol=1e-15)
    lines, events = _text_stream(300)
    path = tmp_path / "text.svm"
    path.write_text("".join(lines))
    status, out, err = _run(["--learner", "auto", "--budget", "20", "--input", str(path), "--n-hashed", "4096",
                             "--quiet", "--random-state", "0"])
    assert status == 0, err
    H, yh = _hashed_dense(events, 4096)
    m = okl.make("auto", budget=20, random_state=0)
    np.testing.assert_allclose(_table(out)[:, 1], m.run(sp.csr_matrix(H), yh).decisions, rtol=1e-15, atol=1e-15)
    assert not m.scale_center_.any()
