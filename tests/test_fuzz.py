"""Robustness: readers, learners and model files fed malformed input raise only documented errors.

Documented errors: :class:`okl.data.DataFormatError` (a ``ValueError`` naming file and line) from
the readers, ``FileNotFoundError`` for a missing file, ``ValueError`` from ``learn_one`` /
``predict_one`` (and the learner is then unchanged), :class:`okl.learners.ModelFileError` from
``Learner.load`` (and nothing in a model file is ever executed).
"""

from __future__ import annotations

import atexit
import copy
import json
import os
import pickle
import shutil
import tempfile
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import okl
from okl.data import DataFormatError
from okl.data.readers import MAX_FEATURE_INDEX, parse_svmlight_line, read_csv, read_svmlight
from okl.learners import Learner, ModelFileError
from okl.runtime.base import accepts
from okl.streaming.lines import parse_event

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORKDIR = tempfile.mkdtemp(prefix="okl-fuzz-")
atexit.register(shutil.rmtree, WORKDIR, True)

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, -1.0, 1e308, -1e308, 5e-324, 1e-300]),
    st.integers(-10**6, 10**6).map(float))
number_text = st.one_of(
    numbers.map(repr), st.sampled_from(["nan", "NaN", "inf", "-inf", "1e309", "-1e400", "1e308", "", "+",
                                        "0x10", "1,5", "--1", "1e", ".", "١", "nan(0)"]),
    st.text(max_size=4))
index_text = st.one_of(st.integers(-3, 12).map(str), st.sampled_from(["0", "-1", "a", "", "1.5",
                                                                      str(MAX_FEATURE_INDEX + 1),
                                                                      "99999999999999999999"]))
token = st.one_of(st.tuples(index_text, number_text).map(lambda t: f"{t[0]}:{t[1]}"), number_text,
                  st.sampled_from(["qid:1", ":", "1:", ":1", "#", "# c", "1::2"]))
svm_line = st.lists(token, max_size=6).map(" ".join)


@st.composite
def near_valid_svm_line(draw):
    """A valid line ``label i:v ...`` (increasing indices), sometimes with one token replaced."""
    idx = sorted(draw(st.sets(st.integers(1, 30), max_size=5)))
    vals = draw(st.lists(st.floats(-1e300, 1e300), min_size=len(idx), max_size=len(idx)))
    tokens = [draw(st.sampled_from(["1", "-1", "+1", "0", "2.5"]))] + [f"{i}:{v!r}" for i, v in zip(idx, vals)]
    if draw(st.booleans()):
        tokens[draw(st.integers(0, len(tokens) - 1))] = draw(token)
    return " ".join(tokens)


svm_line = st.one_of(svm_line, near_valid_svm_line())
csv_line = st.lists(number_text, min_size=0, max_size=5).map(",".join)


def _write(name: str, content: bytes | str) -> str:
    path = os.path.join(WORKDIR, name)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as fh:
        fh.write(content)
    return path


# --------------------------------------------------------------------------------------------
# readers


@FUZZ
@given(svm_line)
def test_parse_svmlight_line(line):
    try:
        label, feats = parse_svmlight_line(line, "f:1")
    except DataFormatError as exc:
        assert str(exc).startswith("f:1: ")
        return
    assert label is None or np.isfinite(label)
    assert all(np.isfinite(v) for v in feats.values())
    assert list(feats) == sorted(feats) and all(0 <= i < MAX_FEATURE_INDEX for i in feats)


@FUZZ
@given(st.one_of(st.lists(svm_line, max_size=6).map("\n".join), st.binary(max_size=60)))
def test_read_svmlight(content):
    path = _write("fuzz.svm", content)
    try:
        X, y = read_svmlight(path)
    except DataFormatError as exc:
        assert path in str(exc)
        return
    assert X.ndim == 2 and X.shape[0] == y.shape[0] >= 1
    assert np.isfinite(X).all() and np.isfinite(y).all()


