"""Kerberos (`make bench-kerberos`): get_table with SASL GSSAPI QOP auth, a Kerberized Hive 2.3
metastore asked directly vs through hmsproxy.

Everything is real and local: an MIT KDC on loopback (tests/support/kdc.py), one Kerberized
Hive 2.3 metastore from pyspark's jars (dev/kerberos.py, JVM default compilers), and
`hmsproxy serve` processes, one at a time, each with its own config:

- `direct`: the client authenticates to the metastore itself (no proxy);
- `proxy, plain port`: a plain client; the proxy authenticates to the metastore (outbound SASL);
- `proxy, Kerberos port`: `server.sasl.enabled`: the client authenticates to the proxy, the
  proxy to the metastore (SASL on both hops).

The client is the same code on every path (wire.ThriftConnection; with SASL where the path
needs it): one connection (one SASL negotiation, outside the timing), get_table back to back
for `--duration` seconds. Paths run in turn, their order rotated per repetition; the report is
the median over repetitions of each run's calls, p50, p99, and p50 over the direct path's.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

PATHS = ("direct", "proxy, plain port", "proxy, Kerberos port")
HIVE, PROXY, CLIENT = "hive/localhost", "hmsproxy/localhost", "alice"


def write_config(path: Path, port: int, kdc, metastore_uri: str, *, kerberos_port: bool) -> None:
    path.write_text(
        "# written by tests/bench/bench_kerberos.py\n"
        "server:\n"
        "  host: 127.0.0.1\n"
        f"  port: {port}\n"
        f"  sasl: {{enabled: {'true' if kerberos_port else 'false'}, principal: {kdc.principal(PROXY)}, keytab: {kdc.principals[PROXY]}}}\n"
        "primary-meta-store:\n"
        "  name: primary\n"
        f"  remote-meta-store-uris: {metastore_uri}\n"
        "  access-control-type: READ_AND_WRITE_AND_CREATE\n"
        '  hive-version: "2.3"\n'
        f"  sasl: {{enabled: true, principal: 'hive/_HOST@{kdc.realm}'}}\n"
    )


def connection(kdc, uri: str, service: str | None):
    """The bench's client: SASL as alice to `service` (a principal pattern), or plain for None."""
    from hmsproxy.upstream.wire import ThriftConnection

    sasl = connection_settings(kdc, service) if service is not None else None
    return ThriftConnection("bench", (uri,), connect_timeout_s=10, call_timeout_s=120, sasl=sasl)


def run_calls(conn, duration_s: float) -> list[float]:
    from hmsproxy.protocol import idl

    args = idl.HmsProxy.get_table_args(dbname="bench", tbl_name="t")
    assert conn.call("get_table", args).success.tableName == "t"  # connects: the negotiation is not timed
    times = []
    end = time.monotonic() + duration_s
    while time.monotonic() < end:
        t0 = time.perf_counter()
        conn.call("get_table", args)
        times.append(time.perf_counter() - t0)
    conn.close()
    return times


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


