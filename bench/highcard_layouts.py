"""Bytes of candidate combiner and reducer layouts on the high-cardinality word count, without Spark.

``bench/record_highcard.py``'s word count (lines of 10 words drawn uniformly from 2**23 hex
words, read in Hadoop's splits: 32 MiB blocks, or half the file; ``reduceByKey`` into as many
partitions) is simulated in numpy: each map partition's combiner rows are its keys in first-seen
order (each key's first line position, then the rest, as ``first_rest_local`` writes them), and
each reducer receives every map partition's keys of its hash bucket in combiner-row order, one
map partition after another (a map output's segment for a reducer is one block), its rows in
first-seen order (``first_rest_global``). A key's reducer is a random bucket per word, as
``portable_hash`` of a str is for these purposes.

The tables of each candidate are written with our Parquet options (``storage.tables``) or the
encodings named, and their bytes summed:

  today        first_rest_local + first_rest_global (int64 global ids)
  hash order   the issue's idea: each combiner's rows ordered by (reducer, key hash), so a reducer
               in key-hash order keeps per map partition only a bitmap of its rows (the combiner id
               is the rank); the combiner's first positions are then in no order
  per-partition columns   the reducer's ``first`` as today and, for each map partition m, a
               nullable column of the combiner row of m (null where the key is not in m or m holds
               its first id); combiners as today
  ranks in blocks   combiner rows by reducer (first-seen within each block); the reducer's
               ``first`` as today, each later id as its rank in its (map, reduce) block, and a
               bit per map partition that holds one
  bit-packed   the ids in no order at their range's width, the rest of the table in Parquet
  one level    no combiner tables: a reducer row keeps its input lines directly (first, rest)
  floor        the ids in no order (combiners' later lines, reducers' later ids) at log2 of
               their range each, nothing else

    .venv/bin/python bench/highcard_layouts.py                  # 128 MB, 4 map and 4 reduce partitions
    .venv/bin/python bench/highcard_layouts.py --size-mb 16     # the docs' 16 MB case
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from capture_agent.record.storage.tables import group_bounds, parquet_options  # noqa: E402

LINE_BYTES = 70  # 10 words of 6 hex digits, 9 spaces and a newline
SPLIT = 32 << 20  # a local file's Hadoop split


def lists(offsets: np.ndarray, values: np.ndarray, kind: Any, required: bool = False) -> Any:
    """A ListArray; ``required``: its items never null (one definition level fewer in Parquet)."""
    list_type = pa.list_(pa.field("element", kind, nullable=False)) if required else None
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(values, kind), type=list_type)


def required(columns: dict[str, Any]) -> Any:
    """The columns as a table whose fields are all non-nullable (no definition levels)."""
    table = pa.table(columns)
    return table.cast(pa.schema([f.with_nullable(False) for f in table.schema]))


def write(folder: str, name: str, columns: Any, encodings: dict[str, str] | None = None,
          compression: dict[str, str] | None = None) -> int:
    """Writes one table (columns or a pyarrow Table) as ``tables.write_parquet`` does, with
    encodings overridden; its bytes."""
    table = columns if isinstance(columns, pa.Table) else pa.table(columns)
    options = parquet_options(table.schema)
    size = options.pop("row_group_size")
    options["column_encoding"] = {**options["column_encoding"], **(encodings or {})}
    options["compression"] = {**options["compression"], **(compression or {})}
    path = os.path.join(folder, name)
    with pq.ParquetWriter(path, table.schema, **options) as writer:
        for start, stop in group_bounds(table, size):
            writer.write_table(table.slice(start, stop - start), row_group_size=size)
    return os.path.getsize(path)


class Combiner:
    """One map partition's combine: its keys in first-seen order and their line positions."""

    def __init__(self, words: np.ndarray, reducer_of: np.ndarray) -> None:
        positions = np.arange(len(words), dtype=np.uint32) // 10
        keys, first_token, inverse = np.unique(words, return_index=True, return_inverse=True)
        order = np.argsort(first_token, kind="stable")  # slot -> index in keys
        slot_of_key = np.empty(len(keys), np.int64)
        slot_of_key[order] = np.arange(len(keys))
        slots = slot_of_key[inverse]
        by_slot = np.argsort(slots, kind="stable")
        self.keys = keys[order]  # the word of each combiner row
        self.reducer = reducer_of[self.keys]
        counts = np.bincount(slots, minlength=len(keys))
        starts = np.concatenate(([0], np.cumsum(counts)))
        grouped = positions[by_slot]
        self.first = grouped[starts[:-1]]
        self.rest_counts = counts - 1
        is_first = np.zeros(len(grouped), bool)
        is_first[starts[:-1]] = True
        self.rest = grouped[~is_first]

    def table(self, order: np.ndarray | None = None) -> dict[str, Any]:
        """first_rest_local's columns, rows in ``order`` (None: first-seen)."""
        first, counts, rest = self.first, self.rest_counts, self.rest
        if order is not None:
            rest = _take_lists(np.concatenate(([0], np.cumsum(counts))), rest, order)
            first, counts = first[order], counts[order]
        n = len(first)
        return {"out_id": pa.array(np.arange(n, dtype=np.int64)), "first": pa.array(first, pa.uint32()),
                "rest": lists(np.concatenate(([0], np.cumsum(counts))), rest, pa.uint32())}

    def block_order(self) -> np.ndarray:
        """Rows by reducer, first-seen order within each (the reducer's blocks laid end to end)."""
        return np.argsort(self.reducer, kind="stable")


