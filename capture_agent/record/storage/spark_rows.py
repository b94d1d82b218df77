"""A DataFrame source's records as the rows its frame read: values typed by the frame's schema.

A ``file_lines`` source (CSV, JSON Lines) keeps the frame's schema (Spark's StructType as JSON)
and a ``file_rows`` source (Parquet, ORC) too; a traced line or row is turned here into the
pyspark ``Row`` Spark's reader made of it, so traces, downloads and predicates see fields by the
frame's names with the frame's types (an int column an int, a date a ``datetime.date``, a nested
JSON object a Row). Lines are parsed as Spark's readers parse them with their default options
(PERMISSIVE: a value that does not fit its column is null, the rest of the row kept, and the
corrupt-record column, when the schema has one, holds the line); timestamps are Python's local
time, as PySpark's ``collect`` gives them.

Task-safe: parsers travel by value into the tasks that read many lines.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
import struct
from typing import Any

CORRUPT = "_corrupt_record"  # spark.sql.columnNameOfCorruptRecord's default
_INT_RANGES = {"byte": 8, "short": 16, "integer": 32, "long": 64}
_INTEGER = re.compile(r"[+-]?\d+")
_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})([ T].*)?")
_SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "+Infinity": float("inf"), "-Infinity": float("-inf"),
            "INF": float("inf"), "+INF": float("inf"), "-INF": float("-inf")}


class Unfit(ValueError):
    """A value that does not fit its column's type (Spark's reader makes it null)."""


def schema_fields(schema: str) -> list[str]:
    """The top-level column names of a StructType's JSON."""
    return [f["name"] for f in json.loads(schema)["fields"]] if schema else []


def _row(names: list[str], values: list[Any]) -> Any:
    from pyspark.sql.types import _create_row

    return _create_row(names, values)


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _local(moment: datetime.datetime) -> datetime.datetime:
    """A moment (time-zone aware) as the naive local time PySpark's rows give."""
    seconds = (moment - _EPOCH) // datetime.timedelta(seconds=1)
    return datetime.datetime.fromtimestamp(seconds).replace(microsecond=moment.microsecond)


class _Int(int):
    """A JSON integer that keeps its text (a string column of Spark's gets the text as written)."""

    text = ""


class _Float(float):
    """A JSON number with a fraction or exponent that keeps its text."""

    text = ""


def _int(text: str) -> _Int:
    number = _Int(text)
    number.text = text
    return number


def _float(text: str) -> _Float:
    number = _Float(text)
    number.text = text
    return number


def _json_text(value: Any) -> str:
    """A parsed JSON value written back as JSON, numbers as they were written."""
    if isinstance(value, (_Int, _Float)):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _date(text: str) -> datetime.date:
    found = _DATE.fullmatch(text.strip())
    if found is None:
        raise Unfit(text)
    try:
        return datetime.date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError:
        raise Unfit(text) from None


def _timestamp(text: str, ntz: bool) -> datetime.datetime:
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise Unfit(text) from None
    if ntz:
        return moment.replace(tzinfo=None)
    return _local(moment) if moment.tzinfo is not None else moment  # naive: the session's (local) zone


def _decimal(value: Any, kind: str) -> decimal.Decimal:
    precision, scale = (int(x) for x in kind[len("decimal("):-1].split(","))
    try:
        number = decimal.Decimal(str(value))
        exact = number.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP)
    except (decimal.InvalidOperation, ValueError):
        raise Unfit(value) from None
    if len(exact.as_tuple().digits) > precision or not exact.is_finite():
        raise Unfit(value)
    return exact


def _integer(value: int, kind: str) -> int:
    bits = _INT_RANGES[kind]
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise Unfit(value)
    return value


