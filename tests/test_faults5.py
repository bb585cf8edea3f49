"""Faults round five (issue 59): each test failed before its mend.

Numerical failures are NonFiniteErrors naming the hyperparameter and the direction, after which the
learner refuses every entry point until reset_state(); hyperparameters a per-event plan cannot hold
are refused at construction; sparse rows are checked and their width window stays sparse; the
registry validates a name before it changes anything; reproductions check their files' checksums.
"""

from __future__ import annotations

import numpy as np
import pytest

import okl
from okl.runtime.base import NonFiniteError
from okl.runtime.hyperparameters import param_names


def _repeated_rows():
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(30, 4)), 10, axis=0)
    return X, np.sin(X[:, 0])


# ---- 1, 9, 10: a numerical failure names the fix and leaves a learner that refuses to go on --------

@pytest.mark.parametrize("name, regularization", [("fb-krls", 1e-16), ("fb-krls", 1e-300), ("sw-krls", 1e-300)])
def test_window_krls_tiny_regularization_is_a_named_non_finite_error(name, regularization):
    X, y = _repeated_rows()
    m = okl.make(name, regularization=regularization, loss="squared")
    with pytest.raises(NonFiniteError, match=r"raise regularization") as err:
        m.run(X, y)
    msg = str(err.value)
    assert "threshold" not in msg and "lower the regular" not in msg.lower()
    assert msg.count("kernel width") == 1
    # 10: predict, learn and save are refused until reset_state()
    for call in (lambda: m.predict_one(X[0]), lambda: m.learn_one(X[0], 0.0), lambda: m.run(X[:2], y[:2]),
                 lambda: m.predict_many(X[:2]), lambda: m.learn_many(X[:2], y[:2])):
        with pytest.raises(NonFiniteError, match="reset_state"):
            call()


def test_failed_learner_is_not_saved_and_reset_state_makes_it_fresh(tmp_path):
    X, y = _repeated_rows()
    m = okl.make("fb-krls", regularization=1e-16, loss="squared")
    with pytest.raises(NonFiniteError):
        m.run(X, y)
    with pytest.raises(NonFiniteError, match="raise regularization"):
        m.save(tmp_path / "m.okl")
    assert not (tmp_path / "m.okl").exists()
    assert m.reset_state() is m and m.dim_ is None and m.n_seen_ == 0
    fresh = okl.make("fb-krls", regularization=1e-16, loss="squared")
    np.testing.assert_array_equal(m.run(X[:60], y[:60]).decisions, fresh.run(X[:60], y[:60]).decisions)
    m.save(tmp_path / "m.okl")


def test_fb_krls_per_event_failure_is_the_same_error():
    X, y = _repeated_rows()
    m = okl.make("fb-krls", regularization=1e-16, loss="squared")
    with pytest.raises(NonFiniteError, match=r"round 101 .*raise regularization"):
        for i in range(len(X)):
            m.learn_one(X[i], float(y[i]))
    assert i == 101
    with pytest.raises(NonFiniteError, match="reset_state"):
        m.predict_one(X[0])


