"""Code generation: ONE Python function per fused stage branch.

A *head* yields its records with their position: ``(offset, line)`` for text, ``(position,
value)`` otherwise. The generated function loops over the head's records, applies the fused
narrow operators inline and hands each result with its input position to the *tail* (collect,
count, map-side combine, group, shuffle...). Positions live in ``array('I')``; nothing is
materialised per operator, and each tail writes its partition's association table once, at the
end (``worker.tails``).

The keyed tails hold a dict and flat arrays, checked against the memory budget every
``CHECK_EVERY`` positions and sent to disk past it (``worker.spill``). The group's dict maps key
-> slot; each record appends the slot and its position. So does the map-side combine's until it
holds ``TAG_PAST`` keys; then it maps key -> value, as PySpark's, and each record appends its
key's tag (``worker.combine``: the key's hash bucket, or a tag apart from a small side dict when
another key took the bucket) and its position.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any, NamedTuple

from capture_agent.record.capture.pipeline import Head, Tail
from capture_agent.record.capture.plan import NarrowOp
from capture_agent.record.worker import combine, spill, tails

ONE_TO_ONE = ("map", "mapValues", "keyBy", "keys", "values")


class TailCode(NamedTuple):
    """The lines a tail adds: before the loop, at the top of each input record (``check``), for
    each record reaching the tail (``body``), and after the loop."""

    prologue: list[str]
    check: list[str]
    body: list[str]
    epilogue: list[str]

_TAIL_NAMES = {
    "array": array,
    "LimitReached": tails.LimitReached,
    "finish_one_local": tails.finish_one_local,
    "finish_single": tails.finish_single,
    "finish_save": tails.finish_save,
    "finish_combiner": tails.finish_combiner,
    "finish_group": tails.finish_group,
    "finish_text_input": tails.finish_text_input,
    "spill_keyed": tails.spill_keyed,
    "spill_combined": tails.spill_combined,
    "CombineState": combine.CombineState,
    "start_tagging": combine.start_tagging,
    "TAKEN_BYTES": combine.TAKEN_BYTES,
    "BIT": combine.BIT,
    "ABSENT": object(),  # a tagging combine's dict.get default: None may be a value
    "MemoryBudget": spill.MemoryBudget,
    "Runs": spill.Runs,
    "CHECK_EVERY": spill.CHECK_EVERY,
}


def tail_code(tail: Tail, v: str) -> TailCode:
    """The lines of a tail; ``v`` is the record, ``pos`` its position."""
    kind = tail.kind
    if kind == "records":
        pro = ["poss = array('I')", "ap = poss.append", "n = 0"]
        if tail.limit < 0:
            body = ["ap(pos)", f"yield {v}"]
        elif tail.drain:
            body = ["if n < LIMIT:", "    ap(pos)", "    n += 1", f"    yield {v}"]
        else:
            body = ["if n == LIMIT:", "    raise LimitReached()", "ap(pos)", "n += 1", f"yield {v}"]
        return TailCode(pro, [], body, ["finish_one_local(LOC, tpart, poss)"])
    if kind == "count":
        return TailCode(["poss = array('I')", "ap = poss.append"], [], ["ap(pos)"],
                        ["finish_single(LOC, tpart, poss)", "yield len(poss)"])
    if kind == "consume":
        return TailCode(["poss = array('I')", "ap = poss.append"], [], ["ap(pos)", f"yield {v}"],
                        ["finish_single(LOC, tpart, poss)"])
    if kind == "save":
        # out_offs, not offs: a text head keeps its input lines' offsets in ``offs``
        pro = ["out_offs = array('q')", "poss = array('I')", "ao = out_offs.append", "ap = poss.append", "o = 0"]
        body = [f"x = {v}",
                "if not isinstance(x, bytes):",
                "    x = x.encode('utf-8') if isinstance(x, str) else str(x).encode('utf-8')",
                "ao(o)", "ap(pos)", "o += len(x) + 1", "yield x"]
        return TailCode(pro, [], body, ["finish_save(LOC, tpart, out_offs, poss)"])
    if kind == "pairs":
        return TailCode([], [], [f"yield (pos, {v})"], [])
    if kind == "gid":
        return TailCode(["hi = tpart << 32"], [], [f"yield (hi | pos, {v})"], [])
    if kind == "keyed_gid":
        return TailCode(["hi = tpart << 32"], [], [f"kk, xx = {v}", "yield (kk, (xx, hi | pos))"], [])
    if kind == "combine":
        return _combine_code(tail, v)
    if kind == "group":
        return _group_code(tail, v)
    raise ValueError(f"unknown tail {kind}")


def _spilling(fresh: list[str], spill: str) -> tuple[list[str], list[str]]:
    """The prologue and check of a keyed tail whose state is ``fresh``: every CHECK_EVERY positions
    the memory is checked, and past the budget ``spill`` sends the state to disk (worker.spill) and
    the tail starts again with ``fresh`` state."""
    prologue = [*fresh, "run_base = 0", "budget = MemoryBudget(MEMORY)", "runs = Runs(budget)",
                "next_check = 1"]  # the second record (the first is in the state), then every CHECK_EVERY
    check = ["if pos >= next_check:",
             "    next_check = pos + CHECK_EVERY",
             "    if budget.over():",
             f"        {spill}",
             *("        " + line for line in fresh),
             "        budget.spilled()",
             "        run_base = pos"]
    return prologue, check


def _combine_code(tail: Tail, v: str) -> TailCode:
    """Map-side combine (``worker.combine``): ``key -> slot``, values by slot and each record's slot
    and position in flat arrays; past TAG_PAST keys (at a check), ``key -> value`` as PySpark's
    and each record's key tag (the bucket of a new key another key took sends it to the side
    dict). The positions are grouped by key once, at the end (worker.tails)."""
    poss = "None" if tail.dense else "poss"
    fresh = ["d = {}", "get = d.get", "vals = []", "new_key = vals.append", "slots = array('I')",
             "keep_slot = slots.append", "poss = array('I')", "keep_pos = poss.append", "tagging = False",
             "head = array('I')", "tags = array('I')", "keep_tag = tags.append", "taken = side = sget = None"]
    state = f"CombineState(d, vals, slots, head, tags, {poss})"
    prologue, check = _spilling(fresh, f"spill_combined(runs, {state}, run_base)")
    check += ["    elif not tagging and len(d) > TAG_PAST:",
              "        d, head, taken, side = start_tagging(d, vals)",
              "        get = d.get",
              "        sget = side.get",
              "        vals = new_key = None",
              "        tagging = True"]
    prologue += ["merge = MERGE", "create = CREATE", "h = hash", "bit_of = BIT", "absent = ABSENT"]
    first = "create(xx)" if tail.create is not None else "xx"
    body = [f"kk, xx = {v}",
            "if tagging:",
            f"    tag = h(kk) & {combine.BUCKET_MASK}",
            "    old = get(kk, absent)",
            "    if old is absent:",
            f"        d[kk] = {first}",
            "        byte = tag >> 3",
            "        bit = bit_of[tag & 7]",
            "        was = taken[byte]",
            "        if was & bit:",
            f"            tag = side[kk] = {combine.SIDE} + len(side)",
            "        else:",
            "            taken[byte] = was | bit",
            f"        keep_tag(tag | {combine.FIRST})",
            "    else:",
            "        d[kk] = merge(old, xx)",
            "        if side:",
            "            tag = sget(kk, tag)",
            "        keep_tag(tag)",
            "else:",
            "    j = get(kk)",
            "    if j is None:",
            "        j = d[kk] = len(vals)",
            f"        new_key({first})",
            "    else:",
            "        vals[j] = merge(vals[j], xx)",
            "    keep_slot(j)",
            *([] if tail.dense else ["keep_pos(pos)"])]
    # the bitmap and the side dict are not needed to finish: let them go before the keys are yielded
    end = f"yield from finish_combiner(LOC, tpart, {state}, run_base, runs, MERGE_COMBINERS, SHUFFLE)"
    return TailCode(prologue, check, body, ["taken = side = sget = None", end])


def _group_code(tail: Tail, v: str) -> TailCode:
    """groupByKey/join/cogroup side: each record appends its key's slot (first-seen order) and its
    position to two flat arrays; the positions of each key are grouped once, at the end (appending
    to one array per key costs more: 50,000 keys' arrays are scattered in memory)."""
    poss = "None" if tail.dense else "poss"
    fresh = ["d = {}", "get = d.get", "vals = []", "new_key = vals.append", "slots = array('I')",
             "keep_slot = slots.append", "poss = array('I')", "keep_pos = poss.append"]
    # it spills global ids (what it sends), where the combine spills positions (its table's)
    prologue, check = _spilling(fresh, f"spill_keyed(runs, d, vals, slots, {poss}, run_base, tpart << 32)")
    body = [f"kk, xx = {v}",
            "j = get(kk)",
            "if j is None:",
            "    j = d[kk] = len(vals)",
            "    new_key([xx])",
            "else:",
            "    vals[j].append(xx)",
            "keep_slot(j)",
            *([] if tail.dense else ["keep_pos(pos)"])]
    end = f"yield from finish_group(tpart, SIDE, d, vals, slots, {poss}, run_base, runs, SHUFFLE)"
    return TailCode(prologue, check, body, [end])


def build_stage_function(head: Head, ops: list[NarrowOp], tail: Tail, offset: int) -> Callable[..., Any]:
    """Generates the fused stage function of one branch (see the module docstring)."""
    ns: dict[str, Any] = dict(_TAIL_NAMES)
    ns.update(OFFSET=offset, BASES=head.bases, LOC=tail.target, LIMIT=tail.limit, SIDE=tail.side,
              CREATE=tail.create, MERGE=tail.merge, INPUT_LOC=head.input_target, MEMORY=tail.memory_mb,
              MERGE_COMBINERS=tail.merge_combiners, TAG_PAST=combine.TAG_PAST, SHUFFLE=tail.shuffle)
    lines: list[str] = ["def stage(split, iterator):", "    tpart = split + OFFSET"]

    def emit(level: int, text: str) -> None:
        lines.append("    " * level + text)

    text = head.reader == "offset"
    if text:
        # A line's position is its number in the split; its byte offset goes to the input table,
        # from the split's start in 4 bytes (file offsets in 8 for a split of 4 GiB or more).
        emit(1, "base = BASES[split]")
        emit(1, "offs = array('q')" if head.wide_offsets else "offs = array('I')")
        emit(1, "keep_offset = offs.append")
        emit(1, "pos = -1")
        emit(1, "complete = False")
    for i, op in enumerate(ops):
        ns[f"F{i}"] = op.func
        emit(1, f"f{i} = F{i}(split)" if op.bound else f"f{i} = F{i}")
    cur = "v0"
    prologue, check, body, epilogue = tail_code(tail, "{v}")
    for line in prologue:
        emit(1, line)
    top = 2 if text else 1
    if text:
        emit(1, "try:")
    emit(top, "try:")
    if text:
        emit(top + 1, "for off, v0 in iterator:")
        emit(top + 2, "pos += 1")
        emit(top + 2, "keep_offset(off)" if head.wide_offsets else "keep_offset(off - base)")
        if head.encode:
            emit(top + 2, "v0 = v0.encode('utf-8')")
    else:
        emit(top + 1, "for pos, v0 in iterator:")
    for line in check:
        emit(top + 2, line)
    level = top + 2
    for i, op in enumerate(ops):
        nxt = f"v{i + 1}"
        t = op.template
        if t == "map":
            emit(level, f"{nxt} = f{i}({cur})")
        elif t == "filter":
            emit(level, f"if not f{i}({cur}):")
            emit(level + 1, "continue")
            nxt = cur
        elif t == "flat":
            emit(level, f"for {nxt} in f{i}({cur}):")
            level += 1
        elif t == "mapValues":
            emit(level, f"{nxt} = ({cur}[0], f{i}({cur}[1]))")
        elif t == "flatMapValues":
            emit(level, f"for x{i} in f{i}({cur}[1]):")
            level += 1
            emit(level, f"{nxt} = ({cur}[0], x{i})")
        elif t == "keyBy":
            emit(level, f"{nxt} = (f{i}({cur}), {cur})")
        elif t == "keys":
            emit(level, f"{nxt} = {cur}[0]")
        elif t == "values":
            emit(level, f"{nxt} = {cur}[1]")
        else:  # pragma: no cover
            raise ValueError(f"unknown narrow template {t}")
        cur = nxt
    for line in body:
        emit(level, line.replace("{v}", cur))
    if text:
        emit(top + 1, "complete = True")
    emit(top, "except LimitReached:")
    emit(top + 1, "pass")
    # the tail finishes first: a text input's table is written once the tail let its state go
    # (a keyed tail's dict), not beside it (its Arrow and Parquet buffers)
    for line in epilogue:
        emit(top, line)
    if text:
        emit(1, "finally:")
        emit(2, "finish_text_input(INPUT_LOC, split, offs, complete, base)")
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<lineage stage {tail.kind}>", "exec"), ns)  # our own generated code, never user input
    fn = ns["stage"]
    fn.__qualname__ = fn.__name__ = f"lineage_stage_{tail.kind}"
    fn.__doc__ = source
    return fn


