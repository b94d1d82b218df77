"""SQL over captured DataFrames: ``lc.sql(query)`` after ``frame.createOrReplaceTempView(name)``.

    orders.createOrReplaceTempView("orders"); customers.createOrReplaceTempView("customers")
    top = lc.sql("SELECT c.country, sum(o.amount) AS total FROM orders o JOIN customers c "
                 "ON o.customer_id = c.customer_id GROUP BY c.country HAVING sum(o.amount) > 10")
    top.collect(); top.getLineage().filter(lambda r: r.country == "JP").goBackAll().collect()

A captured frame's view is its visible columns, so Spark parses and analyzes the query as it would
(``spark.sql``). The analyzed plan is then built again, node by node, with the captured frame
methods (``capture.frames``) that keep each source's hidden id column, and Spark plans and runs
that as it would any DataFrame (adaptive execution on). Every attribute of the plan becomes a
column named after its expression id (``_c<id>``), so the same view read twice, or two columns of
one name, never clash; expressions are given back to Spark as SQL text over those names.

| plan node | captured method |
|---|---|
| View of a captured frame (SubqueryAlias around it) | the frame, its columns renamed to ``_c<id>`` |
| Project | select (window functions partitioned by columns included) |
| Filter (WHERE, HAVING) | filter |
| Aggregate (GROUP BY, global aggregates, DISTINCT aggregates) | groupBy().agg() |
| Distinct, Deduplicate | distinct, dropDuplicates |
| Join inner, cross, left/right/full outer, left anti (ON or USING) | join |
| Join left semi on equal columns (``ON a.k = b.k [AND ...]``) | join(how="semi") on those columns |
| Window (OVER (PARTITION BY columns ...)) | select with the window expressions |
| Union (UNION ALL; UNION adds a Distinct) | union |
| Sort, GlobalLimit/LocalLimit (ORDER BY, LIMIT) | orderBy / sortWithinPartitions, limit |
| ResolvedHint (``/*+ BROADCAST(t) */``) | hint |

Anything else (a table or file not read through the context, subqueries, LATERAL VIEW,
GROUPING SETS / CUBE / ROLLUP, PIVOT, INTERSECT / EXCEPT...) raises ``UnsupportedOperation``
naming it, before anything runs.
"""

from __future__ import annotations

from typing import Any

from capture_agent.record.errors import UnsupportedOperation

# ``frame``s are ``frames.CapturedDataFrame`` (typed Any: this module is imported by that one's methods).


def _seq(jseq: Any) -> list[Any]:
    return [jseq.apply(i) for i in range(jseq.size())]


def _kind(node: Any) -> str:
    return str(node.getClass().getSimpleName())


def _name(attribute: Any) -> str:
    return f"_c{attribute.exprId().id()}"


