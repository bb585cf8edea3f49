"""Untrusted model files, stream checkpoints and command lines (issue 16): never a crash, always
one clear error.

Model files are forged with hypothesis over every registered learner (arrays shrunk, grown,
transposed, retyped, filled with NaN / inf / huge values, counters and sizes set out of range, the
header's ``dim`` and ``n_seen`` changed, a ``.npy`` header declaring a huge array); each forged
file is loaded in a forked child, so a segfault or an abort is a failure of the test, not of the
run. Every file must be refused with ``ModelFileError`` at load, or load and then predict and
learn finite numbers.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import resource
import signal
import stat
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import okl
from okl.cli import main
from okl.runtime.base import Learner, ModelFileError, accepts
from okl.streaming.checkpoint import CheckpointError, StreamPosition, read_checkpoint, write_checkpoint

LEARNERS = okl.learners(kind="streaming")
#: forged files per learner (each loaded in a forked child)
EXAMPLES = 6


@pytest.fixture(scope="module")
def rows(german):
    X, y = german
    return np.asarray(X, float), np.asarray(y, float)


_SAVED: dict = {}


def saved(name, rows, n_rows=200):
    """(arrays, meta) of a model trained on the first ``n_rows`` rows of german (cached)."""
    key = (name, n_rows)
    if key not in _SAVED:
        X, y = rows
        kw = {"horizon": 300} if accepts(name, "horizon") else {}
        m = okl.make(name, random_state=0, **kw)
        m.run(X[:n_rows], y[:n_rows])
        buf = io.BytesIO()
        path = f"/tmp/okl-test-{os.getpid()}-{name}.npz"
        m.save(path)
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        os.unlink(path)
        meta = json.loads(arrays.pop("__meta__").tobytes().decode())
        _SAVED[key] = (arrays, meta)
        del buf
    arrays, meta = _SAVED[key]
    return {k: v.copy() for k, v in arrays.items()}, json.loads(json.dumps(meta))


def write_npz(path, arrays, meta):
    np.savez(path, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)


def probe(path, X, y, load=None, expect=None):
    """Load and use ``path`` in a forked child: None when it holds, else what went wrong.

    The child runs under an address-space limit (what is mapped now + 768 MiB), 20 s of CPU and a
    1 MiB file-size limit (a load that unpacked entries to disk would hit it; SIGXFSZ ignored,
    so such a write is an OSError, a failure here). ``load``: the loader (default
    ``Learner.load``; a loaded single learner must then predict and learn finite numbers, a
    multi-class model give finite margins and learn). A refusal must be a ModelFileError or
    CheckpointError on one line starting with ``path``; ``expect``: a regex it must match (a
    load is then a failure)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        code, msg = 0, b""
        try:
            vm = int(next(line for line in open("/proc/self/status") if line.startswith("VmSize")).split()[1])
            cap = vm * 1024 + (768 << 20)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            try:
                m = (load or Learner.load)(path)
                if expect is not None:
                    code, msg = 6, b"loaded, but a refusal was expected"
                elif load is None:
                    a = m.predict_one(X[0])
                    m.learn_one(X[1], float(y[1]))
                    b = m.predict_one(X[2])
                    m.run(X[3:40], y[3:40])
                    if not (np.isfinite(a) and np.isfinite(b)):
                        code, msg = 3, b"loaded, then non-finite decisions"
                else:
                    d = m.decision_many(X[:5])
                    m.learn_one(X[5], y[5])
                    if np.isnan(d).any() or np.isposinf(d).any():
                        code, msg = 3, b"loaded, then non-finite margins"
            except (ModelFileError, CheckpointError) as exc:
                text = str(exc)
                if not text.startswith(str(path)) or "\n" in text or len(text) > 600:
                    code, msg = 5, f"unclear refusal: {text[:150]}".encode()
                elif expect is not None and not re.search(expect, text):
                    code, msg = 7, f"refusal does not say {expect!r}: {text[:200]}".encode()
        except BaseException as exc:  # noqa: BLE001
            code, msg = 4, f"{type(exc).__name__}: {str(exc)[:150]}".encode()
        os.write(w, msg[:300])
        os._exit(code)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    msg = os.read(r, 400).decode(errors="replace")
    os.close(r)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return (msg or f"exit {os.WEXITSTATUS(status)}") if os.WEXITSTATUS(status) else None


