"""The job's check that a standalone Spark master answers before Spark starts (hmsproxy/jobs/masters.py)."""

from __future__ import annotations

import socket

import pytest

from hmsproxy.dev.ports import free_ports
from hmsproxy.jobs.errors import JobError
from hmsproxy.jobs.masters import check_master_answers, check_remote_answers, connect_address, standalone_addresses


def test_standalone_addresses_of_one_master_and_of_an_ha_list():
    assert standalone_addresses("spark://127.0.0.1:7077") == [("127.0.0.1", 7077)]
    assert standalone_addresses("spark://a:1, b:2") == [("a", 1), ("b", 2)]
    assert standalone_addresses("spark://[::1]:7077") == [("::1", 7077)]
    for other in ("local[*]", "yarn", "k8s://https://api:6443"):
        assert standalone_addresses(other) == []
    with pytest.raises(JobError, match=r"expected spark://HOST:PORT\[,HOST:PORT\], not 'a'"):
        standalone_addresses("spark://a")


def test_a_listening_master_passes_and_a_closed_port_is_named_with_what_to_set():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        port = listening.getsockname()[1]
        [dead] = free_ports(1)
        check_master_answers(f"spark://127.0.0.1:{port}")
        check_master_answers(f"spark://127.0.0.1:{dead},127.0.0.1:{port}")  # HA: one standby down is fine
    with pytest.raises(JobError) as refused:
        check_master_answers(f"spark://127.0.0.1:{dead}")
    assert str(refused.value) == (
        f"Spark master spark://127.0.0.1:{dead} does not answer (127.0.0.1:{dead}: Connection refused): "
        "start it, or give --master (or --conf spark.master=…) a running one"
    )


def test_masters_that_are_not_standalone_are_left_to_spark():
    check_master_answers("yarn")
    check_master_answers("local[2]")


def test_connect_addresses_and_a_refused_server():
    assert connect_address("sc://spark-connect") == ("spark-connect", 15002)
    assert connect_address("sc://127.0.0.1:15010/;user_id=a") == ("127.0.0.1", 15010)
    for bad in ("http://h:1", "sc://", "sc://h:port"):
        with pytest.raises(JobError, match=r"expected sc://HOST\[:PORT\]"):
            connect_address(bad)
    [dead] = free_ports(1)
    with pytest.raises(JobError) as refused:
        check_remote_answers(f"sc://127.0.0.1:{dead}")
    assert str(refused.value) == (
        f"Spark Connect server sc://127.0.0.1:{dead} does not answer (127.0.0.1:{dead}: Connection refused): "
        "start it, or give --remote (or SPARK_REMOTE) a running one"
    )
