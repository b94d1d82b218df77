"""A real PySpark job captured record by record and registered with the live server, and oracles
computed from its input files (which lines hold a word, which topics a word has)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from operator import add
from pathlib import Path
from typing import Any

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


def capture_word_topics(spark: Any, server_url: str, token: str, folder: Path, seed: int = 3) -> CapturedJob:
    """Word count joined with a word -> topic table, summed per topic, collected: captured with a
    LineageContext, registered with the server at ``server_url``."""
    import capture_agent
    from capture_agent import LineageContext

    rng = random.Random(seed)
    lines = [" ".join(rng.choices(VOCABULARY, k=rng.randint(1, 6))) for _ in range(400)]
    folder.mkdir(parents=True, exist_ok=True)
    text = folder / "events.txt"
    text.write_text("".join(line + "\n" for line in lines))
    topic_lines = [f"{w},{t}" for w, t in TOPICS.items()]
    topics = folder / "topics.csv"
    topics.write_text("".join(line + "\n" for line in topic_lines))
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    try:
        lc = LineageContext(spark, store=str(folder / "store"))
        counts = lc.textFile(str(text), 3).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        table = lc.textFile(str(topics), 2).map(lambda line: tuple(line.split(",")))
        by_topic = counts.join(table, 2).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)
        result = dict(by_topic.collect())
        agent.flush(30)
    finally:
        capture_agent.disable()
    expected: dict[str, int] = {}
    for line in lines:
        for word in line.split():
            if word in TOPICS:
                expected[TOPICS[word]] = expected.get(TOPICS[word], 0) + 1
    assert result == expected
    return CapturedJob(spark.sparkContext.applicationId, lines, topic_lines, text, topics, result)
