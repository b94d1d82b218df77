"""The example job `make run` runs: a word count joined with a word -> topic table, written out.

It shows both kinds of job the agent understands: RDD operations (textFile, flatMap, reduceByKey,
join, saveAsTextFile), captured record by record through a LineageContext (its lineage goes to
LINEAGE_STORE, default var/lineage), and DataFrame operations (read and write Parquet).

    LINEAGE_SERVER_URL=http://127.0.0.1:8000 LINEAGE_TOKEN=lat_... python examples/word_count_join.py
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
from operator import add
from pathlib import Path

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
import capture_agent

VOCABULARY = [f"w{i:03d}" for i in range(300)] + ["error", "warning", "timeout", "retry"]
TOPICS = {"error": "incident", "warning": "incident", "timeout": "network", "retry": "network"}


def write_inputs(folder: Path, lines: int = 20_000) -> tuple[Path, Path]:
    """Deterministic text with a skewed vocabulary, and a small word -> topic table."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    weights = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
    text = folder / "events.txt"
    with text.open("w") as out:
        for _ in range(lines):
            out.write(" ".join(rng.choices(VOCABULARY, weights, k=rng.randint(3, 12))) + "\n")
    topics = folder / "topics.csv"
    topics.write_text(
        "".join(f"{w},{t}\n" for w, t in TOPICS.items()) + "".join(f"w{i:03d},t{i % 7}\n" for i in range(0, 300, 3))
    )
    return text, topics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="var/example", help="folder for the generated inputs and the outputs")
    args = parser.parse_args()
    folder = Path(args.out).resolve()
    text, topics_csv = write_inputs(folder / "input")
    for output in ("counts_by_topic", "topic_totals.parquet"):
        shutil.rmtree(folder / output, ignore_errors=True)

    spark = (
        SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[*]"))
        .appName("word-count-join")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    capture_agent.enable(spark)
    sc = spark.sparkContext
    lc = capture_agent.LineageContext(spark)  # record-level lineage of the RDD part

    counts = lc.textFile(str(text)).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    topics = lc.textFile(str(topics_csv)).map(lambda line: (line.split(",", 1)[0], line.split(",", 1)[1]))
    by_topic = counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
    by_topic.map(lambda kv: f"{kv[0]}\t{kv[1]}").saveAsTextFile(str(folder / "counts_by_topic"))

    totals = spark.createDataFrame(by_topic.collect(), ["topic", "words"])
    totals.write.parquet(str(folder / "topic_totals.parquet"))
    top = spark.read.parquet(str(folder / "topic_totals.parquet")).orderBy("words", ascending=False).limit(3).collect()

    app_id = sc.applicationId
    spark.stop()
    print("Top topics:", ", ".join(f"{row.topic}={row.words}" for row in top))
    server = os.environ.get("LINEAGE_SERVER_URL", "http://127.0.0.1:8000").rstrip("/")
    print(f"Lineage of this run: {server}/applications/{app_id}/")
    print(f"Application id: {app_id}")


if __name__ == "__main__":
    main()
