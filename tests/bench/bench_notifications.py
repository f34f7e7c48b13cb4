"""``make bench-notifications``: what the merged notification log (features/notifications) costs.

1. Latency: ``get_next_notification`` of 1,000 events from a real Hive 2.3 metastore recording events,
   direct vs through an in-process hmsproxy with ``notifications.federate`` (its answer is read from
   the store, each event fetched from the metastore by its id and renamed; every call pulls first),
   interleaved in one run, p50/p95 side by side.
2. The merge's own cost: events merged per second (merging.py: pages read, labelled, appended in
   one store transaction each) from a generated metastore log, into a SQLite store.
3. Memory: the RSS of this process (the proxy's serving code: store queries, fetching by id,
   renaming) before and after a follower reads a log of a million merged entries in batches of
   1,000, sampled every 100 batches. The rows are inserted into the store directly and their events
   generated on demand, so what grows is what the serving path holds. A count over the whole log
   and a filtered read of its last events are timed too.

Parts 2 and 3 need no JVM; ``--quick`` runs all three small (the unit test runs 2 and 3 smaller still).
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from hmsproxy.features.notifications.config import NotificationsConfig
from hmsproxy.features.notifications.filters import of_count_request
from hmsproxy.features.notifications.merging import Merger
from hmsproxy.features.notifications.messages import rewrite_message
from hmsproxy.features.notifications.model import BATCH, LogFilter
from hmsproxy.features.notifications.serving import next_events
from hmsproxy.features.notifications.store import NOTIFICATIONS_SCHEMA, NotificationLog, labels, log_table, marks
from hmsproxy.protocol import idl
from hmsproxy.routing.router import Router
from hmsproxy.store.db import Store
from tests.support.federation import primary_only_config, stored_in

hive = idl.hive
P = idl.HmsProxy

#: The generated log's database and how many tables its events spread over.
GEN_DB, GEN_TABLES = "shop", 100
#: Rows inserted into the store per transaction when filling it directly.
FILL_CHUNK = 20_000
#: Batches between two RSS samples while the follower reads.
SAMPLE_EVERY = 100


class GeneratedLog:
    """A metastore's log of `size` events made on demand (a fake session's `call`): nothing is held,
    so the memory measured is the serving path's."""

    def __init__(self, size: int):
        self.size = size
        self.calls = 0

    def call(self, metastore, method: str, args, read_only: bool = False):
        self.calls += 1
        if method == "get_current_notificationEventId":
            return P.get_current_notificationEventId_result(success=hive.CurrentNotificationEventId(eventId=self.size))
        rqst = args.rqst
        first, last = rqst.lastEvent + 1, min(self.size, rqst.lastEvent + (rqst.maxEvents or self.size))
        return P.get_next_notification_result(success=hive.NotificationEventResponse(events=[event(i) for i in range(first, last + 1)]))


def event(i: int):
    table = f"t{i % GEN_TABLES}"
    message = f'{{"server":"","servicePrincipal":"","db":"{GEN_DB}","table":"{table}","timestamp":{i}}}'
    return hive.NotificationEvent(i, i, "ALTER_TABLE", GEN_DB, table, message, "json-0.2")


