"""A real PySpark job captured record by record and registered with the live server, and oracles
computed from its input files (which lines hold a word, which topics a word has)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import add
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]

EVENTS_FILE = "events.jsonl"  # where a run captured without a server keeps its agent's events
VOCABULARY = ["error", "warning", "timeout", "retry", "ok", "info", "debug", "cache", "disk", "auth"]
TOPICS = {"error": "incident", "warning": "incident", "timeout": "network", "retry": "network", "disk": "storage",
          "cache": "storage"}


@dataclass
class CapturedJob:
    app_id: str
    lines: list[str]
    topic_lines: list[str]
    text: Path
    topics: Path
    result: dict[str, int]  # topic -> words counted

    def lines_with(self, words: set[str]) -> list[str]:
        return sorted(line for line in self.lines if words & set(line.split()))

    def words_of(self, topic: str) -> set[str]:
        return {w for w, t in TOPICS.items() if t == topic}

    def topic_lines_of(self, topic: str) -> list[str]:
        return sorted(line for line in self.topic_lines if line.split(",")[1] == topic)


def input_lines(seed: int) -> tuple[list[str], list[str]]:
    """The job's input records for ``seed``: lines of words, and the word -> topic table's lines."""
    rng = random.Random(seed)
    lines = [" ".join(rng.choices(VOCABULARY, k=rng.randint(1, 6))) for _ in range(400)]
    return lines, [f"{w},{t}" for w, t in TOPICS.items()]


def write_inputs(folder: Path, seed: int = 3) -> tuple[list[str], list[str], Path, Path]:
    """The job's two input files under ``folder``; returns (lines, topic lines, text path, topics path)."""
    lines, topic_lines = input_lines(seed)
    folder.mkdir(parents=True, exist_ok=True)
    text = folder / "events.txt"
    text.write_text("".join(line + "\n" for line in lines))
    topics = folder / "topics.csv"
    topics.write_text("".join(line + "\n" for line in topic_lines))
    return lines, topic_lines, text, topics


def topic_totals(lines: list[str]) -> dict[str, int]:
    """The job's answer computed from its input lines: topic -> words counted."""
    expected: dict[str, int] = {}
    for line in lines:
        for word in line.split():
            if word in TOPICS:
                expected[TOPICS[word]] = expected.get(TOPICS[word], 0) + 1
    return expected


def lineage_of(topic: str, lines: list[str], topic_lines: list[str]) -> Counter[str]:
    """The oracle: the input lines an output topic comes from (lines with its words, and the topic
    lines of its words that occur)."""
    words = {w for w, t in TOPICS.items() if t == topic}
    found = Counter(line for line in lines if words & set(line.split()))
    seen = {w for line in lines for w in line.split()} & words
    found.update(line for line in topic_lines if line.split(",")[0] in seen)
    return found


