"""Which Spark master a job runs on, and whether a standalone master or a Spark Connect server
answers before Spark starts.

A SparkContext given a `spark://` master nobody listens on retries its registration for about a
minute and then dies with "All masters are unresponsive", and a Connect client retries a refused
server with back-off for longer; a job asks the port first so the user learns within seconds which
one is down and what to set.
"""

from __future__ import annotations

import socket
import time

from hmsproxy.jobs.errors import JobError

MASTER_CONF = "spark.master"
#: A job started outside spark-submit with no master given runs in this process.
LOCAL_MASTER = "local[*]"
#: Each standalone master address gets this long to accept a connection; all of them share WAIT_S.
CONNECT_TIMEOUT_S = 3.0
WAIT_S = 8.0


def standalone_addresses(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master in `spark://h1:p1,h2:p2` (standalone HA lists several); [] for others."""
    if not master.startswith("spark://"):
        return []
    addresses = []
    for part in master[len("spark://") :].split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise JobError(f"Spark master {master}: expected spark://HOST:PORT[,HOST:PORT], not {part.strip()!r}")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


#: Spark Connect's default port (spark.connect.grpc.binding.port).
CONNECT_DEFAULT_PORT = 15002


def connect_address(remote: str) -> tuple[str, int]:
    """(host, port) of `sc://HOST[:PORT][/;param=value…]`."""
    from urllib.parse import urlparse

    parsed = urlparse(remote)
    if parsed.scheme != "sc" or not parsed.hostname:
        raise JobError(f"Spark Connect server {remote}: expected sc://HOST[:PORT]")
    try:
        port = parsed.port or CONNECT_DEFAULT_PORT
    except ValueError:
        raise JobError(f"Spark Connect server {remote}: expected sc://HOST[:PORT]") from None
    return parsed.hostname, port


def check_master_answers(master: str) -> None:
    """Return if any standalone master of `master` accepts a connection; else JobError naming it."""
    first_answering(f"Spark master {master}", standalone_addresses(master), f"--master (or --conf {MASTER_CONF}=…)")


def check_remote_answers(remote: str) -> None:
    """Return if the Spark Connect server of `remote` accepts a connection; else JobError naming it."""
    first_answering(f"Spark Connect server {remote}", [connect_address(remote)], "--remote (or SPARK_REMOTE)")


def first_answering(what: str, addresses: list[tuple[str, int]], setting: str) -> None:
    if not addresses:
        return
    deadline = time.monotonic() + WAIT_S
    reasons = []
    for host, port in addresses:
        timeout = min(CONNECT_TIMEOUT_S, max(0.1, deadline - time.monotonic()))
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as e:
            reasons.append(f"{host}:{port}: {e.strerror or str(e) or type(e).__name__}")
    raise JobError(f"{what} does not answer ({'; '.join(reasons)}): start it, or give {setting} a running one")