@FUZZ
@given(st.one_of(st.lists(csv_line, max_size=5).map("\n".join), st.binary(max_size=60)))
def test_read_csv(content):
    path = _write("fuzz.csv", content)
    try:
        X, y = read_csv(path)
    except DataFormatError as exc:
        assert path in str(exc)
        return
    assert X.shape[0] == y.shape[0] >= 1 and np.isfinite(X).all() and np.isfinite(y).all()


@FUZZ
@given(st.one_of(svm_line, csv_line), st.sampled_from(["svmlight", "csv"]), st.sampled_from([None, 3]))
def test_stream_event_parser(line, fmt, dim):
    if fmt == "svmlight" and dim is None:
        dim = 3
    try:
        x, label = parse_event(line, "in:7", fmt, dim)
    except DataFormatError as exc:
        assert str(exc).startswith("in:7: ")
        return
    # (a CSV label that is not a number is a class name, returned as written: parse_event's docstring)
    assert np.isfinite(x).all() and (label is None or (isinstance(label, str) and fmt == "csv") or np.isfinite(label))
    assert dim is None or x.shape == (dim,)


def test_empty_and_missing_inputs():
    for name in ("empty.svm", "blank.svm"):
        path = _write(name, "" if name == "empty.svm" else "\n\n# only a comment\n")
        with pytest.raises(DataFormatError, match="no data lines"):
            read_svmlight(path)
    with pytest.raises(DataFormatError, match="no data lines"):
        read_csv(_write("empty.csv", ""))
    with pytest.raises(DataFormatError, match="feature index 2147483648 is too large"):
        read_svmlight(_write("wide.svm", "1 2147483648:1\n"))
    for reader in (read_svmlight, read_csv):
        with pytest.raises(FileNotFoundError):
            reader(os.path.join(WORKDIR, "does-not-exist"))


# --------------------------------------------------------------------------------------------
# learners: a learner that raised is unchanged


FUZZ_LEARNERS = ["nogd", "fogd", "forks", "skegd", "kogd", "bogd", "pros-n-kons"]


def _warm(name):
    X, y = okl.load_dataset("german")
    params = {"random_state": 0, "kernel": okl.RBF(sigma=4.0)}
    for key, value in (("budget", 20), ("horizon", 400)):
        if accepts(name, key):
            params[key] = value
    learner = okl.make(name, **params)
    learner.run(X[:120], y[:120])  # past the first stage of the two-stage learners
    return learner


WARM = {}


def _snapshot(learner) -> bytes:
    # a Generator is compared by its bit-generator state (its pickle also holds the seed sequence)
    return pickle.dumps({k: v.bit_generator.state if isinstance(v, np.random.Generator) else v
                         for k, v in vars(learner).items()})


vectors = st.one_of(
    st.lists(numbers, min_size=22, max_size=26).map(np.array),
    st.lists(st.floats(0, 1), min_size=24, max_size=24).map(np.array),
    st.just(np.zeros((2, 24))), st.just(np.array([])), st.just(["a"] * 24), st.just(None))
labels = st.one_of(st.sampled_from([1.0, -1.0, 1, -1, 0.0, 2.0, 0.5, True, "1", None, np.array([1.0, -1.0])]),
                   st.floats(allow_nan=True, allow_infinity=True))


@pytest.mark.parametrize("name", FUZZ_LEARNERS)
def test_learn_one_raises_value_error_or_learns(name):
    if name not in WARM:
        WARM[name] = _warm(name)

    @FUZZ
    @given(vectors, labels)
    def check(x, y):
        learner = copy.deepcopy(WARM[name])
        before = _snapshot(learner)
        try:
            learner.predict_one(x)
        except ValueError:
            pass
        assert _snapshot(learner) == before  # predict_one never changes state
        try:
            learner.learn_one(x, y)
        except ValueError:
            assert _snapshot(learner) == before
            return
        assert learner.n_seen_ == 121

    check()


