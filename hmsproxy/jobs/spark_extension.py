"""hmsproxy's Spark session extension (spark-extension/, Java): plain Spark SQL reads only the files
a fresh compact index names (docs/indexes.md#plain-spark-sql-the-spark-extension).

    from hmsproxy.clients.spark import with_index_extension
    spark = with_index_extension(SparkSession.builder).enableHiveSupport().getOrCreate()

One jar per Spark line (major.minor): Catalyst's internals change between lines, so each is built
against the jars that line's pyspark ships (`build`, run by `make install`), and a jar loaded by a
Spark line it was not built for warns once and leaves every plan alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

EXTENSION_CLASS = "io.hmsproxy.spark.HmsProxyExtensions"
#: The switch: 'false' leaves every plan as Spark makes it (per session, at any time).
ENABLED_CONF = "spark.hmsproxy.index.enabled"
#: A table property: 'false' keeps the extension off that table.
TABLE_SWITCH = "hmsproxy.index.spark"
#: Where built jars go (package data), and where a deployment may point instead.
JAR_DIR = Path(__file__).resolve().parent.parent / "jars"
JAR_ENV = "HMSPROXY_SPARK_EXTENSION_JAR"
SOURCES = Path(__file__).resolve().parents[2] / "spark-extension"


def spark_line(version: str) -> str:
    """'4.0' of '4.0.5'."""
    return ".".join(version.split(".")[:2])


def jar_name(line: str) -> str:
    return f"hmsproxy-spark-extension_spark-{line}.jar"


def index_extension_jar(spark_version: str | None = None) -> Path:
    """The extension's jar for this Spark line (pyspark's by default); FileNotFoundError says how to build it."""
    override = os.environ.get(JAR_ENV)
    if override:
        return Path(override)
    line = spark_line(spark_version or _pyspark_version())
    jar = JAR_DIR / jar_name(line)
    if not jar.is_file():
        raise FileNotFoundError(
            f"no hmsproxy Spark extension built for Spark {line} ({jar}): run `make install` (needs mvn) or set {JAR_ENV}"
        )
    return jar


def index_extension_conf(spark_version: str | None = None, jars: str = "", extensions: str = "") -> dict[str, str]:
    """spark.jars and spark.sql.extensions with the extension added to what they already list
    (for spark-submit --conf, or a builder)."""
    jar = str(index_extension_jar(spark_version))
    return {"spark.jars": _add(jars, jar), "spark.sql.extensions": _add(extensions, EXTENSION_CLASS)}


def with_index_extension(builder, spark_version: str | None = None):
    """The SparkSession builder with the extension's jar and class added (before getOrCreate).

    A builder's setting replaces the same key of spark-defaults.conf and of spark-submit's options
    (S3A's jars are listed there by `dev up --storage s3`): so what they list is kept in the
    builder's value, beside what the builder itself listed."""
    options = getattr(builder, "_options", {})
    jars, extensions = (options.get(key) or listed_without_builder(key) for key in ("spark.jars", "spark.sql.extensions"))
    for key, value in index_extension_conf(spark_version, jars, extensions).items():
        builder = builder.config(key, value)
    return builder


def listed_without_builder(key: str) -> str:
    """What Spark would take for `key` from elsewhere than the builder: under spark-submit, its JVM's
    settings (its --jars, --conf and properties file); otherwise spark-defaults.conf in SPARK_CONF_DIR
    (or SPARK_HOME/conf, pyspark's own by default), which the JVM pyspark starts reads."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):  # spark-submit started the JVM: ask it
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()  # joins spark-submit's gateway; starts no context
        return SparkConf().get(key, "") or ""
    return spark_defaults().get(key, "")


def spark_defaults() -> dict[str, str]:
    """spark-defaults.conf as spark-submit finds it (Java properties: `key value`, `key=value`, `key: value`)."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if not conf_dir:
        home = os.environ.get("SPARK_HOME")
        conf_dir = str(Path(home) / "conf") if home else str(Path(_pyspark_dir()) / "conf")
    path = Path(conf_dir) / "spark-defaults.conf"
    if not path.is_file():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        match = re.match(r"([^\s=:]+)\s*[\s=:]\s*(.*)", line) if line and not line.startswith(("#", "!")) else None
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def _add(listed: str, item: str) -> str:
    items = [i for i in listed.split(",") if i.strip()]
    return ",".join(items if item in items else [*items, item])


def _pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def _pyspark_dir() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def build(pyspark_jars: Path | None = None, out_dir: Path = JAR_DIR) -> Path:
    """Compile the extension with Maven against this interpreter's pyspark jars; the jar's path.
    RuntimeError (one line) when Maven is missing or the build fails."""
    import pyspark

    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("mvn is not installed: the Spark extension is not built (plain Spark SQL will not use indexes)")
    jars = pyspark_jars or Path(pyspark.__file__).parent / "jars"
    line = spark_line(pyspark.__version__)
    target = out_dir / jar_name(line)
    build_dir = SOURCES / "target" / f"spark-{line}"
    command = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(SOURCES / "pom.xml"),
        f"-Dspark.jars={jars}",
        f"-Dspark.line={line}",
        f"-Dbuild.dir={build_dir}",
        "package",
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).strip().splitlines()
        said = next((x for x in lines if "error:" in x), lines[-1] if lines else "no output")  # javac's first error
        raise RuntimeError(f"the Spark extension did not build for Spark {line}: {said.strip()}")
    out_dir.mkdir(parents=True, exist_ok=True)
    # Copied beside the target then renamed over it: a JVM running with the old jar (a bench, a
    # test session) keeps reading the file it opened instead of a jar rewritten under it.
    staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(build_dir / "hmsproxy-spark-extension.jar", staged)
        os.replace(staged, target)
    finally:
        staged.unlink(missing_ok=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """`python -m hmsproxy.jobs.spark_extension`: build the jar for this venv's pyspark."""
    try:
        print(build(), file=sys.stderr)
    except RuntimeError as e:
        print(f"warning: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