# ---------------------------------------------------------------- JSON values (Spark's JacksonParser)
def json_value(value: Any, kind: Any) -> Any:
    """A parsed JSON value as Spark's JSON reader makes it a value of ``kind`` (a type's JSON).

    Raises:
        Unfit: the value does not fit the type.
    """
    if value is None:
        return None
    if isinstance(kind, dict):
        return _json_nested(value, kind)
    if kind == "string":
        return value if isinstance(value, str) else _json_text(value)
    if kind in _INT_RANGES:
        if isinstance(value, int) and not isinstance(value, bool):
            return _integer(int(value), kind)
        raise Unfit(value)
    if kind in ("double", "float"):
        if isinstance(value, str) and value in _SPECIAL:
            number = _SPECIAL[value]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        else:
            raise Unfit(value)
        return _float32(number) if kind == "float" else number
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        raise Unfit(value)
    if kind.startswith("decimal("):
        if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
            return _decimal(getattr(value, "text", value), kind)
        raise Unfit(value)
    if isinstance(value, str):
        if kind == "date":
            return _date(value)
        if kind in ("timestamp", "timestamp_ntz"):
            return _timestamp(value, kind == "timestamp_ntz")
        if kind == "binary":
            return base64.b64decode(value)
    raise Unfit(value)


def _json_nested(value: Any, kind: dict[str, Any]) -> Any:
    if kind["type"] == "struct":
        if not isinstance(value, dict):
            raise Unfit(value)
        return json_struct(value, kind["fields"])[0]
    if kind["type"] == "array":
        if not isinstance(value, list):
            raise Unfit(value)
        return [json_value(v, kind["elementType"]) for v in value]
    if kind["type"] == "map":
        if not isinstance(value, dict):
            raise Unfit(value)
        return {k: json_value(v, kind["valueType"]) for k, v in value.items()}
    raise Unfit(value)


def json_struct(value: dict[str, Any], fields: list[dict[str, Any]]) -> tuple[Any, bool]:
    """(the Row of an object's fields, whether a value did not fit and was made null)."""
    names = [f["name"] for f in fields]
    values: list[Any] = []
    unfit = False
    for f in fields:
        try:
            values.append(json_value(value.get(f["name"]), f["type"]))
        except Unfit:
            values.append(None)
            unfit = True
    return _row(names, values), unfit


class JsonRows:
    """A JSON line -> the Row Spark's JSON reader makes of it (a list of Rows for a line holding
    an array of objects, which Spark makes one row each)."""

    def __init__(self, schema: str) -> None:
        self.fields = json.loads(schema)["fields"]
        self.names = [f["name"] for f in self.fields]

    def _bad(self, line: str, partial: Any = None) -> Any:
        values = list(partial) if partial is not None else [None] * len(self.names)
        if CORRUPT in self.names:
            values[self.names.index(CORRUPT)] = line
        return _row(self.names, values)

    def _object(self, value: Any, line: str) -> Any:
        if not isinstance(value, dict):
            return self._bad(line)
        row, unfit = json_struct({k: v for k, v in value.items() if k != CORRUPT}, self.fields)
        return self._bad(line, row) if unfit else row

    def __call__(self, line: str) -> Any:
        try:
            value = json.loads(line, parse_int=_int, parse_float=_float)
        except ValueError:
            return self._bad(line)
        if isinstance(value, list):
            return [self._object(v, line) for v in value]
        return self._object(value, line)


# ---------------------------------------------------------------- CSV values (Spark's UnivocityParser)
def csv_value(text: str, kind: Any) -> Any:
    """One CSV field as Spark's CSV reader makes it a value of ``kind`` (default options).

    Raises:
        Unfit: the text does not fit the type.
    """
    if kind == "string":
        return text
    if kind in _INT_RANGES:
        if _INTEGER.fullmatch(text) is None:
            raise Unfit(text)
        return _integer(int(text), kind)
    if kind in ("double", "float"):
        special = {"NaN": float("nan"), "Inf": float("inf"), "-Inf": float("-inf")}.get(text)
        if special is None:
            if _DOUBLE.fullmatch(text.strip()) is None:
                raise Unfit(text)
            special = float(text.strip().rstrip("fFdD"))
        return _float32(special) if kind == "float" else special
    if kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise Unfit(text)
        return text.lower() == "true"
    if isinstance(kind, str) and kind.startswith("decimal("):
        return _decimal(text.replace(",", ""), kind)
    if kind == "date":
        return _date(text)
    if kind in ("timestamp", "timestamp_ntz"):
        return _timestamp(text, kind == "timestamp_ntz")
    raise Unfit(text)


