"""How a captured RDD, and an action on it, are computed as plain PySpark, written as data.

A ``Recipe`` is a node's plain builder: one PySpark method called on another node's plain RDD
(``Ref``), on the SparkContext (``SC``) or on the DataFrame reader (``READ``), with arguments that
are plain values, other nodes or the job's functions. ``Node.plain()`` calls it in the job's
process. A ``Redo`` is an action applied again to a plain RDD, its result as a list of records
(what-if replay, ``capture.rerun``). Actions that merge partition results with the job's functions
on the driver (reduce, fold, aggregate, max/min with a key, top/takeOrdered with a key,
reduceByKeyLocally) merge them in one task instead (``worker.actions``), so a replay never calls
a job's function outside a Spark task.

Being data, both can be kept in the run's folder (``capture.kept``: JSON, with each function's
cloudpickled bytes beside it) and built again by another process (``query.stored_job``), where
every function is a ``worker.stored.StoredFunction`` that is unpickled only inside a Spark task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.core.rdd import RDD

SC, READ = "sc", "read"  # what a source's recipe is called on
IN_TASKS = "in_tasks"  # Redo method: a worker.actions step run per partition, then merged in one task
SHAPES = ("list", "one", "one_or_none", "items")


@dataclass(frozen=True)
class Ref:
    """Another node's plain RDD, as an argument or the receiver of a recipe."""

    node: Any  # plan.Node


def spark_read(sc: Any) -> Any:
    """The DataFrame reader of ``sc``'s session."""
    from pyspark.sql import SparkSession

    return (SparkSession.getActiveSession() or SparkSession(sc)).read


class Recipe:
    """``on.method(*args, **kwargs)``, then ``.attr`` when given (``spark.read.parquet(p).rdd``)."""

    def __init__(self, on: Ref | str, method: str, *args: Any, attr: str | None = None, **kwargs: Any) -> None:
        self.on = on
        self.method = method
        self.args = args
        self.kwargs = kwargs
        self.attr = attr

    def build(self, sc: Any, value: Callable[[Any], Any]) -> RDD:
        """The plain RDD; ``value`` turns each argument (and a ``Ref`` receiver) into what is passed."""
        if isinstance(self.on, Ref):
            receiver = value(self.on)
        elif self.on == SC:
            receiver = sc
        elif self.on == READ:
            receiver = spark_read(sc)
        else:
            raise ValueError(f"a recipe is called on a node, {SC!r} or {READ!r}, not {self.on!r}")
        result = getattr(receiver, self.method)(*(value(a) for a in self.args),
                                                **{k: value(v) for k, v in self.kwargs.items()})
        return getattr(result, self.attr) if self.attr else result

    def refs(self) -> list[Any]:
        """The nodes this recipe reads."""
        found = [self.on.node] if isinstance(self.on, Ref) else []
        return found + [a.node for a in (*self.args, *self.kwargs.values()) if isinstance(a, Ref)]

    def __repr__(self) -> str:
        return f"Recipe({self.on!r}.{self.method}, {len(self.args)} args)"


class Given(Recipe):
    """A plain RDD the job built otherwise (a captured DataFrame's rows, ``.rdd``): built in the
    job's process only, never kept (``capture.kept`` says so)."""

    def __init__(self, make: Callable[[], RDD], what: str) -> None:
        super().__init__(SC, "given")
        self.make = make
        self.what = what

    def build(self, sc: Any, value: Callable[[Any], Any]) -> RDD:
        return self.make()


def live(argument: Any) -> Any:
    """``Recipe.build``'s ``value`` in the job's process: nodes become their plain RDDs."""
    return argument.node.plain() if isinstance(argument, Ref) else argument


class Redo:
    """An action applied again to a plain RDD: ``plain.method(*args)`` shaped as a list of records
    (``list``: the records; ``one``: [result]; ``one_or_none``: [] where PySpark raises ValueError
    on an empty RDD; ``items``: a dict's items), or (``IN_TASKS``) a ``worker.actions`` step.
    ``side_effects``: the action runs the job's functions for their effects (foreach), which a
    replay from the run's folder does not repeat."""

    def __init__(self, method: str, *args: Any, shape: str = "list", side_effects: bool = False) -> None:
        assert shape in SHAPES
        self.method = method
        self.args = args
        self.shape = shape
        self.side_effects = side_effects

    def __call__(self, plain: RDD) -> list[Any]:
        return self.run(plain, live)

    def run(self, plain: RDD, value: Callable[[Any], Any]) -> list[Any]:
        args = [value(a) for a in self.args]
        if self.method == IN_TASKS:
            return in_tasks(plain, args[0])
        try:
            result = getattr(plain, self.method)(*args)
        except ValueError:
            if self.shape == "one_or_none":  # reduce, max... of nothing
                return []
            raise
        if self.shape in ("one", "one_or_none"):
            return [result]
        if self.shape == "items":
            return list(result.items())
        return list(result)


def in_tasks(plain: RDD, step: Callable[[str, Any], Any]) -> list[Any]:
    """``step("partial", records)`` per partition, then ``step("final", partials in partition
    order)`` in one task: the records of the action's result."""

    def partial(split: int, iterator: Any) -> Any:
        yield split, list(step("partial", iterator))

    def final(iterator: Any) -> Any:
        ordered = sorted(iterator, key=lambda t: t[0])
        return step("final", [v for _, values in ordered for v in values])

    return plain.mapPartitionsWithIndex(partial).coalesce(1, shuffle=True).mapPartitions(final).collect()
