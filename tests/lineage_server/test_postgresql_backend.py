"""Our PostgreSQL backend sends lists as arrays its own way: PostgreSQL reads back exactly the elements sent."""

from __future__ import annotations

import json

import pytest
from django.db import connection

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the backend changes PostgreSQL's arrays only"),
]

AWKWARD = ["plain", "", "NULL", "null", 'a "quoted" \\back\\slashed', "{braces}, commas", " spaced \t", "\u3000é",
           "\\\"", None]


def test_text_elements_come_back_as_sent() -> None:
    """Quotes, backslashes, braces, commas, blanks, the word NULL and a real NULL survive the array."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT element FROM unnest(%s::text[]) WITH ORDINALITY AS a(element, n) ORDER BY n", [AWKWARD])
        assert [row[0] for row in cursor.fetchall()] == AWKWARD


def test_json_and_number_elements_come_back_as_sent() -> None:
    """JSON documents (bulk_create's jsonb[] columns) and integers, the types a round sends most."""
    documents = [{"facet": {"name": 'x "y" \\ z', "fields": [1, None, "NULL"]}}, [], {}, "text"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT e::text FROM unnest(%s::jsonb[]) WITH ORDINALITY AS a(e, n) ORDER BY n",
                       [[json.dumps(document) for document in documents]])
        assert [json.loads(row[0]) for row in cursor.fetchall()] == documents
        cursor.execute("SELECT unnest(%s::bigint[])", [[3, -1, 2**40]])
        assert [row[0] for row in cursor.fetchall()] == [3, -1, 2**40]


def test_nested_and_empty_lists_are_still_arrays() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text[][], %s::text[]", [[["a", 'b"'], ["c", None]], []])
        assert cursor.fetchone() == ([["a", 'b"'], ["c", None]], [])
