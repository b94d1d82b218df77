"""The Django secret key of a one-machine install, kept in the var folder when SECRET_KEY is unset.

Settings only read the file; ``manage.py ensure_local_setup`` (run by `make run` before the web
server and the worker start) writes it, so every process of the install signs with one key.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "secret_key"


def new_secret_key() -> str:
    return secrets.token_urlsafe(50)


def read_secret_key(var_dir: Path) -> str:
    """The key kept in ``var_dir``; without one, a temporary key for this process alone (logged).

    A temporary key is safe but not shared: sessions and signed links made by one process are
    refused by another, and by this one after a restart.
    """
    key_file = var_dir / FILE_NAME
    try:
        key = key_file.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    log.warning(
        "SECRET_KEY is not set and %s does not exist: this process uses a temporary key. Set SECRET_KEY, "
        "or run `manage.py ensure_local_setup --var %s` once to keep one there.",
        key_file,
        var_dir,
    )
    return new_secret_key()


def write_secret_key(var_dir: Path) -> Path:
    """Keep a new key in ``var_dir`` unless one is there already; returns the file.

    Two first runs at once keep one key: the file appears whole, and only the first link wins.
    """
    key_file = var_dir / FILE_NAME
    if key_file.exists():
        return key_file
    var_dir.mkdir(parents=True, exist_ok=True)
    partial = var_dir / f".{FILE_NAME}.{os.getpid()}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(new_secret_key())
    try:
        os.link(partial, key_file)
    except FileExistsError:
        pass
    finally:
        partial.unlink(missing_ok=True)
    return key_file
