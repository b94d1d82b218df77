"""The lineage store's file system: a local folder or any file system a cluster shares.

``LINEAGE_STORE`` is a local path (relative paths are taken from the current folder), a
``file://`` URL, or a URL that ``pyarrow.fs`` resolves (``s3://bucket/prefix``, ``gs://...``,
``hdfs://namenode:8020/path``); options and credentials ride in the URL's query string and user
part, or come from the environment as pyarrow reads them (``AWS_ACCESS_KEY_ID``...). A
``StoreFS`` is picklable (pyarrow file systems pickle their options), so the tasks that write
tables, the driver, the trace worker and the server's retention all reach the same store.

Task-safe: imports only the standard library and pyarrow.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

DEFAULT_ROOT = os.path.join("var", "lineage")
_REMOTE_SCHEMES = ("s3://", "gs://", "gcs://", "hdfs://", "viewfs://", "abfs://", "abfss://")


def local_path(uri: str) -> str:
    """A Hadoop path string of a local file (``file:/x``, ``file:///x`` or ``/x``) as a local path;
    any other URL (``s3://...``) as it is."""
    if uri.startswith("file://"):
        return uri[len("file://"):]
    if uri.startswith("file:"):
        return uri[len("file:"):]
    return uri


def hadoop_path(uri: str) -> str:
    """A file as Spark lists it (``inputFiles()``, ``_metadata.file_path``: a URI, a space as %20)
    spelled as Hadoop's Path spells it (unescaped), which the agent keeps, stats and opens."""
    from urllib.parse import unquote

    return unquote(uri)


def file_key(uri: str) -> str:
    """One spelling of a file's name, however Hadoop or Spark wrote it (``file:/x``, ``file:///x``
    and ``/x`` are the same local file); compared, never opened."""
    if uri.startswith("file:") or "://" not in uri:
        return "file:" + os.path.normpath(local_path(uri))
    return uri


def file_exists(fs: Any, local: bool, path: str) -> bool:
    """Whether a path exists (``local``: through ``os``, without pyarrow's round trip)."""
    if local:
        return os.path.exists(path)
    from pyarrow.fs import FileType

    return bool(fs.get_file_info(path).type != FileType.NotFound)


def replace_file(fs: Any, local: bool, path: str, data: bytes) -> None:
    """Replaces a file's content atomically (a rename locally; one object write remotely)."""
    if local:
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return
    with fs.open_output_stream(path) as out:
        out.write(data)


@dataclass(frozen=True)
class StoreFS:
    """A pyarrow file system and the store root's path in it."""

    fs: Any  # pyarrow.fs.FileSystem
    root: str
    scheme: str = "file"  # "file" for the local file system, else the URL scheme ("s3", "gs", "hdfs")
    authority: str = ""  # bucket or name node of remote stores, for display

    @classmethod
    def resolve(cls, value: str | None = None) -> StoreFS:
        """The store named by a root setting (None or empty: ``var/lineage`` under the cwd).

        Raises:
            ValueError: the value names a scheme pyarrow cannot open, or pyarrow refuses it.
        """
        text = (value or "").strip() or DEFAULT_ROOT
        stripped = local_path(text)
        if "://" not in stripped:
            from pyarrow.fs import LocalFileSystem

            return cls(LocalFileSystem(), os.path.abspath(stripped))
        if not text.startswith(_REMOTE_SCHEMES):
            raise ValueError(f"{text!r}: not a local path nor a URL of s3, gs, hdfs or abfs")
        from pyarrow.fs import FileSystem

        fs, path = FileSystem.from_uri(text.replace("gcs://", "gs://", 1))
        scheme = text.split("://", 1)[0]
        return cls(fs, path.rstrip("/"), scheme, path.split("/", 1)[0] if scheme in ("s3", "gs") else "")

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    def join(self, *parts: str) -> str:
        return "/".join([parts[0].rstrip("/"), *(p.strip("/") for p in parts[1:])])

    def uri(self, path: str) -> str:
        """How a path of this store is shown and registered: a local path, or ``s3://bucket/key``."""
        return path if self.is_local else f"{self.scheme}://{path}"

    def path_of(self, location: str) -> str:
        """The inverse of ``uri``: a location as registered -> a path of this file system."""
        if self.is_local:
            return os.path.abspath(local_path(location))
        return location.split("://", 1)[1] if "://" in location else location

    # ------------------------------------------------------------------ files and folders
    def exists(self, path: str) -> bool:
        return file_exists(self.fs, self.is_local, path)

    def is_dir(self, path: str) -> bool:
        if self.is_local:
            return os.path.isdir(path)
        from pyarrow.fs import FileType

        return bool(self.fs.get_file_info(path).type == FileType.Directory)

    def size(self, path: str) -> int:
        """Bytes of a file; 0 when it does not exist."""
        if self.is_local:
            try:
                return os.path.getsize(path)
            except OSError:
                return 0
        info = self.fs.get_file_info(path)
        return int(info.size or 0)

    def list_files(self, folder: str) -> Iterator[tuple[str, int]]:
        """(name, size) of the files directly in a folder (none when it does not exist)."""
        if self.is_local:
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError):
                return
            for entry in entries:
                if entry.is_file():
                    yield entry.name, entry.stat().st_size
            return
        from pyarrow.fs import FileSelector, FileType

        for info in self.fs.get_file_info(FileSelector(folder, allow_not_found=True)):
            if info.type == FileType.File:
                yield info.base_name, int(info.size or 0)

    def make_dirs(self, path: str) -> None:
        if self.is_local:
            os.makedirs(path, exist_ok=True)
        else:
            self.fs.create_dir(path, recursive=True)

    def delete_dir(self, path: str) -> None:
        """Deletes a folder and everything in it (nothing when it does not exist)."""
        if self.is_dir(path):
            self.fs.delete_dir(path)

    def delete_file(self, path: str) -> None:
        if self.exists(path):
            self.fs.delete_file(path)

    def open_input(self, path: str) -> Any:
        """A seekable binary file."""
        if self.is_local:
            return open(path, "rb")  # the caller closes it
        return self.fs.open_input_file(path)

    def read_bytes(self, path: str) -> bytes:
        with self.open_input(path) as f:
            return bytes(f.read())

    def write_bytes(self, path: str, data: bytes) -> None:
        """Replaces a file's content atomically (a rename locally; one object write remotely)."""
        replace_file(self.fs, self.is_local, path, data)

    def describe(self) -> str:
        return self.uri(self.root)
