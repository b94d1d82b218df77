"""The embedded Celery broker: kombu's filesystem transport with atomic message files.

Kombu writes a message file in place, so a worker listing the folder can take a file that is
created but still empty, fail to decode it and stop. Writing under a hidden temporary name and
renaming it into place makes every message appear whole. The channel creates its folders when it
opens (settings only name them), whichever process opens one first: web server or worker.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class AtomicFilesystemChannel(filesystem.Channel):
    """A filesystem channel whose messages are renamed into the queue folder once written."""

    def __init__(self, connection: Any, **kwargs: Any) -> None:
        super().__init__(connection, **kwargs)
        folders = [self.data_folder_in, self.data_folder_out, self.control_folder]
        if self.store_processed:
            folders.append(self.processed_folder)
        for folder in folders:
            Path(folder).mkdir(parents=True, exist_ok=True)

    # celery-types names this argument `message` in kombu's base channel and `payload` in the
    # filesystem channel (as kombu does); no signature matches both.
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        # A leading dot keeps the partial file from matching "<anything>.<queue>.msg".
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class AtomicFilesystemTransport(filesystem.Transport):
    """``filesystem://`` with atomic message files."""

    Channel = AtomicFilesystemChannel


def register() -> None:
    """Make ``filesystem://`` broker URLs use the atomic transport."""
    TRANSPORT_ALIASES["filesystem"] = f"{__name__}:AtomicFilesystemTransport"