class CsvRows:
    """A CSV line -> the Row Spark's CSV reader makes of it with these options."""

    def __init__(self, schema: str, sep: str, quote: str) -> None:
        self.fields = json.loads(schema)["fields"]
        self.names = [f["name"] for f in self.fields]
        self.sep, self.quote = sep, quote

    def __call__(self, line: str) -> Any:
        import csv

        tokens = next(csv.reader([line], delimiter=self.sep, quotechar=self.quote, escapechar="\\"), [])
        data = [f for f in self.fields if f["name"] != CORRUPT]
        bad = len(tokens) != len(data)
        converted = {}
        for f, token in zip(data, tokens, strict=False):
            try:
                converted[f["name"]] = None if token == "" else csv_value(token, f["type"])
            except Unfit:
                converted[f["name"]], bad = None, True
        if bad and CORRUPT in self.names:
            converted[CORRUPT] = line
        return _row(self.names, [converted.get(n) for n in self.names])


# ---------------------------------------------------------------- Parquet and ORC rows (read by pyarrow)
def arrow_value(value: Any, kind: Any) -> Any:
    """A value pyarrow read as the value Spark's reader gives for ``kind``."""
    if value is None:
        return None
    if isinstance(kind, dict):
        if kind["type"] == "struct":
            return spark_row(value, kind["fields"])
        if kind["type"] == "array":
            return [arrow_value(v, kind["elementType"]) for v in value]
        if kind["type"] == "map":
            pairs = value.items() if isinstance(value, dict) else value
            return {arrow_value(k, kind["keyType"]): arrow_value(v, kind["valueType"]) for k, v in pairs}
        return value
    if kind == "binary" and isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if kind == "timestamp" and isinstance(value, datetime.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
        return _local(aware)
    if kind == "timestamp_ntz" and isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    return value


def spark_row(value: Any, fields: list[dict[str, Any]]) -> Any:
    """A row or dict pyarrow read (names as in the file) as the Row of ``fields`` Spark gives:
    its columns in the schema's order, matched by name (case-insensitively when not exactly),
    absent ones null."""
    given = value.asDict() if hasattr(value, "asDict") else dict(value)
    folded = {k.lower(): v for k, v in given.items()}
    names = [f["name"] for f in fields]
    values = [arrow_value(given[f["name"]] if f["name"] in given else folded.get(f["name"].lower()), f["type"])
              for f in fields]
    return _row(names, values)


# Spark types whose values pyarrow reads as Spark's reader gives them (arrow_value returns them as they are)
AS_READ = frozenset({"string", "boolean", "byte", "short", "integer", "long", "float", "double", "date"})


def typed_rows(rows: list[Any], schema: str) -> list[Any]:
    """Rows pyarrow read (pyspark Rows of one file's columns), typed by a frame's schema as
    ``spark_row`` types each; unchanged without one. Where each field's value is in the rows is
    found once, from the first row's columns, for every row with those columns."""
    if not schema or not rows:
        return rows
    fields = json.loads(schema)["fields"]
    names = [f["name"] for f in fields]
    columns = list(rows[0].__fields__)
    exact = {name: i for i, name in enumerate(columns)}
    folded = {name.lower(): i for i, name in enumerate(columns)}  # the last of a name, as spark_row's dict
    places = [exact[n] if n in exact else folded.get(n.lower()) for n in names]
    kinds = [None if isinstance(f["type"], str) and (f["type"] in AS_READ or f["type"].startswith("decimal"))
             else f["type"] for f in fields]
    if len(set(columns)) != len(columns):  # a name twice: spark_row's dict keeps its last
        return [spark_row(row, fields) for row in rows]
    out = []
    for row in rows:
        if row.__fields__ != columns:
            out.append(spark_row(row, fields))
            continue
        values = tuple(row)
        out.append(_row(names, [None if at is None else values[at] if kind is None else arrow_value(values[at], kind)
                                for at, kind in zip(places, kinds, strict=True)]))
    return out
