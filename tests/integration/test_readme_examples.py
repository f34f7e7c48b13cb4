"""The README's examples run as written: `hmsproxy dev up --demo`, then its Spark block.

`dev up --demo` runs as a subprocess on free ports with its state in a temp dir
(twice: a second start on the same state must keep working), and the README's
Python block runs unchanged but for the port in a Python subprocess of its own,
since a process can hold only one SparkSession.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import thriftpy2.rpc

from hmsproxy.dev.demo import ROWS
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.integration.test_cli import HMSPROXY, stop

REPO_ROOT = Path(__file__).resolve().parents[2]
README_URI = "thrift://127.0.0.1:9083"
READY = "Ctrl-C stops"


def readme_spark_example() -> str:
    """The one Python block of the README's "The two commands" section."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section should have exactly one Python example"
    return blocks[0]


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


def dev_up(state: Path, port: int, log: Path) -> subprocess.Popen:
    # Output goes to a file, not a pipe nobody drains, so the proxy can never block on its log.
    with open(log, "w") as out:
        return subprocess.Popen(
            [*HMSPROXY, "dev", "up", "--demo", "--port", str(port), "--state-dir", str(state)],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=REPO_ROOT,
            start_new_session=True,
        )


def run_example(port: int, cwd: Path) -> tuple[dict, str]:
    example = readme_spark_example()
    assert example.count(README_URI) == 1
    checks = (
        "\nimport json\n"
        "dbs = [r[0] for r in spark.sql('SHOW DATABASES').collect()]\n"
        "rows = [list(r) for r in spark.sql('SELECT * FROM fed1_sales.orders ORDER BY order_id').collect()]\n"
        "print('RESULT ' + json.dumps({'dbs': dbs, 'rows': rows}), flush=True)\n"
        "spark.stop()\n"
    )
    cwd.mkdir()  # Spark's default warehouse (CREATE DATABASE shop) lands here
    proc = subprocess.run(
        [sys.executable, "-c", example.replace(README_URI, f"thrift://127.0.0.1:{port}") + checks],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and results, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-6000:]}"
    return json.loads(results[-1][len("RESULT ") :]), proc.stdout


@pytest.mark.spark
def test_readme_spark_example_runs_against_dev_up_demo(tmp_path):
    state, port = tmp_path / "state", free_port()

    # First start: creates the demo data.
    first = dev_up(state, port, tmp_path / "first.log")
    try:
        out = wait_for_output(first, tmp_path / "first.log", READY, 240)
        assert "demo data fed1_sales.orders on hms1: created database sales; created table sales.orders; wrote 3 rows" in out
    finally:
        assert stop(first, signal.SIGINT, timeout_s=90) == 0

    # Second start on the same state: the demo data is already there, nothing fails.
    second = dev_up(state, port, tmp_path / "second.log")
    try:
        out = wait_for_output(second, tmp_path / "second.log", READY, 240)
        assert "demo data fed1_sales.orders on hms1: already there" in out
        assert f"spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:{port}" in out

        result, printed = run_example(port, tmp_path / "client")
        assert {"default", "fed1_default", "fed1_sales", "shop"} <= set(result["dbs"])
        assert result["rows"] == [list(row) for row in ROWS]
        assert "alice" in printed and "fed1_sales" in printed  # the example's own .show() output

        # CREATE DATABASE shop went to the primary metastore, not to fed1.
        client = thriftpy2.rpc.make_client(idl.HmsProxy, "127.0.0.1", port, timeout=30000)
        try:
            names = client.get_all_databases()
            assert "shop" in names and "fed1_shop" not in names
        finally:
            client.close()
    finally:
        assert stop(second, signal.SIGINT, timeout_s=90) == 0
    # Every metastore JVM dev up started is gone with it.
    leftover = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.strip()
    assert leftover == ""
