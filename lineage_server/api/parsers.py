"""Request body parsers beyond DRF's: JSON sent gzip-compressed, as OpenLineage's HTTP transport can."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import JSONParser


class GzipJSONParser(JSONParser):
    """JSON, plain or with ``Content-Encoding: gzip`` (the OpenLineage client's ``compression: gzip``).

    The uncompressed body is held to ``LINEAGE_INGEST_MAX_BYTES`` too, so a small compressed body
    cannot unpack into a huge one.
    """

    def parse(self, stream: Any, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        request = (parser_context or {}).get("request")
        encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower() if request is not None else ""
        if encoding in ("", "identity"):
            return super().parse(stream, media_type, parser_context)
        if encoding != "gzip":
            raise exceptions.UnsupportedMediaType(f"Content-Encoding {encoding!r}: send plain or gzip JSON.")
        limit = settings.LINEAGE["INGEST_MAX_BYTES"]
        try:
            body = gzip.GzipFile(fileobj=stream).read(limit + 1)
        except (OSError, EOFError, zlib.error) as error:
            raise exceptions.ParseError(f"The gzip body cannot be read: {error}") from error
        if len(body) > limit:
            raise exceptions.ParseError(f"The body unpacks to more than {limit} bytes (LINEAGE_INGEST_MAX_BYTES).")
        return super().parse(io.BytesIO(body), media_type, parser_context)
