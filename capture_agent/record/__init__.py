"""Record-level lineage capture in PySpark, in the style of Titian.

    from capture_agent import LineageContext
    lc = LineageContext(spark)                       # store root: LINEAGE_STORE (default var/lineage)
    counts = lc.textFile(path).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()                                 # PySpark's results, lineage captured
    lin = counts.getLineage()                        # LineageRDD at the last action's output
    src = lin.filter(lambda kv: kv[0] == "error").goBackAll()
    src.collect(); src.ids(); src.positions()        # the input lines, their ids, (file, byte offset)
    src.goNextAll(); lin.goBack(); src.goNext()      # forward to the outputs; one step back/forward
    impact = src.whatIfDeleted()                     # what deleting them does to the last action's output
    impact.deleted(); impact.changed(); impact.unchanged(); impact.appeared()  # exact, by replay
    impact.replay()                                  # how: keys replayed per later stage
    impact.dead(); impact.reached(); impact.unreached(); impact.counts()      # lineage alone (query/whatif.py)

DataFrames read through the context (``lc.read.parquet``, ``lc.createDataFrame``, ``lc.sql``) are
``CapturedDataFrame``s: PySpark's DataFrames, whose actions are captured as an unmodified job's
are, the query's plan rewritten in the JVM so that its rows carry their source rows' ids
(``capture/captured_frames.py``, ``capture/frame_plan.py``); each action writes one output point.
A temporary view of a captured frame is read as that frame's sources.

Captured RDDs (``CapturedRDD``) have PySpark's methods and results. Lineage is captured at stage
boundaries only; within a stage, a record carries the position of its stage input and nothing is
materialised per operator. Capture points (``storage/layouts`` holds one class per table layout):

| operations | capture points |
|---|---|
| textFile, csv | input: (split, line number); each line's byte offset kept |
| parallelize / parquet | input: (partition, index); values / (file, row index) kept |
| map, flatMap, filter, mapValues, flatMapValues, keyBy, keys, values, sample, zipWith* | none (fused) |
| mapPartitions(WithIndex), glom | stage: output <- the inputs pulled since the previous output |
| reduceByKey, combineByKey, aggregateByKey, foldByKey, distinct | combiner (map side) + reducer |
| groupByKey, groupBy, cogroup, groupWith, subtract(ByKey), intersection | reducer |
| join, left/right/fullOuterJoin, cartesian, zip | join: output <- (left id, right id) |
| union | union: virtual (partitions side by side), a table when co-partitioned |
| partitionBy, sortByKey, sortBy, repartition, coalesce, cache/persist, (local)checkpoint | stage: output <- one input |
| collect, take, first, top, takeOrdered, takeSample, collectAsMap, lookup | output <- one input each |
| saveAsTextFile, saveAsPickleFile, saveAsSequenceFile, the Hadoop saves | output <- one input each |
| count, reduce, fold, aggregate, sum, max, min, mean, stats, foreach, *Approx... | output: result <- every record |
| countByKey, countByValue, reduceByKeyLocally, histogram (a count per bucket) | combiner + output |

saveAsTextFile output ids are (part file, byte offset of the line), like a text input's position;
the other saves' are (part file, index of the record in it), compressed or not.
Every other RDD method raises ``UnsupportedOperation`` naming it (``.plain()`` runs a captured
RDD's computation as plain PySpark). Combine, group, the joins, cogroup and distinct spill to local
disk past ``spark.python.worker.memory``, as PySpark's merger does (``worker/spill.py``). Traces
read only the partition tables their ids point to; ``LineageRun`` opens a finished run's lineage
from its folder alone. What-ifs replay the job: in its own process, or from the plan and pickled
functions each action keeps in the run's folder (``capture/kept.py``, ``query/stored_job.py``;
functions load only inside Spark tasks), selectively where the shape allows
(``query/selective.py``: a combine's collect, from the map-side aggregates its tasks kept;
``query/delta.py``: the stages after a combine, on the keys the deletion touches only).

The package by role (a change has one place to go):

| subpackage | holds | runs in |
|---|---|---|
| ``storage`` | ids, the store's file system, tables, run manifest, layouts, deletion rules | driver and tasks |
| ``worker`` | stage ends, boundary agents, input agents, spilling, the start-up check | tasks only |
| ``capture`` | plan, captured RDDs and DataFrames, codegen, compiler, inputs, actions, context | the job's driver |
| ``query`` | traces, record values, ``LineageRDD``, ``LineageRun``, recipes, what-ifs, replays | driver or worker |

``storage`` and ``worker`` travel to executors by value. A table layout is one class in
``storage/layouts`` owning its columns, task-side writer, backward and forward steps, ids,
values, positions and deletion rule.

A new operator with a new table shape is a new layout class in ``storage/layouts`` (registered in
its ``__init__``), its task code in ``worker``, and its plan node and compile step in ``capture``.
"""

from __future__ import annotations

from capture_agent.record.capture.captured_frames import CapturedDataFrame
from capture_agent.record.capture.context import LineageContext
from capture_agent.record.capture.rdd import CapturedRDD
from capture_agent.record.errors import (
    IncompleteLineage,
    InputChangedError,
    LineageError,
    NotCaptured,
    ReplayNotPossible,
    UnsupportedOperation,
    ValuesNotAvailable,
)
from capture_agent.record.query.lineage_rdd import LineageRDD
from capture_agent.record.query.run import LineageRun
from capture_agent.record.storage.deletion import DeletionRule, Fate
from capture_agent.record.storage.layouts import Position
from capture_agent.record.storage.manifest import CapturePoint, LineageStore

__all__ = [
    "CapturedDataFrame",
    "CapturePoint",
    "CapturedRDD",
    "DeletionRule",
    "Fate",
    "IncompleteLineage",
    "InputChangedError",
    "LineageContext",
    "LineageError",
    "LineageRDD",
    "LineageRun",
    "LineageStore",
    "NotCaptured",
    "Position",
    "ReplayNotPossible",
    "UnsupportedOperation",
    "ValuesNotAvailable",
]
