"""The jars holding each Hive version's generated Thrift classes, and the contract dump read from them.

Hive 2.3 comes from pyspark's wheel. Hive 3.1 and 4.0 come from Maven Central, only
the jar with `org.apache.hadoop.hive.metastore.api.*` plus the libthrift and libfb303
that release was built with (not the metastore's whole dependency tree), cached under
~/.cache/hmsproxy/contract/<hive version>/ (or $HMSPROXY_CONTRACT_CACHE/<hive version>/).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

JAVA_SRC = Path(__file__).parent / "java" / "ContractDump.java"
HIVE_API_PACKAGE = "org.apache.hadoop.hive.metastore.api."
FB303_PACKAGE = "com.facebook.fb303."


class JarsUnavailable(Exception):
    """The jars could not be had (no Maven, no network, no pyspark)."""


class DumpFailed(Exception):
    """javac/java are missing or ContractDump failed on jars we do have."""


@dataclass(frozen=True)
class HiveRelease:
    """One Hive release's Thrift contract on Maven Central."""

    hive_version: str
    #: The artifact holding ThriftHiveMetastore and the api structs (3.1: the standalone
    #: metastore itself; 4.x moved them to hive-standalone-metastore-common).
    api_artifact: str
    libthrift: str  # the libthrift version the release's pom asks for
    libfb303: str

    @property
    def artifacts(self) -> tuple[str, ...]:
        return (
            f"org.apache.hive:{self.api_artifact}:{self.hive_version}",
            f"org.apache.thrift:libthrift:{self.libthrift}",
            f"org.apache.thrift:libfb303:{self.libfb303}",
        )


#: The versions the contract diff covers, by the short name used in keys ("4.0:Table.17:catName:added").
#: The same releases hmsproxy.dev runs as local metastores.
RELEASES = {
    "3.1": HiveRelease("3.1.3", "hive-standalone-metastore", libthrift="0.9.3", libfb303="0.9.3"),
    "4.0": HiveRelease("4.0.1", "hive-standalone-metastore-common", libthrift="0.16.0", libfb303="0.9.3"),
}


@dataclass(frozen=True)
class ContractJars:
    """What ContractDump needs: the jar to dump, the fb303 jar, and a classpath that loads them."""

    label: str  # "Hive 3.1.3"
    hive_jar: Path
    fb303_jar: Path
    classpath: tuple[Path, ...]  # jars or directories

    @property
    def names(self) -> str:
        return f"{self.hive_jar.name} + {self.fb303_jar.name}"


def cache_root() -> Path:
    override = os.environ.get("HMSPROXY_CONTRACT_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "hmsproxy" / "contract"


def _jar_name(artifact: str) -> str:
    _, artifact_id, version = artifact.split(":")
    return f"{artifact_id}-{version}.jar"


def maven_jars(short_version: str) -> ContractJars:
    """The release's jars, downloaded once into the cache (raises JarsUnavailable)."""
    release = RELEASES[short_version]
    target = cache_root() / release.hive_version
    names = [_jar_name(a) for a in release.artifacts]
    if not all((target / n).is_file() for n in names):
        _download(release.artifacts, target)
    hive, libthrift, fb303 = (target / n for n in names)
    return ContractJars(f"Hive {release.hive_version}", hive, fb303, (hive, libthrift, fb303))


def _download(artifacts: tuple[str, ...], target: Path) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsUnavailable("`mvn` is not on PATH")
    target.mkdir(parents=True, exist_ok=True)
    # Into a scratch directory first, so an interrupted download never looks complete.
    with tempfile.TemporaryDirectory(dir=target) as scratch:
        for artifact in artifacts:
            cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={scratch}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
                raise JarsUnavailable(f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{tail}")
        for jar in Path(scratch).glob("*.jar"):
            jar.replace(target / jar.name)


def pyspark_jars() -> ContractJars:
    """Hive 2.3 as pyspark's wheel ships it (raises JarsUnavailable)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise JarsUnavailable("pyspark is not installed: its jars/ directory holds the Hive metastore jar we check against")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not jars.is_dir():
        raise JarsUnavailable(f"{jars} does not exist")
    hive, fb303 = _one_jar(jars, "hive-metastore-*.jar"), _one_jar(jars, "libfb303-*.jar")
    return ContractJars(f"Hive {hive.stem.removeprefix('hive-metastore-')}", hive, fb303, (jars,))


def _one_jar(jars: Path, pattern: str) -> Path:
    found = sorted(jars.glob(pattern))
    if len(found) != 1:
        raise JarsUnavailable(f"expected exactly one {pattern} in {jars}, found {[p.name for p in found]}")
    return found[0]


def java_tool(name: str) -> str:
    found = shutil.which(name)
    if not found and os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / name
        found = str(candidate) if candidate.exists() else None
    if not found:
        raise DumpFailed(f"`{name}` not found on PATH (nor in $JAVA_HOME/bin): the IDL contract test needs a JDK")
    return found


def _classpath(entries: tuple[Path, ...]) -> str:
    # A directory stands for every jar in it (pyspark's jars/).
    return os.pathsep.join(f"{p}{os.sep}*" if p.is_dir() else str(p) for p in entries)


def dump(jars: ContractJars, workdir: Path) -> list[str]:
    """ContractDump's JSON lines for the Hive api package and fb303 (raises DumpFailed)."""
    javac, java = java_tool("javac"), java_tool("java")
    classpath = _classpath(jars.classpath)

    def run(cmd: list[str]) -> str:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise DumpFailed(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        return proc.stdout

    # Compiled against the libthrift the dump then runs with (0.9.3 for Hive 3.1, 0.16 otherwise).
    run([javac, "-nowarn", "-d", str(workdir), "-cp", classpath, str(JAVA_SRC)])
    run_cp = f"{workdir}{os.pathsep}{classpath}"
    out = run([java, "-cp", run_cp, "ContractDump", str(jars.hive_jar), HIVE_API_PACKAGE])
    out += run([java, "-cp", run_cp, "ContractDump", str(jars.fb303_jar), FB303_PACKAGE])
    return [line for line in out.splitlines() if line.strip()]
