"""`dev up` keeps its ports in the state directory and checks them before any metastore JVM starts."""

import socket

import pytest

from hmsproxy.dev import federation
from hmsproxy.dev.kept_ports import DEFAULT_PROXY_PORT, PORTS_FILE, KeptPorts, PortTaken
from hmsproxy.dev.ports import free_port, port_is_free


@pytest.fixture
def squatter():
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def no_jvm(monkeypatch):
    """start_metastores records what it was asked and starts nothing."""
    asked = []

    class Stop(Exception):
        pass

    def fake_start_metastores(count, state_root, *, ports=None, **kwargs):
        asked.append(list(ports))
        raise Stop

    monkeypatch.setattr(federation, "start_metastores", fake_start_metastores)
    return asked, Stop


def test_ports_are_kept_in_the_state_directory(tmp_path):
    kept = KeptPorts.load(tmp_path)
    assert kept.ports == {}
    kept.save({"proxy": 19083, "hms0": 41000})
    kept.save({"hms1": 41001})
    again = KeptPorts.load(tmp_path)
    assert again.ports == {"proxy": 19083, "hms0": 41000, "hms1": 41001}
    assert again.metastore_ports(["hms0", "hms1", "hms2"]) == [41000, 41001, None]


def test_a_damaged_ports_file_is_named_not_ignored(tmp_path):
    (tmp_path / PORTS_FILE).write_text("{not json")
    with pytest.raises(ValueError, match=PORTS_FILE):
        KeptPorts.load(tmp_path)


def test_the_proxy_port_is_the_one_asked_else_the_kept_one_else_9083(tmp_path):
    kept = KeptPorts.load(tmp_path)
    assert kept.proxy_port(None, "127.0.0.1") == DEFAULT_PROXY_PORT
    assert kept.proxy_port(0, "127.0.0.1") not in (0, DEFAULT_PROXY_PORT)
    kept.save({"proxy": 19999})
    assert kept.proxy_port(None, "127.0.0.1") == 19999
    assert kept.proxy_port(0, "127.0.0.1") == 19999
    assert kept.proxy_port(12345, "127.0.0.1") == 12345


def test_the_http_port_is_off_unless_asked_and_0_means_the_kept_one(tmp_path):
    kept = KeptPorts.load(tmp_path)
    assert kept.http_port(None, "127.0.0.1") is None
    assert kept.http_port(18080, "127.0.0.1") == 18080
    assert kept.http_port(0, "127.0.0.1") != 0
    kept.save({"http": 18081})
    assert kept.http_port(0, "127.0.0.1") == 18081
    assert kept.http_port(None, "127.0.0.1") is None


def test_a_port_in_use_is_not_free(squatter):
    assert not port_is_free(squatter, "127.0.0.1")
    assert port_is_free(free_port(), "127.0.0.1")


def test_a_busy_proxy_port_fails_before_any_metastore_starts(tmp_path, squatter, no_jvm):
    asked, _ = no_jvm
    with pytest.raises(PortTaken, match=rf"port {squatter} of the proxy \(--port\) is in use"):
        federation.start_federation(2, tmp_path / "state", port=squatter, say=lambda _m: None)
    assert asked == []
    assert not (tmp_path / "state" / "hms0").exists()


def test_a_busy_kept_metastore_port_is_reported_not_moved(tmp_path, squatter, no_jvm):
    asked, _ = no_jvm
    state = tmp_path / "state"
    KeptPorts.load(state).save({"hms0": free_port(), "hms1": squatter})
    with pytest.raises(PortTaken) as err:
        federation.start_federation(2, state, port=free_port(), say=lambda _m: None)
    message = str(err.value)
    assert f"port {squatter} of metastore hms1 is in use" in message
    assert str(state / PORTS_FILE) in message and '"hms1"' in message
    assert asked == []
    assert KeptPorts.load(state).ports["hms1"] == squatter  # still kept: nothing moved


def test_kept_metastore_ports_are_asked_for_and_new_ones_left_to_pick(tmp_path, no_jvm):
    asked, stop = no_jvm
    state = tmp_path / "state"
    kept_port = free_port()
    KeptPorts.load(state).save({"hms0": kept_port})
    with pytest.raises(stop):
        federation.start_federation(3, state, port=free_port(), say=lambda _m: None)
    assert asked == [[kept_port, None, None]]


def test_beside_the_default_proxy_port_new_metastores_take_the_ports_after_it(tmp_path):
    """The README's tour writes fed1 as thrift://127.0.0.1:9085: a first `make up` makes it so where it can."""
    kept = KeptPorts.load(tmp_path / "state")
    kept.save({"hms0": 41000})
    wanted = [p if port_is_free(p) else None for p in (9085, 9086)]
    assert kept.metastore_ports(["hms0", "hms1", "hms2"], 9083) == [41000, *wanted]
    assert kept.metastore_ports(["hms0", "hms1"], 9999) == [41000, None]  # another proxy port: left to pick
