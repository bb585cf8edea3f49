"""okl fetch against a local HTTP server on 127.0.0.1 (started and stopped here): a good mirror, a
tampered file, a server that closes mid-file, and the canonical-source conversion. No other network."""

import bz2
import dataclasses
import gzip
import hashlib
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from importlib import resources
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

import okl
from okl.cli import main
from okl.data import FetchError, fetch_dataset, load_dataset
from okl.data.registry import FILE_SOURCES, REGISTRY


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class _Handler(SimpleHTTPRequestHandler):
    """Serves ``directory``; paths in ``server.truncate`` (path -> times left) get a full
    Content-Length but only half of the body, then the connection is closed."""

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        left = self.server.truncate.get(self.path, 0)
        if left:
            self.server.truncate[self.path] = left - 1
            body = Path(self.translate_path(self.path)).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A plain HTTP server on 127.0.0.1 over a temporary copy of the needed staged files."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OKL_MIRROR", raising=False)
    root = tmp_path / "mirror"
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    httpd.root, httpd.requests, httpd.truncate = root, [], {}
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def _stage(server, data_dir, *paths):
    for p in paths:
        (server.root / p).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(data_dir) / p, server.root / p)


def _files(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if p.is_file()] if d.exists() else []


def _row(out: str, learner: str) -> list[str]:
    """The cells of a learner's row in okl run's table, without the time column."""
    line = next(line for line in out.splitlines() if line.startswith(f"| {learner} "))
    return [c.strip() for c in line.split("|")[2:-2]]


def test_registry_records_source_checksums_licence_for_every_file(data_dir):
    for info in REGISTRY.values():
        assert info.source.startswith("https://"), info.name
        assert info.licence and info.citation and "[0, 1]" in info.preprocessing
        for src in info.stored_files:
            assert src.url.startswith("https://")
            stored = Path(data_dir) / src.path
            # the recorded checksums are those of the staged copy (transcribed from its README)
            assert _sha(stored) == src.sha256, src.path
            assert stored.stat().st_size == src.size
            with gzip.open(stored, "rb") as fh:
                assert hashlib.sha256(fh.read()).hexdigest() == src.raw_sha256, src.path