def test_river_adapter_unchanged_after_error():
    pytest.importorskip("river")
    from okl.river import OKLRiverClassifier

    model = OKLRiverClassifier(learner="nogd", budget=10, seed=0)
    for i in range(30):
        model.learn_one({"a": i % 3 / 3.0, "b": (i % 5) / 5.0}, i % 2 == 0)

    @FUZZ
    @given(st.dictionaries(st.sampled_from(["a", "b", "c", 1]),
                           st.one_of(numbers, st.sampled_from(["x", None, True, [1.0]])), max_size=4),
           st.sampled_from([True, False, 1, 0, -1, 2, "yes", None, 0.5]))
    def check(x, y):
        m = copy.deepcopy(model)
        before = pickle.dumps(m)
        try:
            m.learn_one(x, y)
        except ValueError:
            assert pickle.dumps(m) == before
            return
        assert m.model.n_seen_ == 31

    check()


# --------------------------------------------------------------------------------------------
# model files


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("models") / "nogd.npz")
    WARM.setdefault("nogd", _warm("nogd"))
    WARM["nogd"].save(path)
    return path


def _rewrite(src, dst, edit_meta=None, extra=None):
    with np.load(src) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(arrays["__meta__"].tobytes())
    if edit_meta:
        edit_meta(meta)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    arrays.update(extra or {})
    np.savez(dst, **arrays)
    return dst


def test_foreign_version_and_class_rejected(model_file, tmp_path):
    with pytest.raises(ModelFileError, match="holds a NOGD \\(nogd\\), not a FORKS"):
        okl.FORKS.load(model_file)
    old = _rewrite(model_file, tmp_path / "old.npz", lambda m: m.update(okl_version="0.0.1"))
    with pytest.raises(ModelFileError, match="written by okl 0.0.1, this is okl"):
        Learner.load(old)
    fmt = _rewrite(model_file, tmp_path / "fmt.npz", lambda m: m.update(format_version=99))
    with pytest.raises(ModelFileError, match="model format version 99"):
        Learner.load(fmt)
    unknown = _rewrite(model_file, tmp_path / "unk.npz", lambda m: m.update(name="gone"))
    with pytest.raises(ModelFileError, match="unknown learner 'gone'"):
        Learner.load(unknown)
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    with pytest.raises(ModelFileError, match="no okl model header"):
        Learner.load(tmp_path / "plain.npz")
    (tmp_path / "text.npz").write_text("not a zip file")
    with pytest.raises(ModelFileError, match="text.npz: not an okl model file, or truncated"):
        Learner.load(tmp_path / "text.npz")