def test_fast_plan_learner_refuses_after_a_failure():
    """FOGD's per-event plan is off after its failure: predict_one does not answer from the old state."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3)) * 1e3
    m = okl.make("fogd", eta=1e150, loss="squared", random_state=0)
    with pytest.raises(NonFiniteError, match="lower eta"):
        for x, t in zip(X, X[:, 0] * 1e90):
            m.predict_one(x)
            m.learn_one(x, float(t))
    with pytest.raises(NonFiniteError, match="reset_state"):
        m.predict_one(X[0])
    with pytest.raises(NonFiniteError, match="reset_state"):
        m.learn_one(X[0], 1.0)


@pytest.mark.parametrize("name", ["bpa-s", "bsgd", "pros-n-kons", "projectron", "krls", "krls-t", "linear"])
def test_every_hint_names_a_direction_and_a_parameter_of_the_learner(name):
    cls = okl.learner_class(name)
    hint = cls._divergence_hint
    verb, param = hint.split()[:2]
    assert verb in ("lower", "raise", "scale")
    if verb != "scale":
        assert param in param_names(cls), (name, hint)
    learner = okl.make(name)
    msg = str(pytest.raises(NonFiniteError, learner.events.non_finite, learner, 3).value)
    assert ("kernel width" in msg) == ("kernel" in param_names(cls))


# ---- 2: a quantization the per-event plan cannot hold is refused at construction ----------------

def test_qklms_quantization_beyond_the_merge_test_is_refused_by_name():
    with pytest.raises(ValueError, match=r"quantization=40\.0 .*at most 38\.5"):
        okl.make("qklms", quantization=40, loss="squared")
    X = np.random.default_rng(2).normal(size=(120, 4))
    m = okl.make("qklms", quantization=38.5, loss="squared")
    m.run(X, np.sin(X[:, 0]))
    assert np.isfinite(m.predict_one(X[0]))
    assert m.diagnostics()["centres"] == 1  # (every input merges into the first centre)


# ---- 3: sparse rows' indices are checked ---------------------------------------------------------

@pytest.mark.parametrize("name", ["auto", "fogd", "linear", "krls"])
@pytest.mark.parametrize("index", [-1, 20, 10 ** 6])
def test_sparse_row_with_an_index_outside_the_width_is_refused_by_name(name, index):
    import scipy.sparse as sp

    Xs = sp.random(300, 20, density=0.2, format="csr", random_state=1)
    ys = np.where(Xs.sum(1).A1 > 0.8, 1.0, -1.0)
    m = okl.make(name, random_state=0)
    m.run(Xs[:200], ys[:200])
    before = m.predict_many(Xs[200:210])
    row = sp.csr_matrix(([1.0], [index], [0, 1]), shape=(1, 20))
    for call in (lambda: m.predict_one(row), lambda: m.learn_one(row, -1.0), lambda: m.run(row, [-1.0]),
                 lambda: m.learn_many(row, [-1.0]), lambda: m.predict_many(row)):
        with pytest.raises(ValueError, match=rf"column index {index} in row 0 .*0\.\.19"):
            call()
    assert m.n_seen_ == 200
    np.testing.assert_array_equal(m.predict_many(Xs[200:210]), before)


def test_malformed_sparse_pointers_and_coo_indices_are_refused():
    import scipy.sparse as sp

    from okl._validation import check_matrix

    bad_ptr = sp.csr_matrix((np.array([1.0, 2.0]), np.array([0, 1]), np.array([0, 2, 1])), shape=(2, 3))
    with pytest.raises(ValueError, match="indptr"):
        check_matrix(bad_ptr, None, sparse=True)
    coo = sp.coo_matrix((np.array([1.0]), (np.array([0]), np.array([0]))), shape=(1, 3))
    coo.col[0] = -2
    with pytest.raises(ValueError, match=r"column index -2"):
        check_matrix(coo, None, sparse=True)


# ---- 6, 7, 13: the registry validates before it changes anything ------------------------------

@pytest.fixture
def registry_snapshot():
    from okl.runtime.registry import _BY_KIND

    saved = {k: dict(v) for k, v in _BY_KIND.items()}
    yield
    for k, v in saved.items():
        _BY_KIND[k].clear()
        _BY_KIND[k].update(v)


@pytest.mark.parametrize("bad", [3, "", "a,b", "NOGD", "has space", None])
def test_register_refuses_a_bad_name_and_the_registry_stays_usable(bad, registry_snapshot):
    from okl.learners.klms import KLMS

    before = okl.learners()
    with pytest.raises(ValueError, match="lower-case string"):
        okl.register(bad)(type("B", (KLMS,), {}))
    assert okl.learners() == before
    with pytest.raises(ValueError, match="unknown learner 'no-such'"):
        okl.make("no-such")


def test_a_refused_class_is_not_registered(registry_snapshot):
    with pytest.raises(ValueError, match=r"dict is not a learner class .*learn_one"):
        okl.register("notalearner")(dict)
    assert "notalearner" not in okl.learners()


def test_register_replace_and_builtins(registry_snapshot):
    from okl.learners.klms import KLMS

    first = okl.register("my-klms")(type("First", (KLMS,), {}))
    with pytest.raises(ValueError, match="already registered .*replace=True"):
        okl.register("my-klms")(type("Second", (KLMS,), {}))
    assert type(okl.make("my-klms")) is first
    second = okl.register("my-klms", replace=True)(type("Second", (KLMS,), {}))
    assert type(okl.make("my-klms")) is second and okl.learners().count("my-klms") == 1
    with pytest.raises(ValueError, match="one of okl's own learners"):
        okl.register("nogd", replace=True)(type("Mine", (KLMS,), {}))
    assert okl.learner_class("nogd").__name__ == "NOGD"


# ---- 11: any finite category code names a level -------------------------------------------------

def test_a_huge_category_code_names_a_level_on_every_entry_point():
    rng = np.random.default_rng(0)
    Xc = np.column_stack([rng.normal(size=200), rng.choice([1e200, 3.0, -1e300], size=200)])
    y = np.where(Xc[:, 0] > 0, 1.0, -1.0)
    m = okl.make("linear", categorical=[1])
    m.run(Xc[:150], y[:150])
    assert m.all_diagnostics()["categorical_levels"] == 3
    m.learn_one(Xc[150], y[150])
    m.learn_many(Xc[151:160], y[151:160])
    assert np.isfinite(m.predict_one(np.array([0.5, 7e250])))  # (a later level: hashed)
    assert m.predict_many(Xc[160:]).shape == (40,)
    with pytest.raises(ValueError, match=r"value 1e\+200 at column 0"):  # (a numeric column keeps its bound)
        m.predict_one(np.array([1e200, 3.0]))
    with pytest.raises(ValueError, match="non-finite value inf at column 1"):
        m.predict_one(np.array([0.5, np.inf]))


# ---- 12: River's warning for a key that held strings and now holds a number ---------------------

def test_river_warning_for_a_string_key_turned_number_says_so():
    river = pytest.importorskip("okl.river")
    m = river.OKLRiverClassifier("linear", n_hashed=0)
    rng = np.random.default_rng(0)
    for i in range(80):
        m.learn_one({"a": float(rng.normal()), "c": "x" if i % 2 else "y"}, bool(i % 2))
    with pytest.warns(RuntimeWarning, match=r"feature 'c' held strings .*number 5\.0.*categorical=\['c'\]") as rec:
        m.learn_one({"a": 0.3, "c": 5.0}, True)
    assert "first appeared" not in str(rec[0].message)
    assert m.n_ignored_values == 1


# ---- 5, 17: okl stream says what it skips and what a failed checkpoint leaves ------------------

def _stream(argv, stdin: bytes | None = None):
    import argparse
    import io

    from okl.cli.stream import add_stream_parser
    from okl.streaming.main import main_stream

    parser = argparse.ArgumentParser()
    add_stream_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    status = main_stream(parser.parse_args(["stream", *argv]), stdout=out, stderr=err,
                         stdin=None if stdin is None else io.BytesIO(stdin))
    return status, out.getvalue().splitlines(), err.getvalue()


def _csv_lines(n, seed=1):
    r = np.random.default_rng(seed)
    # (fixed-width lines: the second part's byte offsets fall on line ends as the first part's do)
    return [f"{a:+.4f},{b:+.4f},{1 if a + b > 0 else -1:+d}\n" for a, b in r.uniform(-9, 9, size=(n, 2))]


def test_stdin_resume_says_it_skips_even_with_quiet(tmp_path):
    lines = _csv_lines(600)
    (tmp_path / "part1.csv").write_text("".join(lines[:300]))
    ck = str(tmp_path / "ck.zip")
    status, out, err = _stream(["--format", "csv", "--input", str(tmp_path / "part1.csv"), "--checkpoint", ck,
                                "--quiet", "--learner", "linear"])
    assert status == 0 and len(out) == 300 and err == ""
    status, out, err = _stream(["--format", "csv", "--checkpoint", ck, "--quiet", "--learner", "linear"],
                               stdin="".join(lines[300:]).encode())
    assert status == 0 and len(out) < 300
    assert f"first {len(''.join(lines[:300]).encode()):,} bytes (300 lines) are skipped unread" in err


def test_a_failed_checkpoint_says_which_predictions_a_resume_repeats(tmp_path, monkeypatch):
    import errno

    import okl.streaming.runner as runner

    lines = _csv_lines(1000)
    (tmp_path / "in.csv").write_text("".join(lines))
    ck = tmp_path / "ck.zip"
    real, calls = runner.write_checkpoint, []

    def full_disk(path, *args):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, f"{path}: No space left on device")
        return real(path, *args)

    monkeypatch.setattr(runner, "write_checkpoint", full_disk)
    out = []
    with pytest.raises(OSError, match=r"checkpoint at event 400 could not be written .*No space left.*"
                                      r"still holds event 200; stdout already has the predictions of events "
                                      r"201\.\.400, which a resume prints again") as err:
        _stream(["--format", "csv", "--input", str(tmp_path / "in.csv"), "--checkpoint", str(ck), "--every", "200",
                 "--learner", "linear"])
    assert err.value.errno == errno.ENOSPC


# ---- 8, 16: reproductions check their series' checksums; --out names a directory -------------

def _lorenz_path(data_dir):
    from okl.data.series import find_series

    path = find_series("lorenz", data_dir)
    if path is None:
        pytest.skip("the KAF series are not staged")
    return path


def test_a_truncated_or_cut_series_is_named_with_the_fix(tmp_path, data_dir):
    import gzip

    from okl.data.readers import DataFormatError
    from okl.data.series import load_series

    src = _lorenz_path(data_dir)
    assert load_series("lorenz", data_dir).shape == (10001,)
    (tmp_path / "d1" / "kaf").mkdir(parents=True)
    (tmp_path / "d1" / "kaf" / "lorenz.dat.gz").write_bytes(src.read_bytes()[:30000])
    with pytest.raises(DataFormatError, match=r"lorenz\.dat\.gz: truncated or damaged gzip .*kafbox"):
        load_series("lorenz", tmp_path / "d1")
    lines = gzip.open(src, "rt").read().splitlines()[:2007]
    (tmp_path / "d2" / "kaf").mkdir(parents=True)
    with gzip.open(tmp_path / "d2" / "kaf" / "lorenz.dat.gz", "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=r"lorenz\.dat\.gz: checksum does not match.*2,007 values.*kafbox"):
        load_series("lorenz", tmp_path / "d2")


def test_reproduce_out_naming_a_file_is_a_usage_error(tmp_path, capsys):
    from okl.cli import main

    (tmp_path / "afile").write_text("")
    for out in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        assert main(["reproduce", "kaf-lorenz", "--quick", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "--out must be a directory" in err and "Errno" not in err


# ---- 14: check_learner names the check and the Plan field a broken plan misnames ---------------

def test_check_learner_on_a_plan_naming_a_missing_attribute(registry_snapshot):
    from okl import checks
    from okl.learners import LinearOGD
    from okl.components import Plan

    class MisnamedPlan(LinearOGD):
        def compiled_plan(self):
            plan = super().compiled_plan()
            return None if plan is None else Plan(plan.map, plan.step, w="weights_typo_", A=plan.A,
                                                  features=plan.features, eta=plan.eta, lr=plan.lr)

    okl.register("misnamed-plan")(MisnamedPlan)
    X = np.random.default_rng(0).normal(size=(80, 3))
    m = okl.make("misnamed-plan")
    m.run(X, np.where(X[:, 0] > 0, 1.0, -1.0))
    with pytest.raises(ValueError, match=r"compiled_plan\(\): Plan field w='weights_typo_' names no attribute"):
        m.predict_one(X[0])
    with pytest.raises(AssertionError, match=r"misnamed-plan: check_\w+ \[.*\]: ValueError: .*Plan field w="):
        checks.check_learner("misnamed-plan")


# ---- 4: the width window of sparse rows is not a dense (50 x d) buffer ------------------------

def _wide_rows(d, n=120, seed=0, high=None):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), 5)
    cols = np.sort(rng.choice(high or d, size=n * 5, replace=False))
    W = sp.csr_matrix((rng.normal(size=n * 5), (rows, cols)), shape=(n, d))
    W.sort_indices()
    return W, np.where(rng.normal(size=n) > 0, 1.0, -1.0)


def test_window_rows_from_their_columns_equal_from_dense():
    from okl._sparse import SparseRows

    W, _ = _wide_rows(1000, n=50)
    dense = W.toarray()
    rows = SparseRows.from_scipy(W)
    got = SparseRows.from_columns(dense, [rows.row(i)[0] for i in range(50)])
    want = SparseRows.from_dense(dense)
    for a, b in ((got.indptr, want.indptr), (got.indices, want.indices), (got.data, want.data)):
        np.testing.assert_array_equal(a, b)


def test_fogd_on_2_27_sparse_columns_learns_as_on_a_narrow_width():
    """50 x 2^27 dense floats (50 GiB) could not be allocated: the window now costs its non-zeros, and
    the decisions are those of the same rows on a width of 2^20 (generated directions: a column's
    direction depends on its index, not on the width)."""
    import resource

    wide, y = _wide_rows(1 << 27, high=1 << 20)
    narrow = wide[:, : 1 << 20].tocsr()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    a = okl.make("fogd", directions="generated", random_state=0).run(wide, y)
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    b = okl.make("fogd", directions="generated", random_state=0).run(narrow, y)
    np.testing.assert_array_equal(a.decisions, b.decisions)
    assert grew_mb < 2500, grew_mb  # (two d-long vectors of the input map, 1 GiB each, mostly untouched)


def test_auto_hashes_rows_wider_than_its_hash_width():
    """2^31 sparse columns (the width window and the engine's d-long arrays would be 16 GiB each):
    auto hashes them into HASH_WIDTH columns, every path the same rows, and its model file keeps the
    width given and the hash."""
    import resource

    import scipy.sparse as sp

    from okl.ensemble.hashing import COLUMN_HASH, HASH_WIDTH, hash_rows
    from okl._sparse import SparseRows

    W, y = _wide_rows(1 << 31, n=120)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m = okl.make("auto", random_state=0)
    a = m.run(W, y)
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 1000
    assert (m.dim_, m.input_width_, m.column_hash_) == (HASH_WIDTH, 1 << 31, COLUMN_HASH)
    h = hash_rows(SparseRows.from_scipy(W))  # the same rows hashed by hand: the same decisions
    b = okl.make("auto", random_state=0).run(sp.csr_matrix((h.data, h.indices, h.indptr), shape=h.shape), y)
    np.testing.assert_array_equal(a.decisions, b.decisions)
    one = okl.make("auto", random_state=0)  # per event: the decisions of run()
    got = []
    for i in range(len(y)):
        got.append(one.predict_one(W[i]))
        one.learn_one(W[i], y[i])
    np.testing.assert_allclose(got, a.decisions, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"has 1048577 features but the learner was started with 2147483648"):
        m.predict_one(sp.csr_matrix((1, HASH_WIDTH + 1)))
    assert m.n_seen_ == 120


def test_wide_auto_model_file_keeps_its_width_and_hash(tmp_path):
    from okl.ensemble.hashing import HASH_WIDTH
    from okl.runtime.base import Learner

    W, y = _wide_rows(HASH_WIDTH * 4, n=80)
    m = okl.make("auto", random_state=0)
    m.run(W[:60], y[:60])
    m.save(tmp_path / "wide.npz")
    back = Learner.load(tmp_path / "wide.npz")
    assert back.input_width_ == HASH_WIDTH * 4
    np.testing.assert_array_equal(back.run(W[60:], y[60:]).decisions, m.run(W[60:], y[60:]).decisions)
    m.column_hash_ = "crc32"  # (check_state: the check load runs on a file's state)
    with pytest.raises(ValueError, match="column_hash_"):
        m.check_state()
    m.column_hash_, m.input_width_ = None, None  # a narrow model's file with dim 2^20 is not a hashed one
    m.check_state()
    assert okl.make("auto").run(W[:5, :HASH_WIDTH], y[:5]) is not None


def test_column_hash_is_the_documented_fmix64():
    from okl.ensemble.hashing import hash_columns

    def fmix64(k):  # MurmurHash3's finaliser in Python integers
        mask = (1 << 64) - 1
        k ^= k >> 33
        k = (k * 0xFF51AFD7ED558CCD) & mask
        k ^= k >> 33
        k = (k * 0xC4CEB9FE1A85EC53) & mask
        return k ^ (k >> 33)

    idx = np.array([0, 1, 2, 12345, (1 << 31) - 1, (1 << 40) + 7])
    cols, signs = hash_columns(idx, 1 << 20)
    assert cols.tolist() == [fmix64(int(j)) % (1 << 20) for j in idx]
    assert signs.tolist() == [1.0 if fmix64(int(j)) >> 63 == 0 else -1.0 for j in idx]
    many, s = hash_columns(np.arange(1 << 16), 1 << 10)
    assert abs(s.mean()) < 0.02 and np.bincount(many, minlength=1 << 10).std() < 12


# ---- 15: okl compile's workloads include a categorical learner --------------------------------

def test_compile_workloads_run_each_learner_with_a_categorical_column(monkeypatch):
    import importlib

    from okl import precompile

    package = importlib.import_module("okl.learners")  # (okl.learners is also the function listing names)
    seen = []
    real = package.make

    def recording(name, **params):
        seen.append((name, params.get("categorical")))
        return real(name, **params)

    monkeypatch.setattr(package, "make", recording)
    precompile._learner("linear")
    assert ("linear", [1]) in seen


def test_sparse_rows_given_per_event_fill_the_width_window_by_their_non_zeros():
    """learn_one on 1 x 2^22 CSR rows: the window's buffer row gets the row's non-zeros only (a page
    each), not the dense row the generic path makes (32 MiB a row, 1.6 GB for the window), with the
    decisions of run() on the same rows."""
    import resource

    W, y = _wide_rows(1 << 22, n=60)
    m = okl.make("fogd", random_state=0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = []
    for i in range(60):
        got.append(m.predict_one(W[i]))
        m.learn_one(W[i], y[i])
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mb < 600, grew_mb
    want = okl.make("fogd", random_state=0).run(W, y).decisions
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
