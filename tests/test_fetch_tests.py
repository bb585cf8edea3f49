"""``okl fetch --tests``: the files the data-marked tests read, from a mirror on 127.0.0.1 (or a local
directory) into the layout the tests expect; and what a run without them says (tests/conftest.py)."""

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from okl.cli import main
from okl.data.fetch import TEST_FILES, missing_test_files, sources_for_tests

REPO = Path(__file__).resolve().parents[1]


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def mirror(tmp_path, data_dir, monkeypatch):
    """An http.server on 127.0.0.1 (in a thread) over a copy of the part of the staged data the tests read."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OKL_MIRROR", raising=False)
    root = tmp_path / "mirror"
    for p in TEST_FILES:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(data_dir) / p, root / p)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    httpd.requests, httpd.root = [], root
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def _pytest(*args, env):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600, env=env)


def test_fetch_tests_lays_out_what_the_tests_read_and_they_pass_against_it(mirror, tmp_path, capsys):
    d = tmp_path / "D"
    assert missing_test_files(d) == list(TEST_FILES)
    assert main(["fetch", "--tests", "--mirror", mirror.url, "--data-dir", str(d), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"the {len(TEST_FILES)} files the tests read are in {d}; run the tests with OKL_TEST_DATA={d}" in out
    # exactly the listed files, one request each, at their paths, with the recorded checksums
    assert sorted(mirror.requests) == sorted("/" + p for p in TEST_FILES)
    assert sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()) == sorted(TEST_FILES)
    for src in sources_for_tests():
        assert _sha(d / src.path) == src.sha256, src.path
        with gzip.open(d / src.path, "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == src.raw_sha256, src.path
    assert missing_test_files(d) == []

    # a second run finds them verified and downloads nothing
    assert main(["fetch", "--tests", "--mirror", mirror.url, "--data-dir", str(d), "--quiet"]) == 0
    assert capsys.readouterr().out.count("already present (sha256 ok)") == len(TEST_FILES)
    assert len(mirror.requests) == len(TEST_FILES)

    # the data-marked tests pass against the fetched copy (none skipped: OKL_TEST_DATA_REQUIRED)
    env = {**os.environ, "OKL_TEST_DATA": str(d), "OKL_TEST_DATA_REQUIRED": "1", "OKL_DATA": str(tmp_path / "none")}
    r = _pytest("-q", "tests/test_data.py", "tests/test_kaf_experiments.py::test_lorenz_is_the_kafbox_file_and_embedding",
                env=env)
    assert r.returncode == 0, r.stdout[-3000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout


def test_fetch_tests_from_a_local_directory_and_a_tampered_copy(data_dir, tmp_path, capsys):
    src = tmp_path / "copy"
    for p in TEST_FILES:
        (src / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(data_dir) / p, src / p)
    d = tmp_path / "D"
    assert main(["fetch", "--tests", "--mirror", str(src), "--data-dir", str(d), "--quiet"]) == 0
    assert missing_test_files(d) == []
    assert all(_sha(d / s.path) == s.sha256 for s in sources_for_tests())

    # a flipped bit in the mirror is refused by its checksum; the verified files stay
    bad = src / "kaf/lorenz.dat.gz"
    b = bytearray(bad.read_bytes())
    b[len(b) // 2] ^= 1
    bad.write_bytes(bytes(b))
    (d / "kaf/lorenz.dat.gz").unlink()
    assert main(["fetch", "--tests", "--mirror", str(src), "--data-dir", str(d), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "lorenz.dat.gz" in err and "sha256 checksum mismatch" in err and hashlib.sha256(b).hexdigest() in err
    assert missing_test_files(d) == ["kaf/lorenz.dat.gz"]
    assert not any(p.name.startswith(".okl-fetch-") for p in d.iterdir())

    # a mirror directory without the file names it
    bad.unlink()
    assert main(["fetch", "--tests", "--mirror", str(src), "--data-dir", str(d), "--quiet"]) == 1
    assert f"--mirror {src}: no file kaf/lorenz.dat.gz there" in capsys.readouterr().err

    assert main(["fetch", "--tests", "spambase", "--data-dir", str(d)]) == 2
    assert "give it without names or --all" in capsys.readouterr().err


def test_without_the_files_data_marked_tests_skip_with_the_way_to_get_them(tmp_path):
    """No download: a run pointed at an empty directory skips the data-marked tests, says how many and
    how to get the files, and exits 0; with OKL_TEST_DATA_REQUIRED (CI) the same run fails."""
    env = {**os.environ, "OKL_TEST_DATA": str(tmp_path / "empty"), "OKL_DATA": str(tmp_path / "none")}
    env.pop("OKL_TEST_DATA_REQUIRED", None)
    sel = ["tests/test_data.py", "-k", "bundled or test_splice"]
    r = _pytest(*sel, env=env)
    assert r.returncode == 0, r.stdout[-3000:]
    assert "1 passed, 1 skipped" in r.stdout
    assert (f"1 test skipped for missing benchmark data ({len(TEST_FILES)} of {len(TEST_FILES)} files not in "
            f"{tmp_path / 'empty'}): `okl fetch --tests`") in r.stdout
    assert "okl fetch --tests --data-dir DIR` and OKL_TEST_DATA=DIR" in r.stdout

    r = _pytest(*sel, env={**env, "OKL_TEST_DATA_REQUIRED": "1"})
    assert r.returncode == 1
    assert "1 passed" in r.stdout and "1 error" in r.stdout and "OKL_TEST_DATA_REQUIRED is set and" in r.stdout
