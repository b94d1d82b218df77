"""Workflow provenance at scale (IBM CSProv): triples, the index a Spark job builds over them, and
lineage queries that read only the connected sets in an item's set lineage.

- ``triples``: the (src, dst, op) triples any workflow system posts, checked and kept as Parquet.
- ``components``: weakly connected components in Spark DataFrames (hooking and pointer jumping).
- ``workflow``: the dataset graph of the workflow and its splits.
- ``partition``: large components cut into connected sets along the splits (Algorithm 3), set
  dependencies.
- ``index``: the build (incremental over new triples) and ``layout``: how a generation is stored.
- ``query``: Algorithm 2, answered in one process from the stored generation (recursive querying
  over all the triples with Spark joins, the baseline it is measured against, is in bench/csprov.py).

No Django here: the server's worker, its web process, the benchmark and a PySpark shell call the same code.
"""

from capture_agent.provenance.index import BuildOptions, build_index, spark_uri
from capture_agent.provenance.query import DIRECTIONS, LineageAnswer, ProvenanceIndex, recursive_query
from capture_agent.provenance.triples import COLUMNS, FORMATS, TripleError, read_triples, write_triples

__all__ = [
    "COLUMNS",
    "DIRECTIONS",
    "FORMATS",
    "BuildOptions",
    "LineageAnswer",
    "ProvenanceIndex",
    "TripleError",
    "build_index",
    "read_triples",
    "recursive_query",
    "spark_uri",
    "write_triples",
]
