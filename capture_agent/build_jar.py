"""Builds capture_agent/_jars/lineage-listener.jar from capture_agent/java with javac.

Run ``python -m capture_agent.build_jar`` (what ``make`` should call); ``enable()`` also builds
the jar on the fly when it is missing or older than its sources and javac is on the PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
JAVA_DIR = PACKAGE_DIR / "java"
DEFAULT_JAR = PACKAGE_DIR / "_jars" / "lineage-listener.jar"


class JarBuildError(RuntimeError):
    """javac is missing or failed."""


def pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def java_sources() -> list[Path]:
    return sorted(JAVA_DIR.rglob("*.java"))


def jar_is_stale(jar: Path) -> bool:
    """True when the jar is missing or older than one of its sources."""
    if not jar.exists():
        return True
    built = jar.stat().st_mtime
    return any(source.stat().st_mtime > built for source in java_sources())


def find_javac() -> str | None:
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "javac"
        javac = str(candidate) if candidate.exists() else None
    return javac


def build_jar(target: Path = DEFAULT_JAR) -> Path:
    """Compiles the listener against PySpark's own jars and writes the jar atomically.

    Args:
        target: where to write the jar.

    Returns:
        The jar's path.
    """
    javac = find_javac()
    if javac is None:
        raise JarBuildError("javac not found (install a JDK 17+ or set JAVA_HOME)")
    classpath = str(pyspark_jars_dir() / "*")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lineage-jar-") as classes:
        command = [javac, "--release", "17", "-nowarn", "-encoding", "UTF-8",
                   "-cp", classpath, "-d", classes, *map(str, java_sources())]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise JarBuildError(f"javac failed:\n{done.stderr[-4000:]}")
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(Path(classes).rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        # Another process may be building the same jar; the last complete one wins.
        os.replace(temporary, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_JAR)
    parser.add_argument("--if-stale", action="store_true", help="skip when the jar is up to date")
    args = parser.parse_args(argv)
    if args.if_stale and not jar_is_stale(args.output):
        print(f"{args.output} is up to date")
        return 0
    try:
        path = build_jar(args.output)
    except (JarBuildError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
