"""The benchmark's Waggle Dance harness (hmsproxy/dev/waggle_dance.py, used by
tests/bench/bench_waggle_dance.py) still works: Waggle Dance 3.13.3 starts from the jar Maven
fetched, on the config pair the benchmark writes (which hmsproxy also accepts), and answers
through to a real metastore. Skipped only where the jar cannot be fetched, and not in CI."""

from __future__ import annotations

import uuid

from hmsproxy.config.model import DatabaseResolution
from hmsproxy.config.waggle_dance import load_waggle_dance
from hmsproxy.dev import maven, waggle_dance
from hmsproxy.dev.metastore import metastore_client
from hmsproxy.dev.ports import free_port
from hmsproxy.protocol import idl
from tests.support.required import unavailable


def _jar():
    try:
        return waggle_dance.fetch()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch Waggle Dance {waggle_dance.VERSION} with Maven: {exc}")


def test_waggle_dance_starts_from_the_fetched_jar_and_answers_through_the_metastore(metastores, tmp_path):
    jar = _jar()
    primary = metastores[0]
    name = f"wd_harness_{uuid.uuid4().hex[:8]}"
    direct = primary.client()
    try:
        direct.create_database(idl.hive.Database(name=name, description="waggle dance harness", locationUri=None, parameters={}))
        expected = direct.get_all_databases()
    finally:
        direct.close()

    port = free_port()
    server_yml, federation_yml = waggle_dance.write_config(tmp_path / "wd", port, primary.uri)
    config = load_waggle_dance(server_yml, federation_yml)  # the pair the benchmark gives Waggle Dance, as hmsproxy reads it
    assert (config.server.port, config.database_resolution, config.primary.uris) == (port, DatabaseResolution.PREFIXED, (primary.uri,))
    federation_before = federation_yml.read_text()

    wd = waggle_dance.WaggleDance(jar, server_yml, federation_yml, tmp_path / "waggle-dance.log", port=port)
    try:
        wd.start()
        assert wd.ready_s is not None and wd.pid is not None
        client = metastore_client("127.0.0.1", port, timeout_s=60)
        try:
            through = client.get_all_databases()
        finally:
            client.close()
    finally:
        wd.stop()

    assert name in through
    assert sorted(through) == sorted(expected)
    log = (tmp_path / "waggle-dance.log").read_text(errors="replace")
    # What the benchmark says of its Waggle Dance: an audit line per call by default ...
    assert "WD Audit:" in log and "method:get_all_databases" in log
    # ... and its federation file left alone on shutdown (yaml-storage.overwrite-config-on-shutdown: false).
    assert federation_yml.read_text() == federation_before
