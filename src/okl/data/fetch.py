"""Download registered datasets: ``okl fetch NAME`` / :func:`fetch_dataset`.

Each stored file (:data:`okl.data.registry.FILE_SOURCES`) is downloaded with scikit-learn's
:func:`sklearn.datasets.fetch_file` (retries on HTTP errors and truncated transfers), checked, and
only then renamed to its final name, so an interrupted, truncated or tampered download leaves nothing
under the final name (and nothing at all in the data directory):

* from a mirror (``--mirror URL`` or ``$OKL_MIRROR``): ``URL/<path>``, e.g. ``URL/libsvm/cod-rna.t.gz``
  (the layout of the staged ``shared/datasets`` folder), checked against the sha256 of the stored .gz;
* from the canonical source (LIBSVM data page, UCI, pinned OpenML/PMLB copies): the download's sha256
  when it is known, then converted to the stored layout (``.bz2``, plain text or a tar member ->
  gzip; line endings -> LF; final newline) and checked by the sha256 of the decompressed content.

Files already present with the right checksum are not downloaded again, so an interrupted
``okl fetch`` is simply rerun.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import threading
import time
import warnings
from pathlib import Path

from okl.data.registry import FileSource, data_dirs, dataset_info

MIRROR_ENV = "OKL_MIRROR"


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


def _download(url: str, folder: Path, filename: str, size: int | None, retries: int, delay: float,
              progress: bool) -> Path:
    """One HTTP download into ``folder`` with scikit-learn's ``fetch_file`` (no checksum here)."""
    from sklearn.datasets import fetch_file

    with warnings.catch_warnings(record=True) as caught, _Watch(folder, size, filename, progress):
        warnings.simplefilter("always")
        try:
            path = fetch_file(url, folder=folder, local_filename=filename, n_retries=retries, delay=delay)
        except Exception as exc:  # urllib raises URLError, HTTPError, ContentTooShortError, OSError, ...
            from urllib.error import HTTPError

            reason = exc if isinstance(exc, HTTPError) else (getattr(exc, "reason", None) or exc)
            raise FetchError(f"download of {url} failed after {retries} retr{'y' if retries == 1 else 'ies'}: "
                             f"{reason}") from None
    for w in caught:
        if progress and "Retry" in str(w.message):
            print(f"okl fetch: {w.message}", file=sys.stderr)
    return Path(path)


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


def fetch_file_source(src: FileSource, directory: Path, mirror: str | None = None, *, retries: int = 3,
                      delay: float = 1.0, progress: bool = True, force: bool = False) -> tuple[Path, str]:
    """Fetch one stored file into ``directory/<src.path>``; returns (path, "present" | "fetched")."""
    final = directory / src.path
    if final.is_file() and not force and sha256_file(final) == src.sha256:
        return final, "present"
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".okl-fetch-", dir=directory))  # same file system: atomic rename
    try:
        if mirror:
            url = mirror.rstrip("/") + "/" + src.path
            got = _download(url, staging, src.filename, src.size, retries, delay, progress)
            digest = sha256_file(got)
            if digest != src.sha256:
                raise _mismatch(src.filename, url, digest, src.sha256, directory)
            ready = got
        else:
            url = src.url
            got = _download(url, staging, "download", None if src.fmt != "gz" else src.size, retries, delay,
                            progress)
            if src.download_sha256 is not None:
                digest = sha256_file(got)
                if digest != src.download_sha256:
                    raise _mismatch(src.filename, url, digest, src.download_sha256, directory)
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


def fetch_dataset(name: str, data_dir: str | os.PathLike | None = None, mirror: str | None = None, *,
                  retries: int = 3, delay: float = 1.0, progress: bool = True, force: bool = False,
                  log=None) -> list[Path]:
    """Download a registered dataset's files into ``data_dir`` (else ``$OKL_DATA``, else ``~/.okl/data``).

    ``mirror`` (default ``$OKL_MIRROR``) is a base URL serving the stored layout
    (``mirror/libsvm/cod-rna.t.gz``). Raises :class:`FetchError` on a failed download or a checksum
    mismatch, leaving nothing under the final name; a directory it had to create is removed again.
    ``log(text)`` receives one line per file.
    """
    info = dataset_info(name)
    mirror = mirror if mirror is not None else (os.environ.get(MIRROR_ENV) or None)
    directory = target_dir(data_dir)
    created = [p for p in (directory, *directory.parents) if not p.exists()]
    out = []
    try:
        for src in info.stored_files:
            t0 = time.perf_counter()
            path, status = fetch_file_source(src, directory, mirror, retries=retries, delay=delay,
                                             progress=progress, force=force)
            out.append(path)
            if log is not None:
                if status == "present":
                    log(f"{name}: {src.path} already present (sha256 ok)")
                else:
                    log(f"{name}: fetched {src.path} ({path.stat().st_size / 1e6:.2f} MB, sha256 "
                        f"{src.sha256[:12]}... ok, {time.perf_counter() - t0:.1f} s) -> {path}")
    except BaseException:
        for p in created:  # innermost first: remove only what this call created and left empty
            try:
                p.rmdir()
            except OSError:
                break
        raise
    return out


__all__ = ["FetchError", "MIRROR_ENV", "fetch_dataset", "fetch_file_source", "sha256_file", "target_dir"]
