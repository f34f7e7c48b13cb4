"""AUTO REBUILD's syntax and property, rebuild-index --watch's usage errors, rounds and signals
(fakes for the metastore and the rebuild; tests/spark/test_index_watch_spark.py runs it for real)."""

from __future__ import annotations

import io
import os
import signal
import threading
from types import SimpleNamespace

import pytest

from hmsproxy.ddl import DdlSyntaxError
from hmsproxy.features import parse
from hmsproxy.features.indexes.auto_rebuild import AUTO_REBUILD_KEY, check_auto_rebuild, is_auto_rebuild
from hmsproxy.jobs import index_watch, rebuild_index
from hmsproxy.jobs.cli import build_parser, run_job_command
from hmsproxy.jobs.context import JobContext
from hmsproxy.jobs.progress import OK, SKIPPED, ItemResult
from hmsproxy.pipeline.errors import InvalidRequest


def test_auto_rebuild_parses_and_excludes_deferred_rebuild():
    (made,) = parse("CREATE INDEX i ON TABLE shop.events (user_id) AS 'COMPACT' AUTO REBUILD IDXPROPERTIES ('k'='v')")
    assert (made.auto_rebuild, made.deferred, made.properties) == (True, False, (("k", "v"),))
    (plain,) = parse("CREATE INDEX auto ON TABLE shop.events (auto) AS 'COMPACT'")  # still a name where one fits
    assert (plain.name, plain.columns, plain.auto_rebuild) == ("auto", ("auto",), False)
    with pytest.raises(DdlSyntaxError, match="found 'AUTO'"):
        parse("CREATE INDEX i ON TABLE shop.events (user_id) AS 'COMPACT' WITH DEFERRED REBUILD AUTO REBUILD")


def test_the_property_is_true_or_false_and_nothing_else():
    assert is_auto_rebuild({AUTO_REBUILD_KEY: " True"}) and not is_auto_rebuild({AUTO_REBUILD_KEY: "false"}) and not is_auto_rebuild(None)
    check_auto_rebuild({AUTO_REBUILD_KEY: "FALSE"}, "i")
    check_auto_rebuild({"other": "x"}, "i")
    with pytest.raises(InvalidRequest, match="index i: hmsproxy.index.auto-rebuild is 'yes'; use 'true' or 'false'"):
        check_auto_rebuild({AUTO_REBUILD_KEY: "yes"}, "i")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "name one index"),
        (["a.b.c", "a.b.d"], "several, or none, only with --watch"),
        (["--watch", "--partition", "ds=1"], "leave out --partition"),
        (["--watch", "--interval", "0"], "--interval must be above 0"),
        (["--watch", "--max-per-round", "0"], "--max-per-round at least 1"),
    ],
)
def test_usage_errors_exit_2_before_anything_is_contacted(argv, message):
    err = io.StringIO()
    ctx = JobContext("thrift://127.0.0.1:9", stdout=io.StringIO(), stderr=err)  # nothing listens there: never reached
    assert run_job_command(build_parser().parse_args(["rebuild-index", *argv]), ctx) == 2
    assert message in err.getvalue()


class FakeMetastore:
    def __init__(self, indexes: dict[tuple[str, str], list[dict[str, str]]], broken: set[str] = frozenset()):
        self._indexes, self._broken = indexes, broken

    def databases(self):
        return sorted({db for db, _ in self._indexes} | set(self._broken))

    def table_names(self, db):
        if db in self._broken:
            raise OSError("unreachable")
        return [t for d, t in self._indexes if d == db]

    def indexes(self, db, table):
        return [SimpleNamespace(indexName=name, parameters=params) for name, params in self._indexes[(db, table)].items()]


def test_every_auto_rebuild_index_is_found_and_an_unlistable_database_skipped():
    ms = FakeMetastore(
        {("shop", "events"): {"A": {AUTO_REBUILD_KEY: "true"}, "b": {}}, ("web", "hits"): {"c": {AUTO_REBUILD_KEY: "false"}}},
        broken={"remote"},
    )
    said = []
    assert list(index_watch.auto_rebuild_indexes(ms, said.append)) == [("shop", "events", "a")]
    assert said == ["skipped database remote: OSError: unreachable"]


def test_a_round_rebuilds_only_stale_pieces_and_at_most_its_budget(monkeypatch):
    pieces = [rebuild_index.Piece(f"ds={d}", (str(d),)) for d in range(5)]
    fresh = {"ds=1"}
    asked = []

    def fake_rebuild(spark, ms, index, piece, *, only_stale, connect):
        assert only_stale
        asked.append(piece.name)
        return ItemResult(SKIPPED) if piece.name in fresh else ItemResult(OK, rows=7, note="1 base file(s) in 1 partition(s)")

    monkeypatch.setattr(rebuild_index, "load_index", lambda ms, db, table, name: object())
    monkeypatch.setattr(rebuild_index, "pieces_for", lambda ms, index, specs: pieces)
    monkeypatch.setattr(rebuild_index, "rebuild_piece", fake_rebuild)
    out = io.StringIO()
    ctx = SimpleNamespace(out=lambda line: print(line, file=out), metastore=None)
    done = index_watch.watch_round(None, None, [("shop", "events", "i")], ctx, 2, threading.Event())
    assert done == 2 and asked == ["ds=0", "ds=1", "ds=2"]  # the fresh one checked, not counted
    lines = out.getvalue().splitlines()
    assert [line.split(":")[1] for line in lines] == [" rebuilt shop.events.i ds=0", " rebuilt shop.events.i ds=2"]
    stopped = threading.Event()
    stopped.set()
    asked.clear()
    assert index_watch.watch_round(None, None, [("shop", "events", "i")], ctx, 8, stopped) == 0 and asked == []


def test_the_first_signal_asks_to_stop_and_the_second_interrupts():
    with index_watch.StopSignals() as signals:
        os.kill(os.getpid(), signal.SIGTERM)
        assert signals.stopping.wait(5) and signals.signal_name == "SIGTERM"
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            signals.stopping.wait(5)  # the handler runs here, if not already
    assert signal.getsignal(signal.SIGTERM) is not signals._handle
