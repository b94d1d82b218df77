"""Small functions that capture and query code hand to Spark as task functions.

They live here, in the package shipped by value, so that executors never import the parts of the
agent that only the driver needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from capture_agent.record.storage.sources import text_unit


def identity_partition(iterator: Iterable[Any]) -> Iterable[Any]:
    return iterator


def pair_with_one(x: Any) -> tuple[Any, int]:
    return (x, 1)


def unit_values(unit: tuple[Any, ...]) -> list[Any]:
    """The values of one ``text_unit`` (lines of a text split fetched by offset)."""
    return [value for _, value in text_unit(*unit)]
