"""Download registered datasets: ``okl fetch NAME`` / :func:`fetch_dataset`; the test suite's files:
``okl fetch --tests`` / :func:`fetch_test_files`.

Each stored file (:data:`okl.data.registry.FILE_SOURCES`) is downloaded through pooch
(``pooch.retrieve``: a temporary file, the sha256 check, then the move to its name) with okl's own
transfer (:class:`_Downloader`: the timeout, stall refusal and retries below), converted, checked,
and only then renamed to its final name, so an interrupted, truncated or tampered download leaves
nothing under the final name (and nothing at all in the data directory):

* from a mirror (``--mirror URL_OR_DIR`` or ``$OKL_MIRROR``): ``URL/<path>``, e.g. ``URL/libsvm/cod-rna.t.gz``
  (the layout of the staged ``shared/datasets`` folder), or the same path under a local directory,
  checked against the sha256 of the stored .gz;
* from the canonical source (LIBSVM data page, UCI, pinned OpenML/PMLB copies, KAFBOX): the download's sha256
  when it is known, then converted to the stored layout (``.bz2``, plain text or a tar member ->
  gzip; line endings -> LF; final newline) and checked by the sha256 of the decompressed content.

Files already present with the right checksum are not downloaded again, so an interrupted
``okl fetch`` is simply rerun.

Network reads have a timeout (``timeout``, ``okl fetch --timeout``, default
:data:`DEFAULT_TIMEOUT` s): a connection or a read that waits longer for data, or a transfer that
brings less than :data:`MIN_BYTES_PER_WINDOW` bytes in any window of that length (a server
trickling one byte every 2 s), fails like a broken transfer. Broken transfers, timeouts, failed
connections and server errors (5xx) are retried; a client error (404, 403, a redirect loop) is
not, as asking again gets the same answer. Each download stages in a hidden
``.okl-fetch-<host>-<pid>-*`` folder of the data directory, removed when the download ends in any
way the process sees; one left by a killed process (its pid no longer running) is removed by the
next fetch into that directory.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import math
import os
import shutil
import socket
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

from okl.data.registry import FILE_SOURCES, FileSource, data_dirs, dataset_info

MIRROR_ENV = "OKL_MIRROR"
#: seconds a connection or a read may wait for data, and the window in which a transfer must bring
#: at least MIN_BYTES_PER_WINDOW bytes (``okl fetch --timeout``)
DEFAULT_TIMEOUT = 15.0
MIN_BYTES_PER_WINDOW = 1024
#: prefix of the hidden staging folders of downloads in a data directory
STAGING_PREFIX = ".okl-fetch-"


class FetchError(OSError):
    """A download that failed or did not match its checksum; the message says which and why."""


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def target_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """Where fetched files go: ``data_dir``, else ``$OKL_DATA``, else ``~/.okl/data``."""
    return data_dirs(data_dir)[0]


class _Watch:
    """Progress bar of a download: watches the growing temporary file(s) in ``folder``."""

    def __init__(self, folder: Path, total: int | None, label: str, enabled: bool):
        self.folder, self.total, self.label, self.enabled = folder, total, label, enabled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _size(self) -> int:
        try:
            return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())
        except OSError:
            return 0

    def _line(self, size: int, final: bool = False) -> str:
        mb = size / 1e6
        if self.total:
            frac = min(size / self.total, 1.0)
            bar = "#" * int(30 * frac)
            return f"{self.label:<28.28} [{bar:<30}] {100 * frac:5.1f}%  {mb:7.2f} MB"
        return f"{self.label:<28.28} {mb:7.2f} MB" + (" done" if final else "")

    def _loop(self):
        tty = sys.stderr.isatty()
        last_decile = -1
        while not self._stop.wait(0.2):
            size = self._size()
            if tty:
                sys.stderr.write("\r" + self._line(size))
                sys.stderr.flush()
            elif self.total:
                decile = int(10 * size / self.total)
                if decile > last_decile and decile < 10:
                    last_decile = decile
                    sys.stderr.write(self._line(size) + "\n")

    def __enter__(self):
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop.set()
            self._thread.join()
            end = "\n" if sys.stderr.isatty() else ""
            if sys.stderr.isatty():
                sys.stderr.write("\r" + self._line(self._size(), True) + end)
            sys.stderr.flush()


class _Transfer(Exception):
    """One failed transfer: ``reason`` for the message, ``retry`` whether asking again can help."""

    def __init__(self, reason: str, retry: bool):
        super().__init__(reason)
        self.reason, self.retry = reason, retry


def _get(url: str, dest: Path, size: int | None, timeout: float) -> None:
    """One HTTP(S) GET of ``url`` into ``dest``; raises :class:`_Transfer`. Every wait for data is
    limited to ``timeout`` seconds (urllib alone waits forever on a server that sent its headers
    and stalled), every ``timeout``-second window must bring :data:`MIN_BYTES_PER_WINDOW` bytes
    (one byte every 2 s would otherwise hold a download for days), and a Content-Length far beyond
    the recorded size is refused before reading."""
    import http.client
    import urllib.error
    import urllib.request

    from okl._version import __version__

    request = urllib.request.Request(url, headers={"User-Agent": f"okl/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp, open(dest, "wb") as out:
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.strip().isdigit() else None
            if size is not None and total is not None and total > 2 * size + (1 << 20):
                raise _Transfer(f"the server announces {total} bytes for a file of {size} bytes; "
                                "is the mirror serving the stored layout?", retry=False)
            read = getattr(resp, "read1", None) or resp.read  # what has arrived, not a full 64 KiB
            got, window_start, window_bytes = 0, time.monotonic(), 0
            while True:
                chunk = read(1 << 16)
                if not chunk:
                    break
                out.write(chunk)
                got += len(chunk)
                window_bytes += len(chunk)
                now = time.monotonic()
                if now - window_start >= timeout:
                    if window_bytes < MIN_BYTES_PER_WINDOW:
                        raise _Transfer(f"too slow: {window_bytes} bytes in {now - window_start:.0f} s "
                                        f"(--timeout {timeout:g}: at least {MIN_BYTES_PER_WINDOW} bytes per "
                                        f"{timeout:g} s)", retry=True)
                    window_start, window_bytes = now, 0
            if total is not None and got < total:
                raise _Transfer(f"retrieval incomplete: got only {got} out of {total} bytes", retry=True)
    except _Transfer:
        raise
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            what = ("a redirect loop (one address visited 4 times or more than 10 redirects)"
                    if "infinite loop" in str(exc.reason) else f"a redirect okl cannot follow ({exc.reason})")
            raise _Transfer(f"HTTP {exc.code}: {what}", retry=False) from None
        raise _Transfer(f"HTTP Error {exc.code}: {exc.reason}", retry=exc.code >= 500 or exc.code in (408, 429)) \
            from None
    except (TimeoutError, socket.timeout):
        raise _Transfer(f"no data for {timeout:g} s (--timeout {timeout:g}); the server stalled", retry=True) \
            from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, socket.timeout)):
            raise _Transfer(f"no answer within {timeout:g} s (--timeout {timeout:g})", retry=True) from None
        raise _Transfer(str(exc.reason), retry=True) from None
    except (ConnectionError, http.client.HTTPException) as exc:  # reset, IncompleteRead, bad status line
        raise _Transfer(f"connection broken ({type(exc).__name__}: {exc})", retry=True) from None


class _Downloader:
    """pooch's downloader protocol (``downloader(url, output_file, pooch)``) with okl's transfer rules:
    each try is :func:`_get` (timeouts, the refusal of a stalled or trickling server, the size
    guard), retried ``retries`` times ``delay`` s apart when asking again can help (pooch's own
    retries would also repeat a 404). Keeps the sha256 of what it wrote, for the mismatch message."""

    def __init__(self, size: int | None, retries: int, delay: float, progress: bool, timeout: float):
        self.size, self.retries, self.delay, self.progress, self.timeout = size, retries, delay, progress, timeout
        self.digest = ""

    def __call__(self, url: str, output_file, pooch=None, check_only: bool = False) -> None:
        dest = Path(output_file)
        attempt = 0
        while True:
            try:
                _get(url, dest, self.size, self.timeout)
                self.digest = sha256_file(dest)
                return
            except _Transfer as exc:
                if not exc.retry:
                    raise FetchError(f"download of {url} failed: {exc.reason} (not retried)") from None
                if attempt >= self.retries:
                    raise FetchError(f"download of {url} failed after {self.retries} "
                                     f"retr{'y' if self.retries == 1 else 'ies'}: {exc.reason}") from None
                attempt += 1
                if self.progress:
                    print(f"okl fetch: {url}: {exc.reason}; retry {attempt} of {self.retries} in {self.delay:g} s",
                          file=sys.stderr)
                time.sleep(self.delay)


def _download(url: str, folder: Path, filename: str, size: int | None, retries: int, delay: float,
              progress: bool, timeout: float = DEFAULT_TIMEOUT, sha256: str | None = None) -> Path:
    """One HTTP download into ``folder/filename`` through ``pooch.retrieve``: okl's
    :class:`_Downloader` writes pooch's temporary file, pooch checks it against ``sha256`` (when
    given) and only then moves it to its name; a mismatch raises :class:`FetchError` naming both
    checksums."""
    import logging

    import pooch

    downloader = _Downloader(size, retries, delay, progress, timeout)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)  # pooch says "Downloading ..." and the hash at INFO: okl prints its own line
    try:
        with _Watch(folder, size, filename, progress):
            return Path(pooch.retrieve(url, known_hash=f"sha256:{sha256}" if sha256 else None, fname=filename,
                                       path=folder, downloader=downloader, progressbar=False))
    except ValueError:  # pooch's hash check (the temporary file is already removed)
        if not downloader.digest:
            raise
        raise _mismatch(filename, url, downloader.digest, sha256, folder.parent) from None
    finally:
        logger.setLevel(level)


def _copy_local(mirror: Path, src: FileSource, folder: Path) -> Path:
    """``--mirror DIR``: the stored file from a local copy of the layout (``DIR/libsvm/cod-rna.t.gz``)."""
    origin = mirror / src.path
    if not origin.is_file():
        raise FetchError(f"--mirror {mirror}: no file {src.path} there (a mirror directory holds the stored "
                         "layout, e.g. libsvm/cod-rna.t.gz)")
    dest = folder / src.filename
    shutil.copyfile(origin, dest)
    digest = sha256_file(dest)
    if digest != src.sha256:
        raise _mismatch(src.filename, str(origin), digest, src.sha256, folder.parent)
    return dest


def local_mirror(mirror: str | None) -> Path | None:
    """The directory of a ``--mirror`` that is a local path (or ``file://`` URL), else None (a URL)."""
    if not mirror:
        return None
    if mirror.startswith("file://"):
        return Path(mirror[len("file://"):])
    return None if "://" in mirror else Path(mirror).expanduser()


def _content(downloaded: Path, src: FileSource) -> bytes:
    """The downloaded file converted to the stored content (decompressed, LF, final newline)."""
    if src.fmt == "gz":
        with gzip.open(downloaded, "rb") as fh:
            data = fh.read()
    elif src.fmt == "bz2":
        with bz2.open(downloaded, "rb") as fh:
            data = fh.read()
    elif src.fmt.startswith("tar:"):
        member = src.fmt[4:]
        with tarfile.open(downloaded, "r:*") as tar:  # one member is read; nothing is extracted
            fh = tar.extractfile(member)
            if fh is None:
                raise FetchError(f"{src.url}: archive has no file {member!r}")
            data = fh.read()
    else:
        data = downloaded.read_bytes()
    data = data.replace(b"\r\n", b"\n")
    if src.drop_prefix:
        prefix = src.drop_prefix.encode()
        data = b"".join(line for line in data.splitlines(keepends=True) if not line.startswith(prefix))
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def _mismatch(what: str, url: str, got: str, expected: str, where: Path) -> FetchError:
    return FetchError(f"{what} from {url}: sha256 checksum mismatch (got {got}, expected {expected}); "
                      f"the download was discarded and nothing was written to {where}")


def _staging_owner(name: str) -> tuple[str, int] | None:
    """(host, pid) of a staging folder name ``.okl-fetch-<host>-<pid>-<random>``, else None."""
    parts = name[len(STAGING_PREFIX):].rsplit("-", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return parts[0], int(parts[1])


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or unknowable: keep its folder
    return True


def remove_stale_staging(directory: Path) -> list[Path]:
    """Remove the staging folders that downloads killed outright (SIGKILL, power loss) left in
    ``directory``: those of this host whose process is no longer running, and those of the older
    unnamed form ``.okl-fetch-<random>`` untouched for an hour. A live download's folder, or one
    of another host sharing the directory, is kept. Returns what was removed."""
    removed = []
    host = socket.gethostname()
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(STAGING_PREFIX) or not entry.is_dir():
            continue
        owner = _staging_owner(entry.name)
        try:
            stale = (owner is not None and owner[0] == host and not _pid_running(owner[1])) or (
                owner is None and time.time() - entry.stat().st_mtime > 3600)
        except OSError:
            continue
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _make_directory(directory: Path) -> None:
    """``directory`` and its parents, or a one-line error naming the path that is in the way."""
    for p in (directory, *directory.parents):
        if p.exists():
            if not p.is_dir():
                raise NotADirectoryError(f"{p} is a file, so the data directory {directory} cannot be "
                                         "created there; choose another --data-dir (or $OKL_DATA)")
            break
    directory.mkdir(parents=True, exist_ok=True)


def fetch_file_source(src: FileSource, directory: Path, mirror: str | None = None, *, retries: int = 3,
                      delay: float = 1.0, progress: bool = True, force: bool = False,
                      timeout: float = DEFAULT_TIMEOUT) -> tuple[Path, str]:
    """Fetch one stored file into ``directory/<src.path>``; returns (path, "present" | "fetched")."""
    final = directory / src.path
    if final.is_file() and not force and sha256_file(final) == src.sha256:
        return final, "present"
    _make_directory(directory)
    remove_stale_staging(directory)
    # same file system: atomic rename; host and pid in the name say whose it is
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{socket.gethostname()}-{os.getpid()}-",
                                    dir=directory))
    try:
        if local_mirror(mirror) is not None:
            ready = _copy_local(local_mirror(mirror), src, staging)
        elif mirror:
            ready = _download(mirror.rstrip("/") + "/" + src.path, staging, src.filename, src.size, retries,
                              delay, progress, timeout, sha256=src.sha256)
        else:
            url = src.url
            got = _download(url, staging, "download", None if src.fmt != "gz" else src.size, retries, delay,
                            progress, timeout, sha256=src.download_sha256)
            if src.fmt == "gz" and src.download_sha256 == src.sha256:
                ready = got
            else:
                try:
                    data = _content(got, src)
                except (OSError, EOFError, tarfile.TarError) as exc:
                    raise FetchError(f"{url}: cannot read the download as {src.fmt} ({exc})") from None
                digest = hashlib.sha256(data).hexdigest()
                if digest != src.raw_sha256:
                    raise FetchError(
                        f"{src.filename} from {url}: sha256 checksum mismatch of the content (got {digest}, "
                        f"expected {src.raw_sha256}): the source differs from the copy okl records; "
                        f"nothing was written to {directory}. Use --mirror with a verified copy")
                ready = staging / src.filename
                with open(ready, "wb") as raw, gzip.GzipFile(src.filename[:-3], "wb", 9, raw, mtime=0) as fh:
                    fh.write(data)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(ready, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final, "fetched"


def _check_timeout(timeout) -> None:
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {timeout!r}")


def fetch_files(label: str, sources, data_dir: str | os.PathLike | None = None, mirror: str | None = None, *,
                retries: int = 3, delay: float = 1.0, progress: bool = True, force: bool = False, log=None,
                timeout: float = DEFAULT_TIMEOUT) -> list[Path]:
    """Fetch stored files (:class:`FileSource`) into ``data_dir``, one after another, each by
    :func:`fetch_file_source`; the one path :func:`fetch_dataset` and :func:`fetch_test_files` take.
    On a failure the directories this call created and left empty are removed again."""
    _check_timeout(timeout)
    mirror = mirror if mirror is not None else (os.environ.get(MIRROR_ENV) or None)
    directory = target_dir(data_dir)
    created = [p for p in (directory, *directory.parents) if not p.exists()]
    out = []
    try:
        for src in sources:
            t0 = time.perf_counter()
            path, status = fetch_file_source(src, directory, mirror, retries=retries, delay=delay,
                                             progress=progress, force=force, timeout=timeout)
            out.append(path)
            if log is not None:
                if status == "present":
                    log(f"{label}: {src.path} already present (sha256 ok)")
                else:
                    log(f"{label}: fetched {src.path} ({path.stat().st_size / 1e6:.2f} MB, sha256 "
                        f"{src.sha256[:12]}... ok, {time.perf_counter() - t0:.1f} s) -> {path}")
    except BaseException:
        for p in created:  # innermost first: remove only what this call created and left empty
            try:
                p.rmdir()
            except OSError:
                break
        raise
    return out


def fetch_dataset(name: str, data_dir: str | os.PathLike | None = None, mirror: str | None = None, *,
                  retries: int = 3, delay: float = 1.0, progress: bool = True, force: bool = False,
                  log=None, timeout: float = DEFAULT_TIMEOUT) -> list[Path]:
    """Download a registered dataset's files into ``data_dir`` (else ``$OKL_DATA``, else ``~/.okl/data``).

    ``mirror`` (default ``$OKL_MIRROR``) is a base URL serving the stored layout
    (``mirror/libsvm/cod-rna.t.gz``), or a local directory holding it. Raises :class:`FetchError`
    on a failed download or a checksum mismatch, leaving nothing under the final name; a directory
    it had to create is removed again. ``log(text)`` receives one line per file. ``timeout``:
    seconds a network read may wait for data (and the window in which at least
    :data:`MIN_BYTES_PER_WINDOW` bytes must arrive).
    """
    _check_timeout(timeout)
    info = dataset_info(name)
    return fetch_files(name, info.stored_files, data_dir, mirror, retries=retries, delay=delay, progress=progress,
                       force=force, log=log, timeout=timeout)


#: the stored files okl's test suite reads (its data-marked tests: tests/conftest.py), in the stored
#: layout; ``okl fetch --tests`` fetches exactly these. german is bundled with okl, but the tests
#: also read the staged copy through ``--data-dir``.
TEST_FILES = (
    "libsvm/german.numer_scale.gz", "libsvm/svmguide3.gz", "libsvm/svmguide3.t.gz", "uci/spambase.data.gz",
    "libsvm/cod-rna.gz", "libsvm/cod-rna.t.gz", "libsvm/ijcnn1.gz", "libsvm/ijcnn1.t.gz", "libsvm/svmguide1.gz",
    "libsvm/svmguide1.t.gz", "regression/cpusmall.gz", "regression/cal_housing.data.gz",
    "regression/parkinsons_updrs.data.gz", "uci/adult.data.gz", "uci/adult.test.gz", "openml/pol.tsv.gz",
    "openml/house_16H.tsv.gz", "openml/elevators.arff.gz", "openml/ailerons.arff.gz", "openml/splice.arff.gz",
    "kaf/lorenz.dat.gz", "kaf/mg30.dat.gz",
)


def sources_for_tests() -> list[FileSource]:
    """The :class:`FileSource` of every file in :data:`TEST_FILES`."""
    by_path = {src.path: src for src in FILE_SOURCES.values()}
    return [by_path[p] for p in TEST_FILES]


def missing_test_files(directory: str | os.PathLike) -> list[str]:
    """The paths of :data:`TEST_FILES` not under ``directory`` at their recorded size (cheap: no
    checksum; ``okl fetch --tests`` verifies them)."""
    root = Path(directory)
    out = []
    for src in sources_for_tests():
        p = root / src.path
        try:
            ok = p.stat().st_size == src.size
        except OSError:
            ok = False
        if not ok:
            out.append(src.path)
    return out


def fetch_test_files(data_dir: str | os.PathLike | None = None, mirror: str | None = None, **kwargs) -> list[Path]:
    """``okl fetch --tests``: every file the test suite reads (:data:`TEST_FILES`), checksum-verified,
    into ``data_dir`` in the layout the tests expect (``libsvm/``, ``uci/``, ``kaf/`` ...); the
    other arguments as :func:`fetch_dataset`."""
    return fetch_files("tests", sources_for_tests(), data_dir, mirror, **kwargs)


__all__ = ["DEFAULT_TIMEOUT", "FetchError", "MIRROR_ENV", "TEST_FILES", "fetch_dataset", "fetch_files",
           "fetch_file_source", "fetch_test_files", "local_mirror", "missing_test_files", "remove_stale_staging",
           "sha256_file", "target_dir", "sources_for_tests"]