def _edit_json_entry(src, dst, entry, **changes):
    """A copy of the zip ``src`` with fields of its JSON ``entry`` changed (entries stored, as okl writes them)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == entry:
                data = json.dumps({**json.loads(data), **changes}).encode()
            zout.writestr(item.filename, data)
    return dst


def test_one_header_check_for_every_okl_file(tmp_path):
    """okl stream checkpoints, MultiClass files and forecaster files are checked by the model files'
    rule (okl.runtime.modelfile.check_header): the file, what it is not and the format it declares;
    or the kind, the version it declares (a string shown as one) and the version this okl reads."""
    from okl.streaming.checkpoint import (CheckpointError, StreamConfig, StreamPosition, read_checkpoint,
                                          write_checkpoint)
    from okl.timeseries import Forecaster

    rng = np.random.default_rng(0)
    X = rng.random((60, 3))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    model = okl.make("nogd", budget=10, random_state=0)
    model.run(X, y)
    ck = str(tmp_path / "ck.zip")
    write_checkpoint(ck, model, StreamConfig(learner="nogd"),
                     StreamPosition(events=60, labelled=60, lines=60, byte_offset=600, dim=3, labels_seen=3))
    assert read_checkpoint(ck)[0].n_seen_ == 60
    bad = _edit_json_entry(ck, tmp_path / "ck99.zip", "stream.json", format_version=99)
    with pytest.raises(CheckpointError, match=r"ck99.zip: checkpoint format version 99 but this okl \(.*\) reads "
                                              r"version 1$"):
        read_checkpoint(str(bad))
    bad = _edit_json_entry(ck, tmp_path / "ckfmt.zip", "stream.json", format="okl-forecaster")
    with pytest.raises(CheckpointError, match=r"ckfmt.zip: not an okl stream checkpoint \(format 'okl-forecaster'\)"):
        read_checkpoint(str(bad))

    mc = okl.MultiClass("nogd", params={"budget": 10}, random_state=0)
    mc.run(X, np.floor(3 * X[:, 1]))
    mc.save(tmp_path / "mc.zip")
    bad = _edit_json_entry(tmp_path / "mc.zip", tmp_path / "mc1.zip", "multiclass.json", version="1")
    with pytest.raises(ModelFileError, match=r"mc1.zip: multi-class model format version '1' \(a str, not an "
                                             r"integer\) but this okl"):
        okl.MultiClass.load(bad)

    fc = Forecaster(burn=20)
    for v in np.sin(np.arange(40) / 3):
        fc.learn_one(float(v))
    fc.save(tmp_path / "fc.zip")
    bad = _edit_json_entry(tmp_path / "fc.zip", tmp_path / "fcfmt.zip", "forecaster.json", format=None)
    with pytest.raises(ValueError, match=r"fcfmt.zip: not an okl forecaster file \(format None\)"):
        Forecaster.load(bad)
    bad = _edit_json_entry(tmp_path / "fc.zip", tmp_path / "fc1.zip", "forecaster.json", version=1)
    with pytest.raises(ValueError, match=r"fc1.zip: forecaster format version 1 but this okl .* reads version 2 "
                                         r"\(version 2 scores members"):
        Forecaster.load(bad)


@pytest.mark.parametrize("edit,message", [
    (lambda m: m["params"].update(budget=-1), "invalid hyperparameters for NOGD"),
    (lambda m: m["params"].update(shell="rm -rf /"), "invalid hyperparameters for NOGD"),
    (lambda m: m["params"].update(kernel={"__kernel__": {"name": "os.system"}}), "invalid hyperparameters"),
    (lambda m: m["state"].update(predict_one={"value": 1}), "state attributes .* do not match"),
    (lambda m: m["state"].pop("w_"), "state attributes .* do not match"),
    (lambda m: m["state"].update(_rng={"rng": {"bit_generator": "MT19937"}}), "invalid state for NOGD"),
    (lambda m: m.pop("dim"), "invalid state for NOGD"),
])
def test_edited_header_rejected(model_file, tmp_path, edit, message):
    with pytest.raises(ModelFileError, match=message):
        Learner.load(_rewrite(model_file, tmp_path / "edited.npz", edit))


class _Payload:
    """Unpickling this would create a marker file: a model file must never run it."""

    marker = os.path.join(WORKDIR, "EXECUTED")

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickled_payload_is_never_executed(model_file, tmp_path):
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload()
    path = _rewrite(model_file, tmp_path / "evil.npz", extra={"state__w_": evil})
    with pytest.raises(ModelFileError, match="not a readable okl model file"):
        Learner.load(path)
    assert not os.path.exists(_Payload.marker)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_damaged_model_file(model_file, data):
    """Truncated or bit-flipped files: ModelFileError, or (a flip in unchecked zip metadata) the
    very same model."""
    blob = open(model_file, "rb").read()
    if data.draw(st.booleans()):
        damaged = blob[: data.draw(st.integers(0, len(blob) - 1))]
    else:
        pos = data.draw(st.integers(0, len(blob) - 1))
        damaged = blob[:pos] + bytes([blob[pos] ^ data.draw(st.integers(1, 255))]) + blob[pos + 1:]
    assume(damaged != blob)
    path = _write("damaged.npz", damaged)
    try:
        loaded = Learner.load(path)
    except ModelFileError:
        return
    original = Learner.load(model_file)
    assert _snapshot(loaded) == _snapshot(original)


def test_zip_structure_is_what_save_writes(model_file):
    """Model files hold only .npy arrays (no pickle) and the JSON header."""
    with zipfile.ZipFile(model_file) as zf:
        names = zf.namelist()
    assert "__meta__.npy" in names and all(n.endswith(".npy") for n in names)
    with np.load(model_file, allow_pickle=False) as npz:
        assert all(npz[k].dtype != object for k in npz.files)