def _take_lists(starts: np.ndarray, values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The lists (``starts`` offsets into ``values``) in ``order``, laid end to end."""
    lengths = (starts[1:] - starts[:-1])[order]
    begin = np.repeat(starts[:-1][order], lengths)
    within = np.arange(lengths.sum()) - np.repeat(np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return values[begin + within]


def reducer_rows(combiners: list[Combiner], r: int) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Reducer ``r``'s words in first-seen order, and per map partition (row of that word, combiner row)."""
    arrivals = [(m, np.flatnonzero(c.reducer == r)) for m, c in enumerate(combiners)]
    words = np.concatenate([combiners[m].keys[rows] for m, rows in arrivals])
    uniq, first_at, inverse = np.unique(words, return_index=True, return_inverse=True)
    order = np.argsort(first_at, kind="stable")
    row_of_uniq = np.empty(len(uniq), np.int64)
    row_of_uniq[order] = np.arange(len(uniq))
    row_of_arrival = row_of_uniq[inverse]
    per_map = []
    start = 0
    for _, rows in arrivals:
        per_map.append((row_of_arrival[start:start + len(rows)], rows))
        start += len(rows)
    return uniq[order], per_map


def today_reducer(nrows: int, per_map: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """first_rest_global: each row's combiner ids in arrival order (map partition by map partition)."""
    rows = np.concatenate([red for red, _ in per_map])
    ids = np.concatenate([(np.int64(m) << 32) | comb.astype(np.int64) for m, (_, comb) in enumerate(per_map)])
    order = np.argsort(rows, kind="stable")  # a row's ids in arrival order
    rows, ids = rows[order], ids[order]
    counts = np.bincount(rows, minlength=nrows)
    starts = np.concatenate(([0], np.cumsum(counts)))
    is_first = np.zeros(len(ids), bool)
    is_first[starts[:-1]] = True
    return {"out_id": pa.array(np.arange(nrows, dtype=np.int64)), "first": pa.array(ids[starts[:-1]]),
            "rest": lists(np.concatenate(([0], np.cumsum(counts - 1))), ids[~is_first], pa.int64())}


def part_columns(nrows: int, per_map: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """``first`` (global id) and per map partition m the combiner row of m where m is a later one."""
    first = np.full(nrows, -1, np.int64)
    columns: dict[str, Any] = {"out_id": pa.array(np.arange(nrows, dtype=np.int64))}
    for m, (red, comb) in enumerate(per_map):
        new = first[red] < 0
        first[red[new]] = (np.int64(m) << 32) | comb[new].astype(np.int64)
        later = np.zeros(nrows, np.int64)
        mask = np.ones(nrows, bool)
        later[red[~new]] = comb[~new]
        mask[red[~new]] = False
        columns[f"later_{m}"] = pa.array(later.astype(np.uint32), pa.uint32(), mask=mask)
    columns["first"] = pa.array(first)
    return columns


def later_lists(nrows: int, per_map: list[tuple[np.ndarray, np.ndarray]], starts: list[int],
                ) -> tuple[Any, float, int]:
    """Combiners in reducer blocks (``Combiner.block_order``): ``first`` (global id), ``later``
    (each later map partition's combiner row as its rank in its block, map partition by map
    partition) and ``later_from`` (a bit per map partition in ``later``); non-nullable fields.
    And the bits of the later ranks at log2 of their block's size each, and bit-packed at that
    width rounded up."""
    bits = 0.0
    packed = 0
    first = np.full(nrows, -1, np.int64)
    mask = np.zeros(nrows, np.uint8)
    rows, ranks = [], []
    for m, (red, _) in enumerate(per_map):
        rank = np.arange(len(red), dtype=np.int64)
        new = first[red] < 0
        first[red[new]] = (np.int64(m) << 32) | (starts[m] + rank[new])
        bits += (~new).sum() * np.log2(max(len(red), 2))
        packed += (~new).sum() * width(len(red))
        rows.append(red[~new])
        ranks.append(rank[~new])
        mask[red[~new]] |= np.uint8(1 << m)
    row = np.concatenate(rows)
    order = np.argsort(row, kind="stable")  # a row's later ids map partition by map partition
    counts = np.bincount(row, minlength=nrows)
    return required({"out_id": pa.array(np.arange(nrows, dtype=np.int64)), "first": pa.array(first),
                     "later": lists(np.concatenate(([0], np.cumsum(counts))), np.concatenate(ranks)[order],
                                    pa.uint32(), True),
                     "later_from": pa.array(mask, pa.uint8())}), bits, packed


def one_level(combiners: list[Combiner], r: int, nrows: int, per_map: list[tuple[np.ndarray, np.ndarray]],
              ) -> tuple[Any, int]:
    """No combiner table: each reducer row's input lines directly: ``first`` (the global id of its
    first line, map partition by map partition) and ``rest`` (the others' lines) with ``rest_from``
    (their map partitions); and the rest's lines bit-packed at log2(lines) rounded up."""
    rows, parts, lines = [], [], []
    for m, (red, comb) in enumerate(per_map):
        c = combiners[m]
        starts = np.concatenate(([0], np.cumsum(c.rest_counts)))
        rows += [red, np.repeat(red, c.rest_counts[comb])]
        lines += [c.first[comb], _take_lists(starts, c.rest, comb)]
        parts += [np.full(len(red) + int(c.rest_counts[comb].sum()), m, np.uint8)]
    row, part, line = np.concatenate(rows), np.concatenate(parts), np.concatenate(lines)
    order = np.lexsort((line, part, row))
    row, part, line = row[order], part[order], line[order]
    counts = np.bincount(row, minlength=nrows)
    starts = np.concatenate(([0], np.cumsum(counts)))
    is_first = np.zeros(len(row), bool)
    is_first[starts[:-1]] = True
    first = (part[is_first].astype(np.int64) << 32) | line[is_first].astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts - 1)))
    table = required({"out_id": pa.array(np.arange(nrows, dtype=np.int64)), "first": pa.array(first),
                      "rest": lists(offsets, line[~is_first], pa.uint32(), True),
                      "rest_from": lists(offsets, part[~is_first], pa.uint8(), True)})
    packed = int((~is_first).sum()) * width(max(int(c.first.max()) + 1 for c in combiners))
    return table, packed