def rss_mb() -> float:
    """This process's resident set now (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextlib.contextmanager
def sqlite_log(directory: Path):
    store = Store(f"sqlite:///{directory / 'notifications.db'}", [NOTIFICATIONS_SCHEMA])
    store.migrate()
    try:
        yield store, NotificationLog(store)
    finally:
        store.close()


def generated_router() -> Router:
    return Router(primary_only_config("thrift://generated:1"))


# ------------------------------------------------------------------------------ 2. merge rate


@dataclass
class MergeResult:
    events: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.events / self.seconds


def merge_rate(events: int, directory: Path) -> MergeResult:
    """Merge a generated log of `events` into an empty store, timed from the first page to the last."""
    with sqlite_log(directory) as (_, log):
        router, source = generated_router(), GeneratedLog(0)
        merger = Merger(log)
        merger.pull(source, router)  # the log begins at the metastore's current id (0)
        source.size = events
        started = time.perf_counter()
        while log.mark("primary") < events:
            merger.pull(source, router)
        seconds = time.perf_counter() - started
        if log.current() != events:
            raise RuntimeError(f"merged {log.current()} of {events} events")
    return MergeResult(events, seconds)


# ---------------------------------------------------------------------------------- 3. memory


@dataclass
class MemoryResult:
    entries: int
    served: int
    fill_s: float
    serve_s: float
    rss_before_mb: float
    rss_after_mb: float
    samples_mb: list[float] = field(default_factory=list)
    count_ms: float = 0.0
    filtered_ms: float = 0.0

    @property
    def growth_mb(self) -> float:
        return max([self.rss_after_mb, *self.samples_mb]) - self.rss_before_mb


def fill(store: Store, entries: int) -> None:
    """`entries` merged rows of the generated metastore, written straight into the store."""
    with store.writing() as conn:
        conn.execute(marks.insert().values(metastore="primary", last_backend_id=entries))
    for start in range(1, entries + 1, FILL_CHUNK):
        ids = range(start, min(entries, start + FILL_CHUNK - 1) + 1)
        with store.writing() as conn:
            conn.execute(log_table.insert(), [{"proxy_id": i, "metastore": "primary", "backend_id": i} for i in ids])
            conn.execute(
                labels.insert(),
                [{"proxy_id": i, "event_type": "ALTER_TABLE", "db_name": GEN_DB, "table_name": f"t{i % GEN_TABLES}"} for i in ids],
            )


def memory(entries: int, directory: Path) -> MemoryResult:
    with sqlite_log(directory) as (store, log):
        started = time.perf_counter()
        fill(store, entries)
        fill_s = time.perf_counter() - started
        router, source = generated_router(), GeneratedLog(entries)
        before = rss_mb()
        samples, last, served, batches = [], 0, 0, 0
        started = time.perf_counter()
        while True:  # a follower: batches of 1,000 until the log ends
            events = next_events(log, source, router, last, BATCH)
            if not events:
                break
            if events[0].eventId != last + 1:
                raise RuntimeError(f"after {last} came {events[0].eventId}")
            served += len(events)
            last = events[-1].eventId
            batches += 1
            if batches % SAMPLE_EVERY == 0:
                samples.append(rss_mb())
        serve_s = time.perf_counter() - started
        after = rss_mb()
        started = time.perf_counter()
        counted = log.count(0, of_count_request(router, hive.NotificationEventsCountRequest(fromEventId=0, dbName=GEN_DB)))
        count_ms = (time.perf_counter() - started) * 1000
        if counted != entries:
            raise RuntimeError(f"counted {counted} of {entries}")
        started = time.perf_counter()
        where = LogFilter(db=("primary", GEN_DB), tables=frozenset({"t7"}))
        tail = next_events(log, source, router, max(0, entries - 10 * GEN_TABLES), None, where)
        filtered_ms = (time.perf_counter() - started) * 1000
        if not tail or any(e.tableName != "t7" for e in tail):
            raise RuntimeError(f"the filtered read gave {[e.tableName for e in tail]}")
    return MemoryResult(entries, served, fill_s, serve_s, before, after, samples, count_ms, filtered_ms)


# --------------------------------------------------------------------------------- 1. latency


@dataclass
class LatencyResult:
    events: int
    direct_ms: list[float]
    proxy_ms: list[float]
    #: Renaming the database inside one of these events' messages, as for a prefixed member's (µs).
    rename_us: float = 0.0


def rename_cost_us(events) -> float:
    """Mean time to rewrite one real message for a prefixed member (the primary's are passed on as they are)."""
    started = time.perf_counter()
    for e in events:
        rewrite_message(e.message, e.messageFormat, lambda db: "fed_" + db)
    return (time.perf_counter() - started) * 1e6 / len(events)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(events: int, calls: int, directory: Path) -> LatencyResult | str:
    """Timed reads of `events` events, direct and through the proxy, interleaved; or why not measured."""
    from hmsproxy.dev import maven
    from hmsproxy.dev.metastore import LocalMetastore
    from hmsproxy.dev.ports import free_port
    from hmsproxy.dev.versions import hive_version
    from hmsproxy.testing import table
    from tests.support.served import served

    try:
        hive_version("2.3").prepare()
    except maven.FetchError as exc:
        return f"no Hive 2.3 jars: {exc}"
    ms = LocalMetastore(free_port(), directory / "metastore", hive_version="2.3", name="bench-notifications")
    try:
        ms.start()
        if not ms.notifications_enabled:
            return f"the metastore records no events: {ms.notifications_unavailable}"
        config = stored_in(primary_only_config(ms.uri), directory / "store").with_section(
            "notifications", NotificationsConfig(federate=True)
        )
        with served(config) as server, _client(ms.host, ms.port) as direct, _client("127.0.0.1", server.port) as proxy:
            proxy_start = proxy.get_current_notificationEventId().eventId  # the merged log begins here
            direct_start = direct.get_current_notificationEventId().eventId
            direct.create_database(hive.Database(name="bench_notif", description="", locationUri=None, parameters={}))
            for i in range(events - 1):
                direct.create_table(table("bench_notif", f"t{i}"))
            paths = {
                "direct": lambda: direct.get_next_notification(hive.NotificationEventRequest(lastEvent=direct_start, maxEvents=events)),
                "proxy": lambda: proxy.get_next_notification(hive.NotificationEventRequest(lastEvent=proxy_start, maxEvents=events)),
            }
            timings: dict[str, list[float]] = {"direct": [], "proxy": []}
            for i in range(calls + 2):  # the first round warms up (the proxy merges then)
                for path, read in paths.items():
                    started = time.perf_counter()
                    got = read().events
                    elapsed = (time.perf_counter() - started) * 1000
                    if len(got) != events:
                        raise RuntimeError(f"{path}: {len(got)} events, expected {events}")
                    if i >= 2:
                        timings[path].append(elapsed)
            rename_us = rename_cost_us(paths["direct"]().events)
        return LatencyResult(events, timings["direct"], timings["proxy"], rename_us)
    finally:
        ms.stop()


@contextlib.contextmanager
def _client(host: str, port: int):
    import thriftpy2.rpc

    client = thriftpy2.rpc.make_client(P, host, port, timeout=120_000)
    try:
        yield client
    finally:
        client.close()


# ---------------------------------------------------------------------------------- the report


def report(latency_result: LatencyResult | str | None, merged: MergeResult, mem: MemoryResult) -> list[str]:
    lines = ["Notifications: the merged log's cost (tests/bench/bench_notifications.py)"]
    if isinstance(latency_result, LatencyResult):
        d, p = latency_result.direct_ms, latency_result.proxy_ms
        lines += [
            f"get_next_notification of {latency_result.events} events, {len(d)} calls each, interleaved:",
            "  path     p50 ms   p95 ms",
            f"  direct  {statistics.median(d):7.1f}  {percentile(d, 0.95):7.1f}",
            f"  proxy   {statistics.median(p):7.1f}  {percentile(p, 0.95):7.1f}   (p50 x{statistics.median(p) / statistics.median(d):.2f})",
            f"  renaming inside a message (a prefixed member's events): {latency_result.rename_us:.0f} µs per event",
        ]
    elif latency_result is not None:
        lines.append(f"get_next_notification through the proxy vs direct: not measured ({latency_result})")
    lines.append(f"merge: {merged.events} events in {merged.seconds:.2f} s = {merged.per_second:,.0f} events/s")
    samples = ", ".join(f"{s:.0f}" for s in mem.samples_mb)
    lines += [
        f"memory: {mem.entries:,} merged entries (store filled in {mem.fill_s:.1f} s), served to a follower in batches of {BATCH}:",
        f"  {mem.served:,} events in {mem.serve_s:.1f} s = {mem.served / mem.serve_s:,.0f} events/s",
        f"  RSS before {mem.rss_before_mb:.0f} MB, every {SAMPLE_EVERY} batches [{samples}] MB, after {mem.rss_after_mb:.0f} MB:"
        f" growth {mem.growth_mb:+.1f} MB (peak of the process {peak_rss_mb():.0f} MB)",
        f"  count over the whole log {mem.count_ms:.0f} ms; a filtered read of its last {10 * GEN_TABLES} entries {mem.filtered_ms:.0f} ms",
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000, help="events per timed get_next_notification")
    parser.add_argument("--calls", type=int, default=50, help="timed calls per path")
    parser.add_argument("--merge", type=int, default=100_000, help="events merged for the merge rate")
    parser.add_argument("--entries", type=int, default=1_000_000, help="merged entries the follower reads for the memory figure")
    parser.add_argument("--no-metastore", action="store_true", help="skip the latency part (no JVM)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: everything small")
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.calls, args.merge, args.entries = 200, 5, 5_000, 20_000
    with tempfile.TemporaryDirectory(prefix="bench-notifications-") as tmp:
        root = Path(tmp)
        for sub in ("merge", "memory", "latency"):
            (root / sub).mkdir()
        mem = memory(args.entries, root / "memory")  # first, before the other parts grow the process
        merged = merge_rate(args.merge, root / "merge")
        lat = None if args.no_metastore else latency(args.events, args.calls, root / "latency")
    print("\n".join(report(lat, merged, mem)))


if __name__ == "__main__":
    main()
