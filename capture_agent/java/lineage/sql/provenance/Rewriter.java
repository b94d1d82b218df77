package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.Metadata;
import lineage.sql.Tap;
import scala.Option;

/**
 * One query's rewrite: walks the plan bottom-up, each operator rewritten by the first rewrite of
 * the registry ({@link Rewrites}) that accepts it, and makes the expressions the rewrites share
 * (fresh hidden columns, the id-set functions of {@code lineage.sql.IdSets}).
 */
final class Rewriter {
    /** A leaf replaced by a source: its plan (the leaf's columns, then the ids in {@code idColumn}). */
    record Source(LogicalPlan plan, String idColumn, String id) {
    }

    /** A combiner point the caller made for an aggregate's tap: where its tables go, and its id. */
    record TapPoint(String dir, String id) {
    }

    /** A tap given to an aggregate or a window ({@link #tapFor}), and the id of its combiner point. */
    record Taken(Tap tap, String point) {
    }

    /** An aggregate's grouping, functions and child as Spark compares plans (canonicalized), over
     * these sources' ids. */
    private record SameAggregate(LogicalPlan canonical, List<String> sources) {

        /** {@code aggregate}'s, over {@code slots}; null when it holds something random (a copy
         * would not compute the same groups of the same rows). */
        static SameAggregate of(Aggregate aggregate, List<Slot> slots, Rewriter rewriter) {
            List<Expression> distinct = new ArrayList<>();  // as Spark plans them: each function once
            for (NamedExpression e : Scala.list(aggregate.aggregateExpressions())) {
                for (Expression f : Expressions.all((Expression) e, "AggregateExpression", new ArrayList<>())) {
                    if (distinct.stream().noneMatch(f::semanticEquals)) {
                        distinct.add(f);
                    }
                }
            }
            List<NamedExpression> functions = new ArrayList<>();
            for (Expression f : distinct) {
                functions.add(rewriter.alias(f, "f"));
            }
            LogicalPlan groups = new Aggregate(aggregate.groupingExpressions(), Scala.seq(functions), aggregate.child(),
                    aggregate.hint());
            return groups.deterministic()
                    ? new SameAggregate(groups.canonicalized(), slots.stream().map(Slot::source).toList()) : null;
        }
    }

    final SparkSession session;
    private final IdentityHashMap<LogicalPlan, Source> sources;
    private final List<TapPoint> taps;
    /** The sources of the ids each tap taken so far was given (its point's parents). */
    final List<List<String>> tapped = new ArrayList<>();
    /** The taps (their places in {@link #tapped}) whose rows are places of a window's partition. */
    final java.util.Set<Integer> prefixes = new java.util.HashSet<>();
    private final Map<SameAggregate, Taken> sameAggregates = new HashMap<>();
    private int names;
    private final LogicalPlan root;
    private java.util.Set<org.apache.spark.sql.catalyst.expressions.ExprId> referenced;

    Rewriter(SparkSession session, LogicalPlan root, IdentityHashMap<LogicalPlan, Source> sources, List<TapPoint> taps) {
        this.session = session;
        this.root = root;
        this.sources = sources;
        this.taps = taps;
    }

    /**
     * The tap for {@code aggregate} over {@code slots}, or null (a tap takes 1 to {@link
     * Tap#MAX_SOURCES} sources' ids, none a set; else the aggregate gathers sets): the next free
     * one, or the one a copy of it took: an aggregate of the same groups of the same rows and the
     * same functions (as Spark compares plans, over the same sources' ids), whose result columns may
     * be fewer (those pruned where a copy's are not read). A query that reads a CTE or a view
     * several times holds such copies: given one tap (the same {@link Tap}, so the same function),
     * their map sides stay one plan, and Spark computes them once, as it does plain (their
     * exchange reused); with a tap each, they were computed once each (TPC-DS 47: store_sales read
     * and aggregated three times). Copies of other functions take taps of their own: they are other
     * stages, whose partitions (a tap's tables are named by partition) adaptive execution could
     * coalesce otherwise; copies of the same functions where exchanges are not reused run the same
     * stage twice, which writes the same tables. With {@code sets}, slots of sets are taken too (the
     * tap adds each id of a row's set): for a semi join's right side, whose groups would otherwise
     * gather the same sets (TPC-DS 70: the IN's states, each with its rank's set, copied into every
     * store_sales row of the state); an aggregate's rows of sets are unions of bitmaps, cheaper for
     * large sets than their ids one by one.
     */
    Taken tapFor(Aggregate aggregate, List<Slot> slots, boolean sets) {
        if (!tappable(slots, sets)) {
            return null;
        }
        SameAggregate same = SameAggregate.of(aggregate, slots, this);
        Taken taken = same == null ? null : sameAggregates.get(same);
        if (taken != null || tapped.size() >= taps.size()) {
            return taken;
        }
        taken = newTap(slots);
        if (same != null) {
            sameAggregates.put(same, taken);
        }
        return taken;
    }

    /**
     * A tap of its own for a window over {@code slots} whose rows each hold their whole window
     * partition ({@link WindowIds}), or null (as {@link #tapFor}). Copies of a window do not share
     * one: a window's tasks are the partitions of a shuffle, which adaptive execution may coalesce
     * otherwise in another copy's stage, and a tap's tables are named by partition.
     */
    Taken windowTapFor(List<Slot> slots) {
        return tappable(slots, false) && tapped.size() < taps.size() ? newTap(slots) : null;
    }

    /**
     * A tap of its own for a window over {@code slots} whose rows each hold a prefix of their
     * partition ({@link WindowIds}, {@code lineage.sql.TapPrefix}), or null (as {@link #windowTapFor});
     * its point's tables are read by places ({@link #prefixes}).
     */
    Taken prefixTapFor(List<Slot> slots) {
        Taken taken = windowTapFor(slots);
        if (taken != null) {
            prefixes.add(tapped.size() - 1);
        }
        return taken;
    }

