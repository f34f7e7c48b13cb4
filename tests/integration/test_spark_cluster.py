"""The standalone cluster the job and Kerberos tests run applications on: executors in the workers'
own processes, and an application that finishes is listed as completed by the master."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

APP = textwrap.dedent(
    """
    import os, sys
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master(sys.argv[1]).appName("cluster-smoke")
             # Wait for both workers' executors before the first job (standalone's default is not to wait).
             .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
             .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
             .config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    rows = spark.range(0, 10_000, numPartitions=4).selectExpr("sum(id)").collect()
    print("SUM", rows[0][0])
    ids = spark.sparkContext._jsc.sc().getExecutorIds()
    print("EXECUTORS", ids.size())
    print("APP", spark.sparkContext.applicationId)
    spark.stop()
    """
)


def test_an_application_runs_on_two_workers_executors(spark_cluster, tmp_path):
    assert len(spark_cluster.alive_workers()) == 2
    script = tmp_path / "app.py"
    script.write_text(APP)
    done = subprocess.run(
        [sys.executable, str(script), spark_cluster.master_url],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SUM 49995000" in done.stdout
    assert "EXECUTORS 2" in done.stdout
    assert any(app["name"] == "cluster-smoke" for app in spark_cluster.completed_apps())
    app_id = next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("APP "))
    # The cluster is the session's: other tests' applications have executor logs there too.
    assert len([log for log in spark_cluster.executor_logs() if log.parent.parent.name == app_id]) == 2