def test_fetch_codrna_spambase_from_mirror_then_run(server, data_dir, tmp_path, capsys):
    _stage(server, data_dir, "libsvm/cod-rna.t.gz", "uci/spambase.data.gz")
    d = tmp_path / "D"
    assert main(["fetch", "codrna", "spambase", "--mirror", server.url, "--data-dir", str(d), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "fetched libsvm/cod-rna.t.gz" in out and "fetched uci/spambase.data.gz" in out
    assert sorted(server.requests) == ["/libsvm/cod-rna.t.gz", "/uci/spambase.data.gz"]
    assert sorted(p.relative_to(d).as_posix() for p in _files(d)) == ["libsvm/cod-rna.t.gz", "uci/spambase.data.gz"]
    assert _sha(d / "libsvm/cod-rna.t.gz") == FILE_SOURCES["cod-rna.t.gz"].sha256

    # the fetched copy gives the same numbers as the staged one
    args = ["run", "--dataset", "codrna", "--learners", "nogd", "--runs", "1", "--max-rows", "3000", "--quiet"]
    assert main(args + ["--data-dir", str(d)]) == 0
    fetched = capsys.readouterr().out
    assert main(args + ["--data-dir", data_dir]) == 0
    staged = capsys.readouterr().out
    assert "T = 3000" in fetched and _row(fetched, "nogd") == _row(staged, "nogd")
    assert 1.0 < float(_row(fetched, "nogd")[0].split("±")[0]) < 20.0
    X, y = load_dataset("spambase", d)
    assert X.shape == (4601, 57) and int((y == 1).sum()) == 1813

    # a second fetch finds verified copies and downloads nothing
    assert main(["fetch", "codrna", "--mirror", server.url, "--data-dir", str(d), "--quiet"]) == 0
    assert "already present (sha256 ok)" in capsys.readouterr().out
    assert len(server.requests) == 2


def test_okl_mirror_environment_variable(server, data_dir, tmp_path, monkeypatch):
    _stage(server, data_dir, "libsvm/svmguide3.gz", "libsvm/svmguide3.t.gz")
    monkeypatch.setenv("OKL_MIRROR", server.url + "/")
    paths = okl.fetch_dataset("svmguide3", tmp_path / "D", progress=False)
    assert [p.name for p in paths] == ["svmguide3.gz", "svmguide3.t.gz"]
    assert load_dataset("svmguide3", tmp_path / "D")[0].shape == (1284, 22)


def _stage_bundled_german(server):
    """The german file okl bundles, in the mirror's layout: the refusals below need no download."""
    (server.root / "libsvm").mkdir(parents=True, exist_ok=True)
    shutil.copy(resources.files("okl.data").joinpath("bundled", "german.numer_scale.gz"),
                server.root / "libsvm/german.numer_scale.gz")


def test_tampered_file_fails_naming_the_checksum_and_leaves_nothing(server, tmp_path):
    _stage_bundled_german(server)
    f = server.root / "libsvm/german.numer_scale.gz"
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0x01  # one flipped bit
    f.write_bytes(bytes(b))
    d = tmp_path / "D"
    r = subprocess.run([sys.executable, "-m", "okl.cli", "fetch", "german", "--mirror", server.url,
                        "--data-dir", str(d), "--quiet"], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "no_proxy": "127.0.0.1"})
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "sha256 checksum mismatch" in r.stderr
    assert FILE_SOURCES["german.numer_scale.gz"].sha256 in r.stderr and hashlib.sha256(b).hexdigest() in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not d.exists()  # created by the call, removed again

    # an existing data directory keeps its other files and gains nothing
    d.mkdir()
    (d / "keep.txt").write_text("x")
    with pytest.raises(FetchError, match="sha256 checksum mismatch"):
        fetch_dataset("german", d, server.url, progress=False, retries=0)
    assert _files(d) == [d / "keep.txt"] and list(d.iterdir()) == [d / "keep.txt"]


def test_server_closing_mid_file_leaves_nothing(server, tmp_path):
    _stage_bundled_german(server)
    server.truncate["/libsvm/german.numer_scale.gz"] = 99
    d = tmp_path / "D"
    with pytest.raises(FetchError, match=r"failed after 1 retry: .*retrieval incomplete"):
        fetch_dataset("german", d, server.url, progress=False, retries=1, delay=0)
    assert server.requests == ["/libsvm/german.numer_scale.gz"] * 2  # first try + one retry
    assert not d.exists()


def test_interrupted_download_is_retried_cleanly(server, tmp_path):
    _stage_bundled_german(server)
    server.truncate["/libsvm/german.numer_scale.gz"] = 1  # the first transfer breaks off
    d = tmp_path / "D"
    [path] = fetch_dataset("german", d, server.url, progress=False, retries=2, delay=0)
    assert len(server.requests) == 2
    assert _sha(path) == FILE_SOURCES["german.numer_scale.gz"].sha256
    assert _files(d) == [path]
    np.testing.assert_array_equal(load_dataset("german", d)[0], load_dataset("german")[0])


def test_canonical_source_is_converted_to_the_stored_layout(server, data_dir, tmp_path, monkeypatch):
    """Plain text with CRLF (german) and .bz2 (svmguide3) become the stored .gz, checked by content."""
    def raw(p):
        with gzip.open(Path(data_dir) / p, "rb") as fh:
            return fh.read()
    server.root.mkdir()
    (server.root / "german.numer_scale").write_bytes(raw("libsvm/german.numer_scale.gz").replace(b"\n", b"\r\n"))
    (server.root / "svmguide3.bz2").write_bytes(bz2.compress(raw("libsvm/svmguide3.gz")))
    (server.root / "svmguide3.t").write_bytes(raw("libsvm/svmguide3.t.gz")[:-1])  # no final newline
    for name, url, fmt in [("german.numer_scale.gz", "/german.numer_scale", "text"),
                           ("svmguide3.gz", "/svmguide3.bz2", "bz2"), ("svmguide3.t.gz", "/svmguide3.t", "text")]:
        monkeypatch.setitem(FILE_SOURCES, name, dataclasses.replace(FILE_SOURCES[name], url=server.url + url,
                                                                    fmt=fmt))
    d = tmp_path / "D"
    fetch_dataset("german", d, progress=False)
    fetch_dataset("svmguide3", d, progress=False)
    for p in ("libsvm/german.numer_scale.gz", "libsvm/svmguide3.gz", "libsvm/svmguide3.t.gz"):
        with gzip.open(d / p, "rb") as fh:
            assert fh.read() == raw(p)
    X, y = load_dataset("svmguide3", d)
    Xs, ys = load_dataset("svmguide3", data_dir)
    np.testing.assert_array_equal(X, Xs)
    np.testing.assert_array_equal(y, ys)

    # a source whose content differs from the recorded copy is refused
    (server.root / "german.numer_scale").write_bytes(raw("libsvm/german.numer_scale.gz").replace(b"+1", b"-1", 1))
    with pytest.raises(FetchError, match="checksum mismatch of the content"):
        fetch_dataset("german", tmp_path / "E", progress=False, force=True)
    assert not (tmp_path / "E").exists()


def test_nothing_downloads_unasked_and_the_message_names_the_command(server, data_dir, tmp_path, capsys,
                                                                    monkeypatch):
    _stage(server, data_dir, "libsvm/cod-rna.gz")
    monkeypatch.setenv("OKL_MIRROR", server.url)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OKL_DATA", raising=False)
    d = tmp_path / "D"
    args = ["run", "--dataset", "codrna-train", "--learners", "linear", "--runs", "1", "--max-rows", "500",
            "--data-dir", str(d), "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"okl fetch codrna-train --data-dir {d}" in err and "binary.html#cod-rna" in err
    assert server.requests == [] and not d.exists()
    assert main(args + ["--download"]) == 0  # asked: fetched from $OKL_MIRROR, then run
    assert server.requests == ["/libsvm/cod-rna.gz"]
    assert "T = 500" in capsys.readouterr().out


def test_datasets_shows_a_source_url_for_every_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name, info in REGISTRY.items():
        row = next(line for line in out.splitlines() if line.startswith(f"| {name} "))
        assert re.search(r"https://\S+", row) and info.source in row
    assert main(["datasets", "ijcnn1"]) == 0
    out = capsys.readouterr().out
    assert FILE_SOURCES["ijcnn1.t.gz"].sha256 in out and "ijcnn1.t.bz2" in out and "licence" in out


def test_fetch_unknown_name_fails_before_downloading(server, tmp_path, capsys):
    assert main(["fetch", "nope", "--mirror", server.url, "--data-dir", str(tmp_path / "D")]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
    assert server.requests == []


def test_sweep_names_the_fetch_command_before_running(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("OKL_DATA", raising=False)
    store = tmp_path / "s.sqlite"
    assert main(["sweep", "--datasets", "german,codrna-1", "--learners", "nogd", "--runs", "1",
                 "--store", str(store), "--data-dir", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"no files for codrna. Download with: okl fetch codrna --data-dir {tmp_path}" in err
    assert not store.exists()