# ---- forgeries --------------------------------------------------------------------------------

VALUES = st.sampled_from([0, -1, -7, 1, 2, 10**6, 10**9, 2**62, -(2**62), 0.5, 1e308, -1e308,
                          None, True, "x", [], {}, [1, 2]])


@st.composite
def forgery(draw, arrays, meta):
    """One forged (arrays, meta, description)."""
    kinds = ["array", "value", "dim", "n_seen", "drop"]
    kind = draw(st.sampled_from(kinds))
    names = sorted(arrays)
    if kind == "array" and names:
        key = draw(st.sampled_from(names))
        v = arrays[key]
        how = draw(st.sampled_from(["shrink", "grow", "transpose", "nan", "inf", "huge", "neg",
                                    "float32", "int32", "bool", "scalar", "fortran", "3d"]))
        if how == "shrink":
            v = v.reshape(-1)[: max(v.size // 2 - 1, 0)]
        elif how == "grow":
            v = np.concatenate([v.reshape(-1), v.reshape(-1)[:1] + 1.0 if v.size else np.ones(3)])
        elif how == "transpose":
            v = v.T.copy() if v.ndim == 2 else v[::-1].copy()
        elif how == "nan" and v.dtype.kind == "f":
            v = np.full_like(v, np.nan)
        elif how == "inf" and v.dtype.kind == "f":
            v = np.where(np.arange(v.size).reshape(v.shape) == 0, np.inf, v)
        elif how == "huge":
            v = np.full_like(v, 10**6 if v.dtype.kind in "iu" else 1e300)
        elif how == "neg":
            v = np.full_like(v, -5)
        elif how == "float32":
            v = v.astype(np.float32)
        elif how == "int32":
            v = v.astype(np.int32)
        elif how == "bool":
            v = v.astype(bool)
        elif how == "scalar":
            v = np.array(v.reshape(-1)[0] if v.size else 0.0)
        elif how == "fortran":
            v = np.asfortranarray(v)
        elif how == "3d":
            v = v.reshape(1, *v.shape)
        arrays[key] = v
        return arrays, meta, f"{how} {key}"
    if kind == "value":
        scalars = [a for a, e in meta["state"].items() if "value" in e and a != "kernel_"]
        if scalars:
            attr = draw(st.sampled_from(sorted(scalars)))
            value = draw(VALUES)
            meta["state"][attr]["value"] = value
            return arrays, meta, f"{attr} = {value!r}"
    if kind == "dim":
        value = draw(st.sampled_from([0, -3, 1, 10**9, 2**40, 1.5, "24", None]))
        meta["dim"] = value
        return arrays, meta, f"dim = {value!r}"
    if kind == "n_seen":
        value = draw(st.sampled_from([0, -1, 3, 10**9, 2**70, 0.5]))
        meta["n_seen"] = value
        return arrays, meta, f"n_seen = {value!r}"
    if names:
        key = draw(st.sampled_from(names))
        del arrays[key]
        return arrays, meta, f"drop {key}"
    return arrays, meta, "unchanged"


@pytest.mark.parametrize("name", LEARNERS)
def test_forged_model_files_are_refused_or_usable(name, rows, tmp_path):
    X, y = rows
    base = saved(name, rows)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data):
        arrays, meta = saved(name, rows)
        arrays, meta, what = data.draw(forgery(arrays, meta))
        path = str(tmp_path / "forged.npz")
        write_npz(path, arrays, meta)
        why = probe(path, X, y)
        assert why is None, f"{name}: {what}: {why}"

    assert base[1]["state"]["started_"]["value"] is True
    check()


@pytest.mark.parametrize("name", ["nogd", "pros-n-kons", "rbp", "forks"])
def test_every_single_field_forgery(name, rows, tmp_path):
    """Deterministic sweep: each state array shrunk / NaN / huge and each counter 10^9 / -7."""
    X, y = rows
    arrays, meta = saved(name, rows)
    cases = []
    for key, v in arrays.items():
        cases.append((f"shrink {key}", {**arrays, key: v.reshape(-1)[: max(v.size // 2 - 1, 0)]}, meta))
        if v.dtype.kind == "f":
            cases.append((f"nan {key}", {**arrays, key: np.full_like(v, np.nan)}, meta))
        if v.dtype.kind in "iu":
            cases.append((f"huge {key}", {**arrays, key: np.full_like(v, 10**6)}, meta))
    for attr, entry in meta["state"].items():
        if "value" in entry and type(entry["value"]) in (int, float):
            for val in (10**9, -7):
                m2 = json.loads(json.dumps(meta))
                m2["state"][attr]["value"] = val
                cases.append((f"{attr}={val}", arrays, m2))
    for what, arrs, m in cases:
        path = str(tmp_path / "f.npz")
        write_npz(path, arrs, m)
        assert probe(path, X, y) is None, f"{name}: {what}"


def _bomb(path, arrays, meta, shape, declared_only=False):
    """A model file whose first state array declares ``shape`` (float64): either a real,
    compressed array of zeros (a zip bomb) or only a header (a forged header)."""
    target = sorted(arrays)[0]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        buf = io.BytesIO()
        np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
        z.writestr("__meta__.npy", buf.getvalue())
        hdr = io.BytesIO()
        np.lib.format.write_array_header_1_0(hdr, {"descr": "<f8", "fortran_order": False, "shape": shape})
        with z.open(target + ".npy", "w", force_zip64=True) as fh:
            fh.write(hdr.getvalue())
            if not declared_only:
                chunk = bytes(1 << 24)
                for _ in range(int(np.prod(shape)) * 8 // len(chunk)):
                    fh.write(chunk)
        for k, v in arrays.items():
            if k != target:
                buf = io.BytesIO()
                np.save(buf, v)
                z.writestr(k + ".npy", buf.getvalue())
    return target


@pytest.mark.parametrize("declared_only", [True, False])
def test_a_1_gib_array_is_refused_before_it_is_read(rows, tmp_path, declared_only):
    import time

    arrays, meta = saved("nogd", rows)
    path = str(tmp_path / "bomb.npz")
    target = _bomb(path, arrays, meta, (1 << 27,), declared_only)
    assert os.path.getsize(path) < 4 << 20
    t0 = time.perf_counter()
    with pytest.raises(ModelFileError) as err:
        Learner.load(path)
    assert time.perf_counter() - t0 < 2.0
    assert str(err.value).startswith(path) and target.replace("state__", "") in str(err.value)
    assert probe(path, *rows) is None


def test_refusals_name_the_file_and_the_field(rows, tmp_path):
    arrays, meta = saved("kogd", rows)
    meta["state"]["m_"]["value"] = 10**6
    path = str(tmp_path / "k.npz")
    write_npz(path, arrays, meta)
    with pytest.raises(ModelFileError, match=r"k\.npz: KOGD: state m_: = 1000000 outside"):
        Learner.load(path)


def test_read_only_and_fortran_arrays_are_copied_not_refused(rows, tmp_path):
    X, y = rows
    m = okl.make("rbp", random_state=0)
    m.run(X[:200], y[:200])
    ref = m.run(X[200:260], y[200:260]).decisions
    m = okl.make("rbp", random_state=0)
    m.run(X[:200], y[:200])
    for attr in ("SVT_", "alpha_"):
        v = np.asfortranarray(getattr(m, attr))
        v.flags.writeable = False
        setattr(m, attr, v)
    copy = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m.run(X[200:260], y[200:260]).decisions, ref)
    np.testing.assert_array_equal(copy.run(X[200:260], y[200:260]).decisions, ref)


@pytest.mark.parametrize("name", LEARNERS)
def test_saved_states_pass_their_declaration(name, rows, tmp_path):
    """Round trip at every stage (inside the width window, stage 1, stage 2): the declaration
    accepts what the learner itself writes, and the loaded learner continues identically."""
    X, y = rows
    for n in (0, 20, 60, 200, 700):
        kw = {"horizon": 300} if accepts(name, "horizon") else {}
        m = okl.make(name, random_state=0, **kw)
        if n:
            m.run(X[:n], y[:n])
        m.check_state()
        path = str(tmp_path / "m.npz")
        m.save(path)
        loaded = Learner.load(path)
        np.testing.assert_array_equal(loaded.run(X[n:n + 40], y[n:n + 40]).decisions,
                                      m.run(X[n:n + 40], y[n:n + 40]).decisions)


def test_a_learner_without_declaration_loads_unchanged(rows, tmp_path, monkeypatch):
    """The base class refuses nothing extra for a learner that declares no state."""
    from okl.learners.kogd import KOGD

    monkeypatch.setattr(KOGD, "_state_spec", lambda self: None)
    X, y = rows
    m = okl.make("kogd", random_state=0)
    m.run(X[:100], y[:100])
    path = str(tmp_path / "k.npz")
    m.save(path)
    assert Learner.load(path).m_ == m.m_


# ---- stream checkpoints -------------------------------------------------------------------------


def _checkpoint(tmp_path, rows, **position):
    from okl.streaming.checkpoint import StreamConfig
    from okl.streaming.main import _encoded_params, build_learner

    X, y = rows
    learner = build_learner("nogd", budget=20, sigma=2.0)
    learner.run(X[:30], y[:30])
    config = StreamConfig(learner="nogd", params=_encoded_params(learner), format="svmlight", sep=",",
                          label_column=-1, positive_label=None)
    pos = StreamPosition(events=30, labelled=30, lines=30, byte_offset=3000, dim=24)
    for key, value in position.items():
        setattr(pos, key, value)
    path = str(tmp_path / "ck.zip")
    write_checkpoint(path, learner, config, pos)
    return path


@pytest.mark.parametrize("position", [
    {"byte_offset": -3000}, {"byte_offset": 10}, {"events": -1}, {"labelled": 31}, {"labelled": 29, "events": 29},
    {"mistakes": 40}, {"lines": 10**30}, {"squared_loss": float("nan")}, {"dim": 7}, {"dim": 0},
    {"events": 1.5}, {"header_done": "yes"}, {"skipped_bad": 31},
])
def test_forged_checkpoint_positions_are_refused(position, tmp_path, rows):
    path = _checkpoint(tmp_path, rows, **position)
    with pytest.raises(CheckpointError, match="checkpoint position"):
        read_checkpoint(path)


def test_consistent_checkpoint_position_is_accepted(tmp_path, rows):
    learner, _, pos = read_checkpoint(_checkpoint(tmp_path, rows))
    assert pos.byte_offset == 3000 and learner.n_seen_ == 30


def test_okl_stream_refuses_a_forged_checkpoint_in_one_line(tmp_path, rows, capsys):
    path = _checkpoint(tmp_path, rows, byte_offset=-3000)
    data = tmp_path / "in.svm"
    data.write_text("1 1:0.5\n")
    code = main(["stream", "--learner", "nogd", "--budget", "20", "--sigma", "2", "--dim", "24",
                 "--input", str(data), "--checkpoint", path, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("okl: error: ") and "byte_offset" in err


# ---- the command line -------------------------------------------------------------------------

BIG = "9" * 20_000_000 if os.environ.get("OKL_TEST_HUGE_TOKEN") else "9" * 50_000


@pytest.mark.parametrize("argv", [
    ["run", "--runs", "0"], ["run", "--runs", "-1"], ["run", "--max-rows", "-5"],
    ["run", "--budget", "1000000000"], ["run", "--budget", "0"], ["run", "--sigma", "1e308"],
    ["run", "--sigma", "nan"], ["run", "--sigma", "-1"], ["run", "--sigma", "1e-200"],
    ["run", "--runs", BIG], ["run", "--learners", "x" * 50_000], ["run", "--runs", "abc"],
    ["stream", "--dim", "1000000000", "--learner", "nogd"], ["stream", "--dim", "0"],
    ["stream", "--every", "0", "--dim", "3"], ["stream", "--stats-every", "nan", "--dim", "3"],
    ["sweep", "--learners", "nogd", "--store", "STORE", "--runs", "100000000", "--dry-run"],
    ["sweep", "--learners", "nogd", "--store", "STORE", "--seeds", "0:1", "--dry-run"],
    ["sweep", "--learners", "nogd", "--store", "STORE", "--seeds", "-1,2", "--dry-run"],
    ["sigma", "--first", "0"], ["reproduce", "--runs", "0", "x"], ["fetch", "--retries", "-1", "german"],
    ["frobnicate"], ["run", "--param", "noequals"],
])
def test_user_errors_are_one_line_with_exit_code_2(argv, capsys, tmp_path):
    argv = [str(tmp_path / "s.sqlite") if a == "STORE" else a for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("okl: error: "), err[:500]
    assert "Traceback" not in err and len(err) < 800
    longest = max((len(tok) for tok in err.replace("'", " ").split()), default=0)
    assert longest <= 230, err[:300]


def test_sweep_accepts_integer_seed_forms(capsys, tmp_path):
    for seeds in ("0,1,5", "0,1,...,3", "0:1:3"):
        assert main(["sweep", "--learners", "nogd", "--store", str(tmp_path / "s.sqlite"), "--seeds", seeds,
                     "--dry-run"]) == 0


# ---- scikit-learn adapter -----------------------------------------------------------------------


def test_regressor_refuses_classification_only_learners():
    from okl.sklearn import OKLRegressor

    for name in ("rbp", "forgetron", "projectron", "bpa-s"):
        with pytest.raises(ValueError, match="learns -1/\\+1 labels only"):
            OKLRegressor(learner=name)
        est = OKLRegressor()
        est.set_params(learner=name)
        with pytest.raises(ValueError, match="learns -1/\\+1 labels only"):
            est.fit(np.zeros((5, 2)), np.arange(5.0))
    OKLRegressor(learner="helloworld")  # unknown names are reported by fit, not __init__


# ---- process-pool workers ---------------------------------------------------------------------


def test_process_pool_workers_exit_with_their_parent(tmp_path):
    """A driver killed with SIGKILL leaves no worker computing (PR_SET_PDEATHSIG / parent watch)."""
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "driver.py"
    script.write_text(
        "import os, sys, time\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing as mp\n"
        "from okl.eval.backends import _init_worker\n"
        "def spin(_):\n"
        "    t = time.time()\n"
        "    while time.time() - t < 60: pass\n"
        "    return os.getpid()\n"
        "def pid(_):\n"
        "    return os.getpid()\n"
        "pool = ProcessPoolExecutor(2, mp_context=mp.get_context('fork'), initializer=_init_worker,\n"
        "                           initargs=(1, os.getpid()))\n"
        "pids = set(pool.map(pid, range(8)))\n"
        "print(' '.join(map(str, pids)), flush=True)\n"
        "futs = [pool.submit(spin, i) for i in range(2)]\n"
        "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    alive = pids
    while alive and time.time() < deadline:
        time.sleep(0.2)
        alive = [p for p in pids if _alive(p)]
    assert not alive, f"workers {alive} outlived their parent"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


# ---- sweep backends ---------------------------------------------------------------------------


def test_cells_get_the_drivers_resolved_data_directory(monkeypatch, tmp_path):
    from okl.eval.backends import resolve_data_dir

    monkeypatch.setenv("OKL_DATA", str(tmp_path / "data"))
    assert resolve_data_dir(None) == str(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    assert resolve_data_dir("rel") == str(tmp_path / "rel")
    monkeypatch.delenv("OKL_DATA")
    assert resolve_data_dir(None) is None


def test_a_failed_cell_is_one_line():
    from okl.eval.sweep import failure_line

    tb = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: bad ' + "z" * 1000
    line = failure_line(tb)
    assert "\n" not in line and line.startswith("ValueError: bad") and len(line) <= 304


# ---- multi-class model files and multi-class stream checkpoints (issue 36) --------------------
#
# Forged and damaged multi-class model files (:meth:`okl.MultiClass.save`) and multi-class
# ``okl stream`` checkpoints (issue 36): each is loaded in a forked child under a memory limit
# (address space: what is mapped now + 768 MiB) and a file-size limit (1 MiB: a load that unpacked
# entries to disk would hit it), and must be refused with one clear line that names the file and
# the problem, or load and then predict and learn finite numbers. Forgeries: the file cut at every
# 10 % (and 99 %), each entry missing, duplicated, renamed to ``../x`` or made a symbolic link, an
# entry deflated from 64 MiB or declaring 1 GiB (more than the file holds), a head or core of another
# learner type, and huge or inconsistent counters in ``multiclass.json``. (Single-learner files:
# above, and ../shared/checks/forge.py.) Added test time: about 10 s.

MC_X = np.random.default_rng(0).random((160, 3))
MC_LABELS = [("a", "b", "c")[int(3 * v)] for v in MC_X[:, 0]]


def _entries(path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(path) as zf:
        return [(info, zf.read(info)) for info in zf.infolist()]


def _write(path, entries) -> str:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return str(path)


def _named(name: str, like: zipfile.ZipInfo | None = None) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    if like is not None:
        info.external_attr = like.external_attr
    return info


def _model_bytes(learner) -> bytes:
    buffer = io.BytesIO()
    learner.files.write(learner, buffer)
    return buffer.getvalue()


def mc_forgeries(path, tmp, learner_name):
    """(tag, forged file, regex its refusal must match, or None: loading it may succeed)."""
    blob = open(path, "rb").read()
    entries = _entries(path)
    names = [info.filename for info, _ in entries]
    out = []

    def add(tag, entries_, expect):
        out.append((tag, _write(os.path.join(tmp, f"{tag}.zip"), entries_), expect))

    for pct in (10, 20, 30, 40, 50, 60, 70, 80, 90, 99):
        cut = os.path.join(tmp, f"cut{pct}.zip")
        with open(cut, "wb") as fh:
            fh.write(blob[: len(blob) * pct // 100])
        out.append((f"cut{pct}", cut, "truncated"))
    for k, name in enumerate(names):
        rest = [e for e in entries if e[0].filename != name]
        add(f"missing-{k}", rest, "missing|no multiclass.json|multiclass.json")
        add(f"twice-{k}", entries + [(_named(name), dict((i.filename, d) for i, d in entries)[name])],
            f"entry '{re.escape(name)}' appears twice")
        add(f"dotdot-{k}", [(_named("../x") if i.filename == name else i, d) for i, d in entries],
            "'../x' is not a plain file name")
        link = _named(name)
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        add(f"symlink-{k}", [(link if i.filename == name else i, d) for i, d in entries], "symbolic link")
        # an entry deflated from 64 MiB of zeros (64 KiB on disk; past the child's 1 MiB file limit
        # if it were unpacked to disk)
        bomb = os.path.join(tmp, f"bomb-{k}.zip")
        with zipfile.ZipFile(bomb, "w") as zf:
            for info, data in entries:
                if info.filename != name:
                    zf.writestr(info, data)
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as w:
                chunk = bytes(1 << 20)
                for _ in range(64):
                    w.write(chunk)
        out.append((f"bomb-{k}", bomb, f"entry '{re.escape(name)}' is compressed"))
        # a stored entry whose directory record declares 1 GiB (more than the file holds)
        plain = _write(os.path.join(tmp, "plain.zip"), entries)
        raw = bytearray(open(plain, "rb").read())
        with zipfile.ZipFile(plain) as zf:
            pos = zf.start_dir - 1
        for _ in range(k + 1):  # entry k's record in the file's own central directory
            pos = raw.find(b"PK\x01\x02", pos + 1)
        assert pos >= 0
        raw[pos + 20:pos + 28] = struct.pack("<II", 1 << 30, 1 << 30)  # compressed, uncompressed size
        big = os.path.join(tmp, f"declared-{k}.zip")
        open(big, "wb").write(bytes(raw))
        out.append((f"declared-{k}", big, "beyond the end of the file|truncated"))
    if "multiclass.json" not in names:  # (a checkpoint: its directory only)
        return out
    meta_bytes = next(d for i, d in entries if i.filename == "multiclass.json")
    meta = json.loads(meta_bytes)

    def edit_meta(tag, expect, **changes):
        m = {**meta, **changes}
        add(tag, [(i, json.dumps(m).encode() if i.filename == "multiclass.json" else d) for i, d in entries], expect)

    edit_meta("n_seen-1e40", "n_seen must be an integer", n_seen=10**40)
    edit_meta("n_seen-float", "n_seen must be an integer", n_seen=1e40)
    edit_meta("n_seen-negative", "n_seen must be an integer", n_seen=-1)
    edit_meta("n_seen-small", "has learned .* events, but multiclass.json says n_seen", n_seen=1)
    edit_meta("random_state-huge", "random_state", random_state=10**40)
    edit_meta("temperature-inf", "temperature", temperature=[1.0, float("inf")])
    edit_meta("classes-nan", "NaN", classes=meta["classes"][:-1] + [float("nan")])
    edit_meta("classes-many", "equal length", classes=list(range(200_000)), signs=[1.0] * 200_000)
    other = "kogd" if learner_name != "kogd" else "nogd"
    edit_meta("learner-other", f"'{other}'|{other}", learner=other)
    # a K-output core named "auto": a consistent auto learner whose pool is that one member (it
    # loads and works); heads named "auto": refused
    edit_meta("learner-auto", None if learner_name == "nogd" else "auto", learner="auto")
    add("meta-garbage", [(i, b"{not json" if i.filename == "multiclass.json" else d) for i, d in entries],
        "not valid JSON")
    # a head / core of another learner type: a binary nogd, a regressor, an auto pool
    first_model = next(i.filename for i, _ in entries if i.filename.endswith(".npz"))
    for tag, alien in (("nogd", okl.make("nogd", random_state=0)), ("regressor", okl.make("fogd", loss="squared")),
                       ("auto", okl.make("auto", random_state=0))):
        alien.run(MC_X[:80], np.where(MC_X[:80, 1] > 0.5, 1.0, -1.0) if tag != "regressor" else MC_X[:80, 1])
        add(f"alien-{tag}", [(i, _model_bytes(alien) if i.filename == first_model else d) for i, d in entries],
            None if tag == learner_name else f"{re.escape(first_model)}")
    # a damaged head: named by the user's file and the entry, not by a temporary path
    add("head-damaged", [(i, d[: len(d) // 2] if i.filename == first_model else d) for i, d in entries],
        f"{re.escape(first_model)}")
    return out


@pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")  # (the forgeries write them)
@pytest.mark.parametrize("learner", ["nogd", "kogd"])  # K outputs of one learner; one head per class
def test_forged_multiclass_files_are_refused_clearly(learner, tmp_path):
    model = okl.MultiClass(learner, params={"budget": 20}, random_state=0)
    model.run(MC_X[:120], MC_LABELS[:120])
    path = str(tmp_path / "model.zip")
    model.save(path)
    assert probe(path, MC_X, MC_LABELS, okl.MultiClass.load) is None  # the genuine file loads
    cases = mc_forgeries(path, str(tmp_path), learner)
    short = [f"{tag}: {why}" for tag, f, expect in cases if (why := probe(f, MC_X, MC_LABELS, okl.MultiClass.load, expect))]
    assert not short, "\n".join(short)
    assert len(cases) >= 35


@pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")
def test_forged_multiclass_checkpoints_are_refused_clearly(tmp_path, capsys):
    """A multi-class stream's checkpoint: the checkpoint itself forged (cut, entries missing,
    duplicated, renamed, links, bombs), and the multi-class model inside it forged."""
    stream = tmp_path / "s.svm"
    stream.write_text("".join(f"{int(3 * x[0])} 1:{x[0]:.4f} 2:{x[1]:.4f} 3:{x[2]:.4f}\n" for x in MC_X[:120]))
    ck = str(tmp_path / "ck.zip")
    assert main(["stream", "--learner", "nogd", "--budget", "20", "--dim", "3", "--input", str(stream),
                 "--checkpoint", ck, "--quiet"]) == 0
    capsys.readouterr()
    assert isinstance(read_checkpoint(ck)[0], okl.MultiClass)

    def load(p):
        return read_checkpoint(p)[0]

    labels = [float(int(3 * x[0])) for x in MC_X]
    assert probe(ck, MC_X, labels, load) is None
    outer = tmp_path / "outer"
    outer.mkdir()
    cases = [(t, f, e.replace("multiclass.json", "stream.json") if e else e)
             for t, f, e in mc_forgeries(ck, str(outer), "nogd")]
    # the model inside: each forgery of a multi-class file, put back into the checkpoint
    entries = _entries(ck)
    inner = tmp_path / "inner"
    inner.mkdir()
    with zipfile.ZipFile(ck) as zf:
        (inner / "model.zip").write_bytes(zf.read("model.npz"))
    for tag, forged, expect in mc_forgeries(str(inner / "model.zip"), str(inner), "nogd"):
        if tag.startswith(("bomb", "declared")):
            continue  # (covered on the checkpoint itself; a bomb inside a stored entry is 1 GiB on disk)
        data = open(forged, "rb").read()
        cases.append((f"inner-{tag}", _write(tmp_path / f"ck-{tag}.zip",
                                             [(i, data if i.filename == "model.npz" else d) for i, d in entries]),
                      None if expect is None else f"model inside the checkpoint.*({expect})"))
    short = [f"{tag}: {why}" for tag, f, expect in cases if (why := probe(f, MC_X, labels, load, expect))]
    assert not short, "\n".join(short)
    assert len(cases) >= 50
