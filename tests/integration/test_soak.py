"""A short soak (make soak runs the hour): mixed load through `hmsproxy serve` and a metastore
restart half-way; the proxy's memory, descriptors, threads and latency stay flat, only the
restart explains failed calls, and every acknowledged streamed row is stored once."""

from __future__ import annotations

import os

from tests.bench.soak import run_soak

MINUTES = float(os.environ.get("HMSPROXY_SOAK_MINUTES", "5"))


def test_mixed_load_with_a_metastore_restart_stays_flat(metastore_factory, tmp_path):
    (metastore,) = metastore_factory(1, name="soak")
    report = run_soak(metastore, tmp_path / "soak", MINUTES)
    print(report.summary())
    assert report.problems == [], report.summary()
    assert len(report.restarts_s) == 1 and report.expected_errors > 0, "the restart happened and clients saw it"
    assert report.streamed_rows > 0 and sum(s.calls for s in report.samples) > 0
    assert (tmp_path / "soak" / "soak.png").stat().st_size > 10_000
