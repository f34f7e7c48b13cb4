"""`hmsproxy job` on a missing table or partition fails through the metastore before Spark starts."""

from __future__ import annotations

import time

import pytest

from tests.integration.test_dev_up_restart import hmsproxy


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compact", "default.no_such_table"], "hmsproxy job compact: table default.no_such_table does not exist"),
        (["skew-layout", "default.no_such_table"], "hmsproxy job skew-layout: table default.no_such_table does not exist"),
        (["rebuild-index", "default.no_such_table.idx"], "hmsproxy job rebuild-index: "),
    ],
)
def test_a_job_on_a_missing_table_fails_without_starting_spark(proxy, argv, message):
    started = time.monotonic()
    out = hmsproxy("job", *argv, "--uri", proxy.uri)
    took = time.monotonic() - started
    assert out.returncode == 1
    assert out.stderr.startswith(message) and out.stderr.count("\n") == 1, out.stderr
    assert "SparkContext" not in out.stderr and "log level" not in out.stderr  # Spark's start-up lines
    print(f"{argv[0]} on a missing table failed after {took:.2f}s")  # reported (-s), not asserted
