"""Where finished jobs' result folders live: a folder on shared storage (the default) or an S3-compatible bucket.

A job runs into a local staging folder; when it succeeds, the process that ran it (a server running jobs inline, or
a ``backbone worker``) hands the folder to the result store (:meth:`ResultStore.store`), and any server lists and
streams the files from there. Which store is a server and worker setting, never a request's:

* ``BACKBONE_RESULT_STORE`` empty (the default): :class:`FolderResultStore`, ``<data dir>/results`` (a worker's
  ``--results-dir``), on a file system every server and worker mounts at the same path. A result is renamed into
  place from a staging folder on the same file system, so it is never half-written.
* ``BACKBONE_RESULT_STORE=s3://bucket/prefix``: :class:`ObjectResultStore`, an S3-compatible object store (AWS S3,
  MinIO, Ceph, ...) through `s3fs <https://s3fs.readthedocs.io>`_ (the ``s3`` extra). Credentials, region and
  endpoint come from the standard AWS variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
  ``AWS_REGION``, ``AWS_ENDPOINT_URL`` or ``AWS_ENDPOINT_URL_S3``, ``AWS_PROFILE``); docs/deploy.md. A job's
  files are uploaded before the job is marked succeeded, so no reader sees a half-uploaded result.

Nothing here names a server path, an endpoint or a key to an API client: the routes serve file names from the job's
own allow-list, and a store's failures are reported without them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHUNK_BYTES = 1024 * 1024
"""Bytes read from an object store per request while a file is streamed to a client (memory stays bounded)."""

S3_CONNECT_TIMEOUT_S = 10.0
"""Seconds to connect to an object store before a request fails (a wrong endpoint fails at start, not after
minutes of retries)."""


class ResultStoreError(OSError):
    """The result store cannot be used, or refused an operation (a storage failure: ``errno`` is ``EIO``).

    ``str()`` is the operator's one line (it names the store, never a secret); ``strerror`` is what an API client
    may read (a job's message), without the store's address.
    """

    def __init__(self, message: str, public: str = "the result store refused the operation") -> None:
        super().__init__(errno.EIO, public)
        self.message = message

    def __str__(self) -> str:
        return self.message


def parse_result_store(url: str) -> tuple[str, str] | None:
    """``s3://bucket/prefix`` -> ``("bucket", "prefix")``; empty -> None (the results folder).

    Raises
    ------
    ValueError
        Another scheme, no bucket, or a prefix with empty, ``.`` or ``..`` parts (one sentence).
    """
    url = url.strip()
    if not url:
        return None
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() != "s3":
        raise ValueError(f"{url!r} is not an s3://bucket/prefix URL (leave it empty for the results folder "
                         "in the data dir)")
    bucket, _, prefix = rest.partition("/")
    if not bucket or any(c in bucket for c in "?#@:") or not bucket.replace("-", "").replace(".", "").isalnum():
        raise ValueError(f"{url!r} names no valid bucket: give s3://bucket or s3://bucket/prefix")
    parts = [p for p in prefix.split("/") if p != ""] if prefix.strip("/") else []
    if any(p in (".", "..") or any(c in p for c in "?#\\") for p in parts):
        raise ValueError(f"{url!r} has a prefix with '.', '..', '?', '#' or '\\' parts")
    return bucket, "/".join(parts)


@dataclass(frozen=True)
class StoredFile:
    """A result file opened for streaming: its size and its bytes in chunks of at most :data:`CHUNK_BYTES`."""

    size_bytes: int
    chunks: Iterator[bytes]


class ResultStore(ABC):
    """Finished jobs' result folders, one per job id, with files named relative to it (``a/b.csv``)."""

    @abstractmethod
    def describe(self) -> str:
        """What the store is, for the operator's log (a folder or ``s3://bucket/prefix``; never a secret)."""

    @abstractmethod
    def check(self) -> None:
        """Write and remove a probe, so a store that cannot be used is reported at start.

        Raises
        ------
        ResultStoreError
            One sentence naming the store and the reason.
        """

    @abstractmethod
    def store(self, job_id: str, folder: Path) -> int:
        """Make ``folder`` the job's result (replacing any earlier one) and remove the local folder. Returns the
        bytes stored. On failure nothing of the job is left stored (:class:`ResultStoreError` or ``OSError``)."""

    @abstractmethod
    def delete(self, job_id: str) -> None:
        """Remove the job's result (nothing when there is none)."""

    @abstractmethod
    def sizes(self, job_id: str) -> dict[str, int]:
        """Every file of the job's result -> its size in bytes (empty when there is none)."""

    @abstractmethod
    def local_file(self, job_id: str, name: str) -> Path | None:
        """The file on this machine's file system when the store is a folder, for a response streamed from disk;
        None for an object store (then :meth:`open`). A name that leaves the job's folder is None too."""

    @abstractmethod
    def open(self, job_id: str, name: str) -> StoredFile | None:
        """The file's size and a bounded stream of its bytes; None when the job has no such file."""

    @abstractmethod
    def local_folder(self, job_id: str, scratch: Path) -> contextlib.AbstractContextManager[Path]:
        """A folder on this machine holding the job's files for the duration of the block (the folder itself, or a
        copy under ``scratch`` removed afterwards), for the renderers that read a whole result."""


class FolderResultStore(ResultStore):
    """Results in ``root/<job id>`` on a file system every server and worker mounts (today's layout)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return f"folder {self.root}"

    def check(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=self.root, prefix=".write-probe-"):
                pass
        except OSError as exc:
            raise ResultStoreError(f"the results directory {self.root} is not writable "
                                   f"({exc.strerror or exc})") from None

    def store(self, job_id: str, folder: Path) -> int:
        dst = self.root / job_id
        try:
            if dst.exists():
                shutil.rmtree(dst)
            folder.mkdir(parents=True, exist_ok=True)
            os.replace(folder, dst)  # same file system as the staging folder: atomic
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(dst, ignore_errors=True)
            raise
        return tree_bytes(dst)

    def delete(self, job_id: str) -> None:
        shutil.rmtree(self.root / job_id, ignore_errors=True)

    def sizes(self, job_id: str) -> dict[str, int]:
        base = self.root / job_id
        if not base.is_dir():
            return {}
        return {p.relative_to(base).as_posix(): p.stat().st_size
                for p in base.rglob("*") if p.is_file() and not p.is_symlink()}

    def local_file(self, job_id: str, name: str) -> Path | None:
        base = (self.root / job_id).resolve()
        path = (base / name).resolve()
        if not path.is_relative_to(base) or not path.is_file():
            return None
        return path

    def open(self, job_id: str, name: str) -> StoredFile | None:
        path = self.local_file(job_id, name)
        if path is None:
            return None

        def chunks() -> Iterator[bytes]:
            with path.open("rb") as f:
                while chunk := f.read(CHUNK_BYTES):
                    yield chunk

        return StoredFile(path.stat().st_size, chunks())

    @contextlib.contextmanager
    def local_folder(self, job_id: str, scratch: Path) -> Iterator[Path]:
        yield self.root / job_id


class ObjectResultStore(ResultStore):
    """Results under ``s3://bucket/prefix/<job id>/`` of an S3-compatible object store (s3fs).

    Parameters
    ----------
    url
        ``s3://bucket`` or ``s3://bucket/prefix``.
    filesystem
        An fsspec file system to use instead of a new ``s3fs.S3FileSystem`` (tests).
    """

    def __init__(self, url: str, filesystem: Any = None) -> None:
        parsed = parse_result_store(url)
        if parsed is None:
            raise ValueError("an object store needs an s3://bucket/prefix URL")
        bucket, prefix = parsed
        self.url = f"s3://{bucket}/{prefix}".rstrip("/")
        self._root = f"{bucket}/{prefix}".rstrip("/")
        self._fs = filesystem

    def describe(self) -> str:
        return self.url

    @property
    def fs(self) -> Any:
        """The s3fs file system (made on first use; the AWS variables configure it)."""
        if self._fs is None:
            try:
                import s3fs
            except ImportError:
                raise ResultStoreError(f"the result store {self.url} needs s3fs: install backbone-planner[s3]") from None
            # no listings cache: another server or worker changes the bucket; bounded connect time and retries
            self._fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False,
                                         config_kwargs={"connect_timeout": S3_CONNECT_TIMEOUT_S,
                                                        "retries": {"max_attempts": 3}})
        return self._fs

    def _key(self, job_id: str, name: str = "") -> str:
        return f"{self._root}/{job_id}" + (f"/{name}" if name else "")

    def _failure(self, what: str, exc: BaseException) -> ResultStoreError:
        if isinstance(exc, ResultStoreError):
            return exc
        text = str(exc).splitlines()[0][:200] if str(exc) else ""
        reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        return ResultStoreError(f"the result store {self.url} {what} ({reason})",
                                public=f"the result store {what} ({type(exc).__name__})")

    def check(self) -> None:
        probe = self._key(f".write-probe-{uuid.uuid4().hex}")
        try:
            self.fs.pipe_file(probe, b"probe")
            self.fs.rm_file(probe)
        except Exception as exc:
            raise self._failure("cannot be written", exc) from None

    def store(self, job_id: str, folder: Path) -> int:
        files = [p for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()]
        total = sum(p.stat().st_size for p in files)
        try:
            self.delete(job_id)  # an earlier attempt's files (a job retried after its worker was lost)
            if files:
                self.fs.put([str(p) for p in files], [self._key(job_id, p.relative_to(folder).as_posix())
                                                      for p in files])
        except Exception as exc:
            with contextlib.suppress(Exception):
                self.delete(job_id)
            raise self._failure("refused the upload", exc) from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return total

    def delete(self, job_id: str) -> None:
        try:
            self.fs.rm(self._key(job_id), recursive=True)
        except FileNotFoundError:
            return
        except Exception as exc:
            raise self._failure("refused a delete", exc) from None

    def sizes(self, job_id: str) -> dict[str, int]:
        prefix = self._key(job_id) + "/"
        try:
            found = self.fs.find(self._key(job_id), detail=True)
        except FileNotFoundError:
            return {}
        except Exception as exc:
            raise self._failure("could not be listed", exc) from None
        return {key[len(prefix):]: int(info.get("size") or 0) for key, info in found.items()
                if key.startswith(prefix) and info.get("type", "file") == "file"}

    def local_file(self, job_id: str, name: str) -> Path | None:
        return None

    def open(self, job_id: str, name: str) -> StoredFile | None:
        key = self._key(job_id, name)
        try:
            info = self.fs.info(key)
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise self._failure("could not be read", exc) from None
        if info.get("type", "file") != "file":
            return None
        size = int(info.get("size") or 0)
        fs = self.fs

        def chunks() -> Iterator[bytes]:
            # no read-ahead cache: each read is one ranged GET of at most CHUNK_BYTES
            with fs.open(key, "rb", block_size=CHUNK_BYTES, cache_type="none") as f:
                while chunk := f.read(CHUNK_BYTES):
                    yield chunk

        return StoredFile(size, chunks())

    @contextlib.contextmanager
    def local_folder(self, job_id: str, scratch: Path) -> Iterator[Path]:
        scratch.mkdir(parents=True, exist_ok=True)
        copy = Path(tempfile.mkdtemp(prefix=f"result-{job_id[:8]}-", dir=scratch))
        try:
            for name in self.sizes(job_id):
                target = copy / name
                if not target.resolve().is_relative_to(copy.resolve()):
                    continue  # a key this service did not write (``..``): never outside the copy
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    self.fs.get_file(self._key(job_id, name), str(target))
                except Exception as exc:
                    raise self._failure("could not be read", exc) from None
            yield copy
        finally:
            shutil.rmtree(copy, ignore_errors=True)


def tree_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (a job's stored result)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def open_result_store(result_store: str, folder: Path) -> ResultStore:
    """The store ``BACKBONE_RESULT_STORE`` names: an object store for ``s3://...``, else the results ``folder``."""
    if parse_result_store(result_store) is not None:
        return ObjectResultStore(result_store)
    return FolderResultStore(folder)