class SqlTranslator:
    """One query's analyzed plan built again with captured frames (module docstring)."""

    def __init__(self, lc: Any, views: dict[str, Any]) -> None:
        self.lc = lc
        self.views = views
        jvm = lc.sc._jvm
        self._unresolved = jvm.org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
        self._to_seq = jvm.scala.jdk.javaapi.CollectionConverters

    # ------------------------------------------------------------------ expressions
    def _renamed(self, expr: Any) -> Any:
        """The expression with each attribute replaced by the column of its expression id."""
        kind = _kind(expr)
        if kind == "AttributeReference":
            return self._unresolved.quoted(_name(expr))
        if "Subquery" in kind or kind in ("Exists", "ListQuery", "OuterReference"):
            raise UnsupportedOperation(f"SQL subquery ({kind})", "write it as a join")
        children = _seq(expr.children())
        if not children:
            return expr
        java = self.lc.sc._gateway.jvm.java.util.ArrayList()
        for child in children:
            java.add(self._renamed(child))
        return expr.withNewChildren(self._to_seq.asScala(java).toSeq())

    def sql(self, expr: Any) -> str:
        try:
            return str(self._renamed(expr).sql())
        except UnsupportedOperation:
            raise
        except Exception as exc:  # noqa: BLE001 - py4j: an expression Spark cannot print as SQL
            raise UnsupportedOperation(f"SQL expression {expr.toString()}", str(exc).splitlines()[0]) from None

    def column(self, expr: Any) -> Any:
        from pyspark.sql import functions as F

        return F.expr(self.sql(expr))

    def named(self, expr: Any) -> Any:
        """A named expression (an attribute or an alias) as a column named by its expression id."""
        from pyspark.sql import functions as F

        if _kind(expr) == "AttributeReference":
            return F.col(f"`{_name(expr)}`")
        if _kind(expr) == "Alias":
            return self.column(expr.child()).alias(_name(expr))
        raise UnsupportedOperation(f"SQL output {expr.toString()}")

    def _sort_column(self, order: Any) -> Any:
        column = self.column(order.child())
        descending = str(order.direction().sql()) == "DESC"
        nulls_first = str(order.nullOrdering().sql()) == "NULLS FIRST"
        if descending:
            return column.desc_nulls_first() if nulls_first else column.desc_nulls_last()
        return column.asc_nulls_first() if nulls_first else column.asc_nulls_last()

    # ------------------------------------------------------------------ plans
    def frame(self, node: Any) -> Any:
        """The captured frame of a plan node: one column ``_c<id>`` per attribute of its output."""
        from pyspark.sql import functions as F

        kind = _kind(node)
        children = _seq(node.children())
        if kind == "View":
            return self._view(node)
        if kind == "SubqueryAlias":
            return self.frame(children[0])
        if kind == "Project":
            return self.frame(children[0]).select(*[self.named(e) for e in _seq(node.projectList())])
        if kind == "Filter":
            return self.frame(children[0]).filter(self.column(node.condition()))
        if kind == "Aggregate":
            return self._aggregate(node, self.frame(children[0]))
        if kind == "Distinct":
            return self.frame(children[0]).distinct()
        if kind == "Deduplicate":
            return self.frame(children[0]).dropDuplicates([_name(k) for k in _seq(node.keys())])
        if kind == "Join":
            return self._join(node, children)
        if kind == "Window":
            child = self.frame(children[0])
            return child.select(*[F.col(f"`{c}`") for c in child.columns],
                                *[self.named(e) for e in _seq(node.windowExpressions())])
        if kind == "Union":
            return self._union(node, children)
        if kind == "Sort":
            child = self.frame(children[0])
            orders = [self._sort_column(o) for o in _seq(node.order())]
            return child.orderBy(*orders) if getattr(node, "global")() else child.sortWithinPartitions(*orders)
        if kind in ("GlobalLimit", "LocalLimit"):
            below = children[0]
            if kind == "GlobalLimit" and _kind(below) == "LocalLimit":
                below = _seq(below.children())[0]
            return self.frame(below).limit(int(node.limitExpr().eval(None)))
        if kind == "ResolvedHint":
            child = self.frame(children[0])
            return child.hint("broadcast") if node.hints().strategy().isDefined() else child
        raise UnsupportedOperation(f"SQL {kind}", "capture_agent.record.capture.frame_sql lists what SQL is "
                                   "captured")

    def _view(self, node: Any) -> Any:
        from pyspark.sql import functions as F

        name = str(node.desc().identifier().table()).lower()
        frame = self.views.get(name)
        if frame is None or not node.isTempView():
            raise UnsupportedOperation(f"SQL over {node.desc().identifier().unquotedString()}",
                                       "register captured DataFrames with createOrReplaceTempView and query those")
        attributes = _seq(node.output())
        return frame.select(*[F.col(f"`{c}`").alias(_name(a)) for c, a in zip(frame.columns, attributes,
                                                                                  strict=True)])

    def _aggregate(self, node: Any, child: Any) -> Any:
        """GROUP BY: the aggregate expressions only (grouping columns appear where the query puts them)."""
        spark = self.lc.spark
        groups = [self.column(g) for g in _seq(node.groupingExpressions())]
        outputs = [self.named(e) for e in _seq(node.aggregateExpressions())]
        retain = spark.conf.get("spark.sql.retainGroupColumns", "true")
        spark.conf.set("spark.sql.retainGroupColumns", "false")
        try:
            return child.groupBy(*groups).agg(*outputs)
        finally:
            spark.conf.set("spark.sql.retainGroupColumns", retain)

    def _join(self, node: Any, children: list[Any]) -> Any:
        left, right = self.frame(children[0]), self.frame(children[1])
        how = str(node.joinType().sql()).lower().replace(" ", "")
        condition = node.condition()
        if how == "leftsemi":
            return self._semi(left, right, condition)
        on = self.column(condition.get()) if condition.isDefined() else None
        if on is None and how == "inner":
            how = "cross"
        return left.join(right, on, how)

    def _semi(self, left: Any, right: Any, condition: Any) -> Any:
        """``LEFT SEMI JOIN ... ON a.k = b.k [AND ...]``: the right side's columns renamed to the
        left's, joined on the names (the captured semi join keeps the matched right rows' ids)."""
        pairs = []
        todo = [condition.get()] if condition.isDefined() else []
        while todo:
            expr = todo.pop()
            kind = _kind(expr)
            if kind == "And":
                todo += [expr.left(), expr.right()]
                continue
            sides = [expr.left(), expr.right()] if kind == "EqualTo" else []
            if len(sides) != 2 or any(_kind(s) != "AttributeReference" for s in sides):
                raise UnsupportedOperation("SQL LEFT SEMI JOIN on an expression", "join on equal columns")
            a, b = (_name(s) for s in sides)
            pairs.append((a, b) if a in left.columns else (b, a))
        if not pairs:
            raise UnsupportedOperation("SQL LEFT SEMI JOIN without a condition")
        renamed = right
        for mine, theirs in pairs:
            renamed = renamed.withColumnRenamed(theirs, mine)
        return left.join(renamed, [mine for mine, _ in pairs], "semi")

    def _union(self, node: Any, children: list[Any]) -> Any:
        from pyspark.sql import functions as F

        if node.byName():
            raise UnsupportedOperation("SQL UNION BY NAME")
        frames = [self.frame(c) for c in children]
        names = [_name(a) for a in _seq(node.output())]
        out = None
        for frame in frames:
            aligned = frame.select(*[F.col(f"`{c}`").alias(n) for c, n in zip(frame.columns, names, strict=True)])
            out = aligned if out is None else out.union(aligned)
        return out


def captured_sql(lc: Any, views: dict[str, Any], query: str, args: Any = None) -> Any:
    """``lc.sql``: the query's result as a captured DataFrame (module docstring)."""
    from pyspark.sql import functions as F

    plain = lc.spark.sql(query, args) if args is not None else lc.spark.sql(query)
    plan = plain._jdf.queryExecution().analyzed()
    built = SqlTranslator(lc, views).frame(plan)
    outputs = _seq(plan.output())
    return built.select(*[F.col(f"`{_name(a)}`").alias(str(name)) for a, name in zip(outputs, plain.columns,
                                                                                          strict=True)])
