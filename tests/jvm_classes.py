"""A class-data-sharing archive of the classes a Spark JVM loads, for the JVMs the tests start.

The suite starts dozens of JVMs (each pytest process's Spark session, Celery workers, PySpark
drivers, spark-submit); each would parse and verify the same few thousand classes of Spark's jars.
With ``-XX:SharedArchiveFile`` they map them from one archive instead (a small job's JVM: 10.5 ->
7 CPU s with the short-lived JVMs' options, 19 -> 12 CPU s with the defaults). The archive is made
once per checkout (``var/test-jvm/``, named after the JDK and the jars it was made from), in the
background, by a small PySpark job run with ``-XX:ArchiveClassesAtExit``: the JVMs started before it
is there (or when it cannot be made) run as before, silently.

    python -m tests.jvm_classes ARCHIVE      # makes ARCHIVE (what archive_options starts)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The JVM's unified-logging warnings go to stdout by default: to stderr instead, so that a JVM that
# cannot map the archive does not change what a job prints.
QUIET = "-Xlog:disable -Xlog:all=warning:stderr"
JOB = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
frame = spark.range(100).selectExpr("id % 7 as k", "id").groupBy("k").count()
assert frame.join(spark.range(7).withColumnRenamed("id", "k"), "k").count() == 7
spark.createDataFrame([(1, "a")], "n long, s string").write.parquet(sys.argv[1])
assert spark.read.parquet(sys.argv[1]).count() == 1
assert spark.sparkContext.parallelize(range(100), 2).map(lambda x: (x % 3, x)).reduceByKey(max).count() == 3
spark.stop()
"""


def _key() -> str | None:
    """What the archive depends on: the JDK and the jars on Spark's class path."""
    try:
        import pyspark
    except ImportError:
        return None
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java:
        return None
    java = os.path.realpath(java)
    jars = Path(pyspark.__file__).parent / "jars"
    made_of = [java, str(os.stat(java).st_mtime), str(jars), *sorted(os.listdir(jars))]
    return hashlib.sha256("\n".join(made_of).encode()).hexdigest()[:16]


def archive_options() -> str:
    """JVM options that map the archive, its making started if it is neither there nor being made;
    "" without Java or PySpark."""
    key = _key()
    if key is None:
        return ""
    folder = ROOT / "var" / "test-jvm"
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"spark-{key}.jsa"
    if not archive.exists() and not archive.with_suffix(".failed").exists():
        _start_making(archive)
    return f"-XX:SharedArchiveFile={archive} {QUIET}"


def _start_making(archive: Path) -> None:
    making = archive.with_suffix(".making")  # the maker's pid: one maker at a time
    try:
        fd = os.open(making, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        try:
            os.kill(int(making.read_text() or 0), 0)
            return  # being made
        except (OSError, ValueError):
            making.unlink(missing_ok=True)  # its maker died: make it again
            return _start_making(archive)
    log = open(archive.with_suffix(".log"), "wb")
    maker = subprocess.Popen([sys.executable, "-m", "tests.jvm_classes", str(archive)], cwd=ROOT, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    os.write(fd, str(maker.pid).encode())
    os.close(fd)


def make(archive: Path) -> None:
    partial = archive.with_suffix(".partial")
    out = archive.with_suffix(".parquet")
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "SPARK_SUBMIT_OPTS": f"-XX:ArchiveClassesAtExit={partial} {QUIET}"}
    # Both pipes are held by the JVM too: the run ends once the JVM has written the archive and exited.
    done = subprocess.run([sys.executable, "-c", JOB, str(out)], env=env, capture_output=True, text=True)
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode == 0 and partial.exists():
        partial.rename(archive)
    else:  # the JVMs run without it; not tried again until the JDK or the jars change
        archive.with_suffix(".failed").write_text(done.stderr[-5000:])
    archive.with_suffix(".making").unlink(missing_ok=True)


if __name__ == "__main__":
    make(Path(sys.argv[1]))