def width(n: int) -> int:
    """Bits of a number below ``n``."""
    return max(1, int(n - 1).bit_length())


def hash_order(combiners: list[Combiner], rng: np.random.Generator, nwords: int, folder: str,
               reducers: int) -> tuple[int, int, int]:
    """The issue's idea: combiner rows by (reducer, key hash); per reducer, per map partition, a
    bitmap over its rows (in key-hash order) as Parquet booleans and as Roaring bitmaps."""
    from pyroaring import BitMap

    key_hash = rng.permutation(nwords)  # a deterministic hash of each word, no ties
    combiner_bytes = 0
    for m, c in enumerate(combiners):
        order = np.lexsort((key_hash[c.keys], c.reducer))
        combiner_bytes += write(folder, f"hash-comb-{m}", c.table(order))
    booleans = roaring = 0
    for r in range(reducers):
        words = np.unique(np.concatenate([c.keys[c.reducer == r] for c in combiners]))
        words = words[np.argsort(key_hash[words])]
        columns: dict[str, Any] = {"out_id": pa.array(np.arange(len(words), dtype=np.int64))}
        for m, c in enumerate(combiners):
            has = np.isin(words, c.keys[c.reducer == r])
            columns[f"from_{m}"] = pa.array(has)
            bm = BitMap(np.flatnonzero(has).astype(np.uint32))
            bm.run_optimize()
            roaring += len(bm.serialize())
        booleans += write(folder, f"hash-red-{r}", columns)
    return combiner_bytes, booleans, roaring


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=128.0)
    parser.add_argument("--words", type=int, default=1 << 23)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    chunks = -(-int(args.size_mb * 1_000_000) // (20000 * LINE_BYTES))  # the bench writes 20,000 lines a chunk
    nlines = chunks * 20000
    input_bytes = nlines * LINE_BYTES
    split = min(SPLIT, -(-input_bytes // 2))  # Hadoop's split: the block, or the size over textFile's 2 partitions
    nmaps = 1
    while (input_bytes - (nmaps - 1) * split) / split > 1.1:  # FileInputFormat's SPLIT_SLOP
        nmaps += 1
    reducers = nmaps
    reducer_of = rng.integers(0, reducers, size=args.words).astype(np.int8)
    tokens = rng.integers(0, args.words, size=nlines * 10)
    bounds = [min(nlines, -(-(m * split) // LINE_BYTES)) for m in range(nmaps)] + [nlines]
    combiners = [Combiner(tokens[bounds[m] * 10:bounds[m + 1] * 10], reducer_of) for m in range(nmaps)]
    del tokens
    print(f"input {input_bytes / 1e6:.1f} MB, {nlines} lines, {nmaps} map and {reducers} reduce partitions; "
          f"combiner rows {sum(len(c.first) for c in combiners)}")
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        sizes["combiners (first_rest_local)"] = sum(write(folder, f"comb-{m}", c.table())
                                                    for m, c in enumerate(combiners))
        sizes["combiners, rest byte_stream_split+zstd"] = sum(
            write(folder, f"comb-bss-{m}", c.table(), {"rest.list.element": "BYTE_STREAM_SPLIT"}, {"rest": "ZSTD"})
            for m, c in enumerate(combiners))
        today = part = part_bss = 0
        rows = later = 0
        for r in range(reducers):
            words, per_map = reducer_rows(combiners, r)
            rows += len(words)
            later += sum(len(red) for red, _ in per_map) - len(words)
            today += write(folder, f"red-{r}", today_reducer(len(words), per_map))
            columns = part_columns(len(words), per_map)
            part += write(folder, f"part-{r}", columns)
            bss = {f"later_{m}": "BYTE_STREAM_SPLIT" for m in range(nmaps)}
            part_bss += write(folder, f"part-bss-{r}", columns, bss, {f"later_{m}": "ZSTD" for m in range(nmaps)})
        sizes["reducers (first_rest_global)"] = today
        block_starts = [np.concatenate(([0], np.cumsum(np.bincount(c.reducer, minlength=reducers))))
                        for c in combiners]
        sizes["combiners in reducer blocks"] = sum(write(folder, f"comb-blocks-{m}", c.table(c.block_order()))
                                                   for m, c in enumerate(combiners))
        blocks = blocks_bss = 0
        floor = sum(len(c.rest) * np.log2(c.first.max() + 1) for c in combiners)
        # the ids in no order bit-packed at their range's width (outside Parquet's encodings), the
        # rest of each table (first ids, how many later ones, from which map partition) in Parquet
        packed_combiners = sum(len(c.rest) * width(int(c.first.max()) + 1) // 8 + write(
            folder, f"comb-packed-{m}", required({"out_id": pa.array(np.arange(len(c.first), dtype=np.int64)),
                                                  "first": pa.array(c.first, pa.uint32()),
                                                  "rest_count": pa.array(c.rest_counts.astype(np.uint32))}))
            for m, c in enumerate(combiners))
        packed_reducers = direct = direct_packed = 0
        for r in range(reducers):
            words, per_map = reducer_rows(combiners, r)
            table, bits, packed = later_lists(len(words), per_map, [int(b[r]) for b in block_starts])
            floor += bits
            packed_reducers += packed // 8 + write(folder, f"packed-{r}", table.drop_columns(["later"]))
            blocks += write(folder, f"blocks-{r}", table)
            blocks_bss += write(folder, f"blocks-bss-{r}", table, {"later.list.element": "BYTE_STREAM_SPLIT"},
                                {"later": "ZSTD"})
            direct_table, packed = one_level(combiners, r, len(words), per_map)
            direct += write(folder, f"direct-{r}", direct_table)
            direct_packed += packed // 8 + write(folder, f"direct-packed-{r}", direct_table.drop_columns(["rest"]))
        sizes["reducers, later ranks in blocks + mask"] = blocks
        sizes["reducers, later ranks in blocks bss+zstd + mask"] = blocks_bss
        sizes["floor: the random ids' bits alone (log2 of their range)"] = int(floor / 8)
        sizes["combiners, rest bit-packed"] = packed_combiners
        sizes["reducers, later ranks in blocks bit-packed + mask"] = packed_reducers
        sizes["one level: reducers to input lines, no combiner tables"] = direct
        sizes["one level, the rest's lines bit-packed"] = direct_packed
        sizes["reducers, per-partition columns"] = part
        sizes["reducers, per-partition columns, byte_stream_split+zstd"] = part_bss
        comb, booleans, roaring = hash_order(combiners, rng, args.words, folder, reducers)
        sizes["hash order: combiners"] = comb
        sizes["hash order: reducers, boolean columns"] = booleans
        sizes["hash order: reducers, Roaring bitmaps"] = roaring
        # in key-hash order a combiner row's first position is in no order either: log2(lines) bits
        sizes["hash order floor: combiners' positions alone"] = int(sum(
            (len(c.first) + len(c.rest)) * np.log2(c.first.max() + 1) for c in combiners) / 8)
    print(f"reducer rows {rows}, later ids {later}")
    for name, size in sizes.items():
        print(f"{name:60s} {size / 1e6:7.1f} MB {100 * size / input_bytes:5.1f}%")


if __name__ == "__main__":
    main()