def wait_answering(make, timeout_s: float = 30) -> None:
    """Until a new connection from `make()` answers get_all_databases (the proxy has started)."""
    from hmsproxy.protocol import idl

    deadline = time.monotonic() + timeout_s
    while True:
        conn = make()
        try:
            conn.call("get_all_databases", idl.HmsProxy.get_all_databases_args())
            return
        except Exception:  # noqa: BLE001 - not up yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            conn.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of calls per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of calls on each path before measuring")
    args = parser.parse_args(argv)
    log = lambda m: print(m, flush=True)  # noqa: E731

    import os

    from hmsproxy.dev.kerberos import MetastoreKerberos
    from hmsproxy.dev.metastore import LocalMetastore
    from hmsproxy.dev.ports import free_port
    from hmsproxy.protocol import idl
    from tests.bench.bench_proxy import ProxyProcess
    from tests.support.ha_pair import plain_table
    from tests.support.kdc import require_kdc, start_kdc

    require_kdc()
    tmp = Path(tempfile.mkdtemp(prefix="hmsproxy-bench-kerberos-"))
    kdc = metastore = None
    try:
        kdc = start_kdc(tmp / "kdc")
        os.environ.update(kdc.env(tmp / "no-ticket-cache"))  # the proxies inherit the realm
        for name in (HIVE, PROXY, CLIENT):
            kdc.add_principal(name)
        log("starting a Kerberized Hive 2.3 metastore ...")
        direct_service = f"hive/_HOST@{kdc.realm}"
        kerberos = MetastoreKerberos(kdc.krb5_conf, kdc.principal(HIVE), kdc.principals[HIVE], connection_settings(kdc, direct_service))
        metastore = LocalMetastore(free_port(), tmp / "hms", host="localhost", log_level="WARN", fast_start=False, kerberos=kerberos)
        metastore.start()
        setup = connection(kdc, metastore.uri, direct_service)
        setup.call(
            "create_database",
            idl.HmsProxy.create_database_args(
                database=idl.hive.Database(name="bench", locationUri=(tmp / "bench.db").as_uri(), parameters={})
            ),
        )
        setup.call("create_table", idl.HmsProxy.create_table_args(tbl=plain_table("bench", "t")))
        setup.close()

        results: dict[str, list[dict]] = {}
        for rep in range(args.repeats + 1):  # the first round warms the JVM and each path
            order = PATHS[rep % 3 :] + PATHS[: rep % 3]
            for path in order:
                process = None
                if path == "direct":
                    make = lambda: connection(kdc, metastore.uri, direct_service)  # noqa: E731
                else:
                    port = free_port()
                    kerberos_port = path == "proxy, Kerberos port"
                    config = tmp / f"proxy-{port}.yml"
                    write_config(config, port, kdc, metastore.uri, kerberos_port=kerberos_port)
                    process = ProxyProcess(config, tmp / f"proxy-{port}.log")
                    uri = f"thrift://localhost:{port}"
                    service = f"hmsproxy/_HOST@{kdc.realm}" if kerberos_port else None
                    make = lambda uri=uri, service=service: connection(kdc, uri, service)  # noqa: E731
                try:
                    wait_answering(make)
                    times = run_calls(make(), args.warmup if rep == 0 else args.duration)
                finally:
                    if process is not None:
                        process.stop()
                if rep == 0:
                    continue
                run = {"calls": len(times), "p50": percentile(times, 50) * 1000, "p99": percentile(times, 99) * 1000}
                results.setdefault(path, []).append(run)
                log(f"rep {rep}/{args.repeats} {path:>20}: {run['calls']} calls, p50 {run['p50']:.3f} ms, p99 {run['p99']:.2f} ms")

        def med(path: str, key: str) -> float:
            return statistics.median(r[key] for r in results[path])

        lines = [
            f"get_table, SASL GSSAPI QOP auth, a Kerberized Hive 2.3 metastore, 1 client, {args.duration:g} s a run, median of {args.repeats} runs",
            f"{'path':>20} | {'calls':>6} | {'p50 ms':>7} | {'p99 ms':>7} | {'p50 / direct':>12}",
        ]
        for path in PATHS:
            ratio = med(path, "p50") / med("direct", "p50")
            lines.append(f"{path:>20} | {med(path, 'calls'):>6.0f} | {med(path, 'p50'):>7.3f} | {med(path, 'p99'):>7.2f} | {ratio:>12.2f}")
        print("\n".join(lines))
        return 0
    finally:
        if metastore is not None:
            metastore.stop()
        if kdc is not None:
            kdc.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def connection_settings(kdc, service: str):
    """The SASL settings the metastore's readiness check connects with (as alice)."""
    from hmsproxy.upstream.kerberos import GssapiSettings, KerberosLogin

    return GssapiSettings(KerberosLogin(kdc.principal(CLIENT), str(kdc.principals[CLIENT])), service)


if __name__ == "__main__":
    raise SystemExit(main())