def capture_word_topics(spark: Any, server_url: str | None, token: str | None, folder: Path,
                        seed: int = 3) -> CapturedJob:
    """Word count joined with a word -> topic table, summed per topic, collected: captured with a
    LineageContext, registered with the server at ``server_url`` (none: its agent's events go to
    ``events.jsonl`` in ``folder``, for ``register_events`` to send to a server later)."""
    import capture_agent
    from capture_agent import LineageContext

    lines, topic_lines, text, topics = write_inputs(folder, seed)
    sink = ({"server_url": server_url, "token": token, "spool_dir": str(folder / "spool")} if server_url
            else {"sink": "file", "file_sink_path": str(folder / EVENTS_FILE)})
    agent = capture_agent.enable(spark, **sink)
    try:
        lc = LineageContext(spark, store=str(folder / "store"))
        counts = lc.textFile(str(text), 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        table = lc.textFile(str(topics), 2).map(lambda line: tuple(line.split(",")))
        by_topic = counts.join(table, 2).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
        result = dict(by_topic.collect())
        agent.flush(30)
    finally:
        capture_agent.disable()
    assert result == topic_totals(lines)
    return CapturedJob(spark.sparkContext.applicationId, lines, topic_lines, text, topics, result)


OWN_APPLICATION = """
import json, sys
from pathlib import Path
from pyspark.sql import SparkSession
from tests.lineage_server.tracing.captured import capture_word_topics

server, token, runs = sys.argv[1] or None, sys.argv[2] or None, json.loads(sys.argv[3])
for folder, seed in runs:  # each run a SparkContext of its own (its own application id), on one JVM
    spark = (SparkSession.builder.master("local[2]").appName("lineage-tests-other")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        print(json.dumps({"app_id": capture_word_topics(spark, server, token, Path(folder), seed).app_id}))
    finally:
        spark.stop()
"""


def capture_in_own_application(server_url: str | None, token: str | None, folder: Path, seed: int) -> CapturedJob:
    """The same job with other data, captured by a PySpark driver of its own (another application id:
    the test session's SparkContext has one, and an application belongs to one team)."""
    (job,) = capture_runs_in_own_driver(server_url, token, [(folder, seed)])
    return job


def capture_runs_in_own_driver(server_url: str | None, token: str | None,
                               runs: list[tuple[Path, int]]) -> list[CapturedJob]:
    """Runs of the job (one application name) with the data of each seed, one after the other by one
    PySpark driver of their own: each run its own SparkContext, so its own application id. Without
    a server, each run's events are kept in its folder (``register_events``)."""
    done = subprocess.run([sys.executable, "-c", OWN_APPLICATION, server_url or "", token or "",
                           json.dumps([(str(folder), seed) for folder, seed in runs])],
                          cwd=ROOT, capture_output=True, text=True, timeout=240 * len(runs))
    assert done.returncode == 0, done.stderr[-4000:]
    app_ids = [json.loads(line)["app_id"] for line in done.stdout.strip().splitlines() if line.startswith("{")]
    assert len(app_ids) == len(runs) == len(set(app_ids)), done.stdout[-2000:]
    jobs = []
    for app_id, (folder, seed) in zip(app_ids, runs, strict=True):
        lines, topic_lines = input_lines(seed)
        jobs.append(CapturedJob(app_id, lines, topic_lines, folder / "events.txt", folder / "topics.csv",
                                topic_totals(lines)))
    return jobs


def register_events(server_url: str, token: str, job: CapturedJob | Path) -> None:
    """Sends the events a run's agent kept in its folder (a run captured without a server; a job's,
    or the folder itself) to the server's ingest API with ``token``, in order and in batches, as its
    agent would have: a run captured once registers again with each test's server and team."""
    from capture_agent.protocol import INGEST_PATH
    from capture_agent.transport import post_events

    folder = job if isinstance(job, Path) else job.text.parent
    lines = (folder / EVENTS_FILE).read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert events, f"no events kept in {folder}"
    for start in range(0, len(events), 200):
        sent = post_events(server_url.rstrip("/") + INGEST_PATH, token, events[start:start + 200], 30)
        assert sent.kind == "ok", (sent.status, sent.detail)


READER = """
import json, sys
from operator import add
import capture_agent
from capture_agent import LineageContext
from pyspark.sql import SparkSession, functions as F

server, token, store, saved, spool = sys.argv[1:6]
spark = (SparkSession.builder.master("local[2]").appName("lineage-tests-reader")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
agent = capture_agent.enable(spark, server_url=server, token=token, spool_dir=spool)
try:
    lc = LineageContext(spark, store=store)
    answer = {JOB}
    agent.flush(30)
    print(json.dumps({"app_id": spark.sparkContext.applicationId, **answer}))
finally:
    capture_agent.disable()
    spark.stop()
"""
# the reader of a text chain: word counts of the saved lines
CHAIN_READER = READER.replace("{JOB}", '{"counts": dict(lc.textFile(saved).flatMap(str.split)'
                                       '.map(lambda w: (w, 1)).reduceByKey(add).collect())}')
# the reader of a Parquet chain: totals per customer of the written orders
FRAME_CHAIN_READER = READER.replace("{JOB}", '{"totals": {r.customer_id: r.total for r in lc.read.parquet(saved)'
                                             '.groupBy("customer_id").agg(F.sum("amount").alias("total")).collect()}}')


def capture_chain(spark: Any, server_url: str, token: str, folder: Path, reader_token: str | None = None,
                  ) -> tuple[CapturedJob, str, dict[str, int]]:
    """Two applications chained by a text file: this session's keeps the lines holding a word of
    TOPICS and saves them; a driver of its own (another application, registered with
    ``reader_token``, default ``token``) counts the words of the saved files. Both capture into
    one lineage store. Returns the first job, the reader's app id and its counts."""
    import capture_agent
    from capture_agent import LineageContext

    lines, topic_lines, text, topics = write_inputs(folder)
    store, saved = str(folder / "store"), str(folder / "kept-lines")
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    try:
        lc = LineageContext(spark, store=store)
        lc.textFile(str(text), 3).filter(lambda line: any(w in TOPICS for w in line.split())).saveAsTextFile(saved)
        agent.flush(30)
    finally:
        capture_agent.disable()
    done = subprocess.run([sys.executable, "-c", CHAIN_READER, server_url, reader_token or token, store, saved,
                           str(folder / "reader-spool")], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    first = CapturedJob(spark.sparkContext.applicationId, lines, topic_lines, text, topics, {})
    return first, answer["app_id"], answer["counts"]


FRAME_ORDERS = [(i, f"c{i % 6}", float(i % 9)) for i in range(90)]


def capture_frame_chain(spark: Any, server_url: str, token: str,
                        folder: Path) -> tuple[str, str, str, dict[str, float]]:
    """Two applications chained by Parquet: this session's captured DataFrame keeps the orders over
    2 and writes them; a driver of its own reads them back captured and totals them per customer.
    Returns the writer's and the reader's app ids, the orders folder and the totals."""
    from pyspark.sql import functions as F

    import capture_agent
    from capture_agent import LineageContext

    orders, cleaned = str(folder / "orders"), str(folder / "cleaned")
    spark.createDataFrame(FRAME_ORDERS, "order_id long, customer_id string, amount double").repartition(2) \
        .write.parquet(orders)
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    try:
        lc = LineageContext(spark, store=str(folder / "store"))
        lc.read.parquet(orders).where(F.col("amount") > 2).repartition(3).write.parquet(cleaned)
        agent.flush(30)
    finally:
        capture_agent.disable()
    done = subprocess.run([sys.executable, "-c", FRAME_CHAIN_READER, server_url, token, str(folder / "store"),
                           cleaned, str(folder / "reader-spool")], cwd=ROOT, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return spark.sparkContext.applicationId, answer["app_id"], orders, answer["totals"]


TOTAL_ORDERS = [(i, f"c{i % 5}", float(i % 11)) for i in range(60)]
TOTAL_CUSTOMERS = [(f"c{i}", ["jp", "fr"][i % 2]) for i in range(5)]


def frame_totals(orders: list[tuple[Any, ...]], customers: list[tuple[str, str]]) -> dict[str, float]:
    """The oracle of ``capture_frame_totals``' job: per country (upper case), the amounts over 5."""
    country = dict(customers)
    out: dict[str, float] = {}
    for _, customer, amount in orders:
        if amount > 5 and customer in country:
            out[country[customer].upper()] = out.get(country[customer].upper(), 0.0) + amount
    return out


def capture_frame_totals(spark: Any, server_url: str, token: str, folder: Path,
                         unmodified: bool = False) -> tuple[str, list[Any]]:
    """A captured DataFrame job registered with the live server: orders (Parquet) over 5 joined
    with customers (local rows), the country upper-cased by a Python UDF, totals per country,
    collected. Returns the app id and the rows. ``unmodified``: the job as written for plain
    PySpark (``spark.read``, ``spark.createDataFrame``), captured by ``records=True``; else through
    an explicit LineageContext."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    import capture_agent
    from capture_agent import LineageContext
    from capture_agent.record.capture.implicit import disable_records

    orders_path = str(folder / "orders")
    spark.createDataFrame(TOTAL_ORDERS, "order_id long, customer_id string, amount double").repartition(2) \
        .write.parquet(orders_path)
    store = str(folder / "store")
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"),
                                 **({"records": True, "store": store} if unmodified else {}))
    try:
        reader: Any = spark if unmodified else LineageContext(spark, store=store)
        orders = reader.read.parquet(orders_path)
        customers = reader.createDataFrame(TOTAL_CUSTOMERS, "customer_id string, country string")
        loud = F.udf(lambda s: s.upper(), T.StringType())
        totals = orders.where(F.col("amount") > 5).join(customers, "customer_id") \
            .withColumn("country", loud("country")).groupBy("country").agg(F.sum("amount").alias("total"))
        result = totals.collect()
        agent.flush(30)
    finally:
        disable_records(spark)
        capture_agent.disable()
    return spark.sparkContext.applicationId, result


@contextmanager
def agent_capture(spark: Any, server_url: str, token: str, folder: Path) -> Iterator[Any]:
    """A LineageContext on ``spark`` storing under ``folder``, whose run the agent registers with the
    server (its events flushed when the block ends)."""
    import capture_agent
    from capture_agent import LineageContext

    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    try:
        yield LineageContext(spark, store=str(folder / "store"))
        agent.flush(30)
    finally:
        capture_agent.disable()


def input_point(app_id: str, kind: str = "-input-textFile") -> str:
    """The capture id of the application's input point whose id ends with ``kind``."""
    from lineage_server.catalog.models import CapturePoint

    return CapturePoint.objects.get(application__app_id=app_id, capture_id__contains=kind).capture_id


def ask_forward(client: Any, app_id: str, point: str, selection: dict[str, Any]) -> dict[str, Any]:
    """A forward trace from ``point`` asked through the API (recomputed), as its 202 body."""
    asked = client.post("/api/v1/traces/", {"application": app_id, "direction": "forward", "capture_point": point,
                                            "selection": selection, "recompute": True}, format="json")
    assert asked.status_code == 202, asked.json()
    return asked.json()
