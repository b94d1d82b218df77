"""Django's PostgreSQL backend, sending lists as arrays without psycopg's escaping by regular expression.

Django 5.2's ``bulk_create`` on PostgreSQL sends each column as one array (``INSERT ... SELECT * FROM
UNNEST(%s::jsonb[], ...)``). psycopg writes an array's elements in the array text format, escaping
each quote and backslash of an element through ``re.sub`` with a replacement template, a call back
into Python per character escaped. A round of OpenLineage events sends its facets, schemas and
column lineage as ``jsonb[]``, full of quotes: that escaping was a quarter of a round's CPU. Here a flat
list's elements are all quoted and escaped with ``bytes.replace`` (the same array, written faster).
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base
from psycopg.abc import Buffer
from psycopg.types.array import ListDumper


class DatabaseWrapper(base.DatabaseWrapper):
    """PostgreSQL, with lists dumped by ``QuotedListDumper``."""

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        connection.adapters.register_dumper(list, QuotedListDumper)
        return connection


class QuotedListDumper(ListDumper):
    """A list as an array in the text format; a flat one with every element quoted (quoting is never wrong:
    a quoted NULL or empty string is that string), nested ones as psycopg writes them."""

    def dump(self, obj: list[Any]) -> Buffer | None:
        if self.sub_dumper is None or any(isinstance(item, list) for item in obj):
            return super().dump(obj)
        dump = self.sub_dumper.dump
        elements = []
        for item in obj:
            data = None if item is None else dump(item)
            if data is None:
                elements.append(b"NULL")
            else:
                elements.append(b'"' + bytes(data).replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"')
        return b"{" + self.delimiter.join(elements) + b"}"