    /** Whether a tap takes these slots: 1 to {@link Tap#MAX_SOURCES} sources' ids, none a set unless
     * {@code sets}. */
    private static boolean tappable(List<Slot> slots, boolean sets) {
        return !slots.isEmpty() && slots.size() <= Tap.MAX_SOURCES && (sets || slots.stream().noneMatch(Slot::set));
    }

    private Taken newTap(List<Slot> slots) {
        tapped.add(slots.stream().map(Slot::source).toList());
        TapPoint point = taps.get(tapped.size() - 1);
        return new Taken(new Tap(point.dir(), slots.size()), point.id());
    }

    /** Whether any operator of the query (its subqueries' too) reads {@code attribute}. */
    boolean reads(org.apache.spark.sql.catalyst.expressions.Attribute attribute) {
        if (referenced == null) {
            referenced = new java.util.HashSet<>();
            gatherReferences(root);
        }
        return referenced.contains(attribute.exprId());
    }

    private void gatherReferences(LogicalPlan node) {
        for (org.apache.spark.sql.catalyst.expressions.Attribute a : Scala.list(node.references().toSeq())) {
            referenced.add(a.exprId());
        }
        for (LogicalPlan child : Scala.list(node.children())) {
            gatherReferences(child);
        }
        for (LogicalPlan sub : Scala.list(node.subqueries())) {
            gatherReferences(sub);
        }
    }

    Source sourceOf(LogicalPlan leaf) {
        return sources.get(leaf);
    }

    Carried carry(LogicalPlan node) {
        List<Carried> children = new ArrayList<>();
        for (LogicalPlan child : Scala.list(node.children())) {
            children.add(carry(child));
        }
        SubqueryIds.Prepared prepared = SubqueryIds.prepare(node, this);
        OperatorRewrite rewrite = Rewrites.of(prepared.node());
        if (!rewrite.takesLists()) {
            children.replaceAll(this::setsForLists);
        }
        return SubqueryIds.attach(rewrite.rewrite(prepared.node(), children, this), prepared, this);
    }

    /** A fresh hidden column's name (the Python side hides every column named __lineage_...). */
    String fresh() {
        names++;
        return "__lineage_p" + names;
    }

    Alias alias(Expression child, String name) {
        return new Alias(child, name, NamedExpression$.MODULE$.newExprId(), Scala.seq(List.of()),
                Option.<Metadata>empty(), Scala.seq(List.of()));
    }

    /** A slot's ids as a set (an id column through lineage_set, a list through lineage_set_all). */
    Expression asSet(Slot slot) {
        if (slot.set()) {
            return slot.attribute();
        }
        return call(slot.list() ? "lineage_set_all" : "lineage_set", slot.attribute());
    }

    /** {@code carried} with each slot that is a list ({@link Slot#list}) made a set column. */
    Carried setsForLists(Carried carried) {
        if (carried.slots().stream().noneMatch(Slot::list)) {
            return carried;
        }
        List<NamedExpression> out = new ArrayList<>();
        java.util.Set<org.apache.spark.sql.catalyst.expressions.ExprId> lists = new java.util.HashSet<>();
        List<Slot> slots = new ArrayList<>();
        List<NamedExpression> sets = new ArrayList<>();
        for (Slot slot : carried.slots()) {
            if (!slot.list()) {
                slots.add(slot);
                continue;
            }
            lists.add(slot.attribute().exprId());
            Alias set = alias(asSet(slot), fresh());
            sets.add(set);
            slots.add(slot.as(set.toAttribute(), true));
        }
        for (org.apache.spark.sql.catalyst.expressions.Attribute a : Scala.list(carried.plan().output())) {
            if (!lists.contains(a.exprId())) {
                out.add(a);
            }
        }
        out.addAll(sets);
        return new Carried(new org.apache.spark.sql.catalyst.plans.logical.Project(Scala.seq(out), carried.plan()),
                slots, carried.rule());
    }

    Expression or(Expression a, Expression b) {
        return call("lineage_or", a, b);
    }

    /** The aggregate of a slot over a group: the set of its ids (lineage_ids) or of its sets' (or
     * lists') union. */
    Expression gather(Slot slot) {
        Expression f = slot.list() ? call("lineage_union", asSet(slot))
                : call(slot.set() ? "lineage_union" : "lineage_ids", slot.attribute());
        return ((AggregateFunction) f).toAggregateExpression();
    }

    /** Each slot's ids gathered over a group ({@link #gather}), added to {@code list} as fresh
     * columns; returns the slots of those columns (sets). */
    List<Slot> gathered(List<Slot> slots, List<NamedExpression> list) {
        List<Slot> out = new ArrayList<>();
        for (Slot slot : slots) {
            Alias ids = alias(gather(slot), fresh());
            list.add(ids);
            out.add(slot.as(ids.toAttribute(), true));
        }
        return out;
    }

    /** The union of a slot's sets over a group (any slot as sets), an aggregate function. */
    AggregateFunction union(Expression sets) {
        return (AggregateFunction) call("lineage_union", sets);
    }

    Expression call(String function, Expression... args) {
        try {
            Option<Expression> found = session.sessionState().catalog()
                    .resolveBuiltinOrTempFunction(function, Scala.seq(List.of(args)));
            if (found.isDefined()) {
                return found.get();
            }
        } catch (Exception e) {
            throw new IllegalStateException("lineage: the function " + function + " cannot be made", e);
        }
        throw new IllegalStateException("lineage: the function " + function + " is not registered");
    }
}
