"""Where an index generation keeps its tables, and how rows are bucketed, for writer and reader alike.

One folder per generation::

    meta.json                 counts, threshold, splits, buckets, the batches it holds, timings
    items/bucket=K/*.parquet  item, item_id, dataset, ccid, csid      (K = crc32(item) mod buckets)
    triples/bucket=K/*.parquet src, dst, op, src_id, dst_id, ccid, src_csid, dst_csid
                                                                    (K = dst_csid mod buckets, sorted by it)
    set_deps/*.parquet        src_csid, dst_csid
    sets/*.parquet            csid, ccid, split, items

The triples are bucketed and sorted by the set of their derived item (the paper's provRDD
hash-partitioned on dst_csid), in small row groups: the triples of one set are one file's few row
groups. An item is found in one file of ``items``.
"""

from __future__ import annotations

import zlib

META = "meta.json"
ITEMS = "items"
TRIPLES = "triples"
SET_DEPS = "set_deps"
SETS = "sets"
ROW_GROUP_BYTES = 256 * 1024  # small row groups: reading one set reads little besides it
DEFAULT_BUCKETS = 32


def item_bucket(item: str, buckets: int) -> int:
    """The bucket of an item's row in ``items`` (Spark computes the same: pmod(crc32(item), buckets))."""
    return zlib.crc32(item.encode("utf-8")) % buckets


def set_bucket(csid: int, buckets: int) -> int:
    """The bucket of the triples whose derived item is in set ``csid``."""
    return csid % buckets


def bucket_folder(table: str, bucket: int) -> str:
    return f"{table}/bucket={bucket}"
