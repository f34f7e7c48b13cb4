"""Streaming ingest on each store: rows/s per writer and commit() latency on local files, S3 and HDFS.

Run with ``make bench-storage`` or ``.venv/bin/python -m tests.bench.bench_storage [--quick]``
(docs/storage.md). Not a pytest test: the file name does not match ``test_*.py``.

One Hive 2.3 metastore with S3A (it makes the tables' directories), `hmsproxy serve` in front of it in a
process of its own, s3proxy (in memory) and an HDFS minicluster on loopback, all started here. Per
store, one table of five columns (tests/bench/bench_stream.py's) at a location on it:

1. **rows/s per writer** through the proxy, CSV at 100,000 rows per transaction (target >= 50,000);
2. **commit()** of 1,000-row transactions, the stores alternated round by round: p50 and p99
   (target: p50 <= 150 ms). A commit writes the file, commits in the metastore and publishes the file
   (one rename on local files and HDFS, a copy and a delete on S3). The minicluster has two
   DataNodes, so a file has two replicas as on a real cluster: with one, `complete()` races the
   DataNode's block report and hdfs-native's fixed 500 ms retry decides the p50 (docs/storage.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from tests.bench.bench_stream import COLUMNS, commit_latencies, log, percentile, stream_rate

STORES = ("local", "s3", "hdfs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer transactions (a smoke run)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--hdfs-datanodes",
        type=int,
        default=2,
        help="DataNodes of the HDFS minicluster, the replicas of a file (1: every HDFS commit races the block report, docs/storage.md)",
    )
    args = parser.parse_args(argv)

    from hmsproxy.dev import storage_jars
    from hmsproxy.dev.metastore import start_metastores
    from hmsproxy.dev.ports import free_port
    from hmsproxy.files import filesystems
    from hmsproxy.testing.builders import parquet_table
    from tests.bench.bench_proxy import ProxyProcess, write_proxy_config
    from tests.support.hdfs import HdfsServer
    from tests.support.s3 import S3Server
    from tests.support.storage_stack import site_xml

    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-storage-"))
    log(f"starting s3proxy, an HDFS minicluster, a Hive 2.3 metastore with S3A and the proxy (state in {tmp}) ...")
    (tmp / "s3").mkdir()
    (tmp / "hdfs").mkdir()
    s3 = S3Server(tmp / "s3", free_port(), storage_jars.s3proxy_jar()).start()
    hdfs = metastore = proxy = None
    try:
        hdfs = HdfsServer(tmp / "hdfs", storage_jars.minicluster_classpath(), datanodes=args.hdfs_datanodes).start()
        bucket = s3.make_bucket("bench")
        (tmp / "conf").mkdir()
        (tmp / "conf" / "core-site.xml").write_text(site_xml(s3.s3a_conf()))
        os.environ["HADOOP_CONF_DIR"] = str(tmp / "conf")
        filesystems.forget()
        (metastore,) = start_metastores(
            1, tmp / "hms", log=lambda m: None, timeout_s=180, fast_start=False, log_level="WARN",
            extra_classpath=[str(j) for j in storage_jars.s3a_jars()], hive_conf=s3.s3a_conf(),
        )  # fmt: skip
        port = free_port()
        write_proxy_config(tmp / "proxy.yml", port, metastore.uri, store_url=f"sqlite:///{tmp}/store.db")
        proxy = ProxyProcess(tmp / "proxy.yml", tmp / "proxy.log")
        proxy.wait_ready("127.0.0.1", port)
        uri = f"thrift://127.0.0.1:{port}"
        roots = {"local": (tmp / "warehouse").as_uri(), "s3": f"s3a://{bucket}/warehouse", "hdfs": f"{hdfs.uri}/warehouse"}
        client = metastore.client()
        try:
            for store, root in roots.items():
                for kind in ("rates", "commits"):
                    client.create_table(parquet_table("default", f"{kind}_{store}", f"{root}/{kind}", columns=COLUMNS))
        finally:
            client.close()
        results: dict = {"rows_per_s": {}, "commit_s": {}}
        txns = 1 if args.quick else 4
        for store in STORES:
            rate = stream_rate(uri, f"rates_{store}", "csv", 100_000, txns)
            results["rows_per_s"][store] = rate
            log(f"{store:5} csv 100,000 rows/txn: {rate:>9,.0f} rows/s")
        times = commit_latencies({store: (uri, f"commits_{store}") for store in STORES}, 10 if args.quick else 100)
        for store, values in times.items():
            results["commit_s"][store] = {"p50": statistics.median(values), "p99": percentile(values, 0.99), "n": len(values)}
        print()
        print(
            "streaming through the proxy, one writer:   rows/s (CSV, 100,000 rows/txn; target >= 50,000)   commit() of 1,000 rows p50 / p99 (target p50 <= 150 ms)"
        )
        for store in STORES:
            c = results["commit_s"][store]
            print(
                f"  {store:5} {results['rows_per_s'][store]:>12,.0f}   {c['p50'] * 1000:8.1f} ms / {c['p99'] * 1000:6.1f} ms  ({c['n']} commits)"
            )
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
    finally:
        if proxy is not None:
            proxy.stop()
        if metastore is not None:
            metastore.stop()
        if hdfs is not None:
            hdfs.stop()
        s3.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
