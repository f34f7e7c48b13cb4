"""The README's tour runs as written, every block in order, on `hmsproxy dev up --demo`.

`dev up --demo` runs as a subprocess on the port the README names (9083), with its state in a
temp dir. Shell blocks run in bash with the virtualenv's `bin` first on PATH; Python blocks are
pasted line by line into one Python REPL kept open from the first to the last
(tests/support/python_session.py), as a reader does. The only change made to a block is the `fed1` metastore's
URI, which the tour writes as README_FED1_URI and `dev up` prints. The tour is run twice in the
one session, as a reader who goes through it again does (every block must be re-runnable). A second
`dev up` on the same state is test_dev_up_restart.py's: it keeps the ports, a remote and the demo data.

Every fenced block of the tour must be one this test runs (`sh` or `python`) or carry the
marker NOT_RUN on the line before it: a block added in another language fails the test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.dev.demo import ROWS
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop
from tests.support.python_session import DONE_MARK

REPO_ROOT = Path(__file__).resolve().parents[2]
TOUR_HEADING = "## A tour"
README_PORT = 9083
README_FED1_URI = "thrift://127.0.0.1:9085"
NOT_RUN = "<!-- not run by test_readme_examples.py -->"
RUNNERS = ("sh", "python")
READY = "Ctrl-C stops"


@dataclass(frozen=True)
class Block:
    number: int
    lang: str
    code: str
    line: int
    marked_not_run: bool

    @property
    def name(self) -> str:
        return f"README.md block {self.number} (line {self.line}, {self.lang})"


def tour_blocks(readme: str) -> list[Block]:
    """Every fenced block between the tour's heading and the next `## ` heading, in order."""
    start = readme.index(f"\n{TOUR_HEADING}\n")
    end = readme.find("\n## ", start + 1)
    section = readme[start : end if end != -1 else len(readme)]
    first_line = readme[:start].count("\n") + 1
    blocks = []
    for m in re.finditer(r"^```([\w-]*)\n(.*?)^```\s*$", section, re.S | re.M):
        before = section[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = first_line + section[: m.start()].count("\n")
        blocks.append(Block(len(blocks) + 1, m.group(1), m.group(2), line, before.strip() == NOT_RUN))
    return blocks


def runnable(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if not b.marked_not_run]


def test_every_tour_block_is_run_or_marked():
    blocks = tour_blocks((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert {b.lang for b in runnable(blocks)} == set(RUNNERS), "the tour should have shell and Python blocks"
    unknown = [b.name for b in runnable(blocks) if b.lang not in RUNNERS]
    assert not unknown, f"blocks this test can't run; tag them sh or python, or put {NOT_RUN!r} before them: {unknown}"


def test_tour_blocks_are_found_with_their_markers():
    readme = (
        "intro\n## A tour\ntext\n```sh\necho a\n```\n" + NOT_RUN + "\n```text\nout\n```\n```python\nx = 1\n```\n## Next\n```sh\nno\n```\n"
    )
    blocks = tour_blocks(readme)
    assert [(b.lang, b.code, b.marked_not_run) for b in blocks] == [
        ("sh", "echo a\n", False),
        ("text", "out\n", True),
        ("python", "x = 1\n", False),
    ]
    assert blocks[0].line == 4


def test_python_blocks_run_as_pasted_into_the_repl(tmp_path):
    session = PythonSession(tmp_path, tmp_path / "session.log")
    try:
        assert session.run("a", "x = 2\nif x:\n    y = 3\n\nx * y\n") == "6\n"  # values echoed, as in the REPL
        with pytest.raises(AssertionError, match="SyntaxError"):
            session.run("b", "if x:\n    y = 4\nprint(y)\n")  # no blank line after the block: the REPL refuses it
        with pytest.raises(AssertionError, match="ZeroDivisionError"):
            session.run("c", "1 / 0\nprint('not reached')\n")
        assert session.run("d", "with open(__import__('os').devnull) as f:\n    z = y") == ""
        assert session.run("e", "print(z)") == "3\n"  # one namespace from block to block
    finally:
        session.close()


class PythonSession:
    """The tour's one Python session, in a subprocess: one process can hold only one SparkSession."""

    def __init__(self, cwd: Path, log: Path, env: dict[str, str] | None = None):
        self._stderr = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(REPO_ROOT / "tests/support/python_session.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            cwd=cwd,
            env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO_ROOT)},
            start_new_session=True,
        )
        self.log = log

    def run(self, name: str, code: str) -> str:
        self.proc.stdin.write(json.dumps({"name": name, "code": code}) + "\n")
        self.proc.stdin.flush()
        printed = []
        for line in self.proc.stdout:  # the session answers every block: no line-read can hang past it
            if line.startswith(DONE_MARK):
                answer = json.loads(line[len(DONE_MARK) :])
                assert answer["ok"], f"{name} failed:\n{answer['error']}\nprinted:\n{''.join(printed)[-3000:]}"
                return "".join(printed)
            printed.append(line)
        raise AssertionError(f"the Python session ended during {name}; its log:\n{self.log.read_text(errors='replace')[-6000:]}")

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


def run_shell(block: Block, code: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, **(env or {}), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    assert proc.returncode == 0, (
        f"{block.name} exited {proc.returncode}:\n{code}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    )
    return proc.stdout


def run_tour(
    blocks: list[Block], fed1_uri: str, cwd: Path, log: Path, env: dict[str, str] | None = None, passes: int = 1
) -> list[dict[int, str]]:
    """Run every runnable block in order `passes` times in one Python session, with `env` added to
    the environment (what dev up said to export); for each pass, the output of each block by number
    and TOUR_CHECKS' as 0."""
    session = PythonSession(cwd, log, env)
    runs = []
    try:
        for n in range(1, passes + 1):
            printed = {}
            for block in runnable(blocks):
                code = block.code.replace(README_FED1_URI, fed1_uri)
                began = time.monotonic()
                printed[block.number] = (
                    run_shell(block, code, cwd, env) if block.lang == "sh" else session.run(f"{block.name}, pass {n}", code)
                )
                print(f"{block.name}, pass {n}: {time.monotonic() - began:.0f}s", flush=True)  # where a slow tour spends its time (-s)
            printed[0] = session.run(f"checks, pass {n}", TOUR_CHECKS)
            assert sorted(printed) == [0] + [b.number for b in runnable(blocks)]
            runs.append(printed)
    finally:
        session.close()
    return runs


#: Run in the tour's Python session after its last block: what the tour made, checked.
TOUR_CHECKS = """
import json
from hmsproxy.clients.spark import lookup as _lookup, read as _read
_facts = {
    "orders": [list(r) for r in spark.sql("SELECT * FROM shop.orders ORDER BY order_id").collect()],
    "published": [r[0] for r in spark.sql("SELECT DISTINCT ds FROM shop.events_published ORDER BY ds").collect()],
    "lookup": _lookup(spark, "shop.events", user_id=42).count(),
    "scan": spark.table("shop.events").where("user_id = 42").count(),
    "read_us": _read(spark, "shop.events", ds="2026-11-01", country="US").count(),
    "scan_us": spark.table("shop.events").where("ds = '2026-11-01' AND country = 'US'").count(),
    "rows": spark.table("shop.events").count(),
}
print("FACTS " + json.dumps(_facts))
"""


def facts(printed: str) -> dict:
    [line] = [x for x in printed.splitlines() if x.startswith("FACTS ")]
    return json.loads(line[len("FACTS ") :])


def wait_for_output(proc: subprocess.Popen, log: Path, needle: str, timeout_s: float) -> str:
    """Poll the process's log file until it contains `needle`; fail early if the process exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = log.read_text(errors="replace")
        if needle in out:
            return out
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} not printed within {timeout_s}s; output:\n{log.read_text(errors='replace')[-5000:]}")


def dev_up(state: Path, log: Path, *options: str) -> subprocess.Popen:
    with socket.socket() as probe:  # the tour names the proxy's port: it must be this one
        if probe.connect_ex(("127.0.0.1", README_PORT)) == 0:
            pytest.fail(f"port {README_PORT} is in use (a `make up` running?): the README tour needs it")
    # Its own pid file: the default, .state/hmsproxy.pid in the repository, would make every `hmsproxy
    # serve` the main pass starts meanwhile refuse to start (make test runs the tours beside it).
    where = ["--pid-file", str(pid_file_of(state))]
    # Output goes to a file, not a pipe nobody drains, so the proxy can never block on its log.
    with open(log, "w") as out:
        return subprocess.Popen(
            [*HMSPROXY, "dev", "up", "--demo", "--port", str(README_PORT), "--state-dir", str(state), *where, *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO_ROOT,
            start_new_session=True,
        )


def pid_file_of(state: Path) -> Path:
    return state.parent / f"{state.name}.pid"


def pid_in_own_file(state: Path) -> int:
    """The pid in the tour's own pid file (dev_up), which the proxy writes once it serves."""
    return int(pid_file_of(state).read_text().strip())


def fed1_uri(dev_up_output: str) -> str:
    [uri] = re.findall(r"^hms1: ready at (thrift://\S+)", dev_up_output, re.M)
    return uri


def exported(dev_up_output: str) -> dict[str, str]:
    """The variables dev up's usage says to export (`  export A=x B=y`)."""
    [line] = re.findall(r"^  export (.+)$", dev_up_output, re.M)
    return dict(pair.split("=", 1) for pair in line.split())


def check_facts(found: dict) -> None:
    assert found["orders"] == [list(r) for r in ROWS]  # the remote table reads fed1's sales.orders
    assert found["published"] == ["2026-11-01", "2026-11-02"]  # the ALLOW EMPTY day has no rows
    assert found["lookup"] == found["scan"] > 0
    assert found["read_us"] == found["scan_us"] > 0
    assert found["rows"] == 30000  # loaded once, compacted, laid out: never lost or doubled


@pytest.mark.spark
def test_readme_tour_runs_on_dev_up_demo(tmp_path):
    blocks = tour_blocks((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    state, cwd = tmp_path / "state", tmp_path / "reader"
    cwd.mkdir()  # the reader's working directory: the tour's relative paths (Spark's warehouse) land here

    started = time.monotonic()
    first = dev_up(state, tmp_path / "first.log")
    try:
        out = wait_for_output(first, tmp_path / "first.log", READY, 240)
        assert "demo data fed1_sales.orders on hms1: created database sales; created table sales.orders; wrote 3 rows" in out
        assert pid_in_own_file(state) == first.pid
        up_s = time.monotonic() - started
        printed, printed_again = run_tour(blocks, fed1_uri(out), cwd, tmp_path / "python.log", passes=2)  # every block re-runnable
        print(f"\nREADME tour: dev up ready after {up_s:.0f}s, both passes done {time.monotonic() - started:.0f}s after dev up started")

        for found in (facts(printed[0]), facts(printed_again[0])):
            check_facts(found)
        shown = "".join(printed.values())
        assert "fed1_sales" in shown and "alice" in shown  # SHOW DATABASES and the demo orders, as printed

        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", README_PORT, timeout=30000)
        try:
            names = client.get_all_databases()
            assert "shop" in names and "fed1_shop" not in names  # CREATE DATABASE shop went to the primary
        finally:
            client.close()
    finally:
        assert stop(first, signal.SIGINT, timeout_s=90) == 0
    # Every metastore JVM dev up started is gone with it.
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""


@pytest.mark.spark
def test_readme_tour_runs_on_dev_up_storage_s3(tmp_path):
    """The same tour, once, on `dev up --demo --storage s3`: the warehouses, Spark's among them,
    on the s3proxy dev up starts, reached with only what dev up says to export."""
    from hmsproxy.dev import maven, storage_jars
    from tests.support.required import unavailable

    try:
        storage_jars.require_fetched("s3")
    except maven.FetchError as exc:
        unavailable(str(exc))
    blocks = tour_blocks((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    state, cwd = tmp_path / "state", tmp_path / "reader"
    cwd.mkdir()
    started = time.monotonic()
    up = dev_up(state, tmp_path / "up.log", "--storage", "s3")
    try:
        out = wait_for_output(up, tmp_path / "up.log", READY, 240)
        assert "wrote 3 rows to s3a://warehouse/hms1/warehouse/sales.db/orders/part-00000" in out
        assert pid_in_own_file(state) == up.pid
        env = exported(out)
        assert env == {"HADOOP_CONF_DIR": str(state / "hadoop-conf"), "SPARK_CONF_DIR": str(state / "spark-conf")}
        [printed] = run_tour(blocks, fed1_uri(out), cwd, tmp_path / "python.log", env)
        print(f"\nREADME tour on S3: done {time.monotonic() - started:.0f}s after dev up started")
        check_facts(facts(printed[0]))
        # The tables are on S3, Spark's shop database too: nothing of the tour on the local disk.
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", README_PORT, timeout=30000)
        try:
            assert client.get_table("shop", "events").sd.location.startswith("s3a://warehouse/")
        finally:
            client.close()
        assert not (cwd / ".state").exists()
    finally:
        assert stop(up, signal.SIGINT, timeout_s=90) == 0
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""  # the metastores and s3proxy are gone with dev up
