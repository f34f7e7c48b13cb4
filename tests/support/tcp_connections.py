"""TCP connections as the kernel lists them: how many a server on loopback holds, whoever opened them."""

from __future__ import annotations

from pathlib import Path

ESTABLISHED = "01"


def established_to(port: int) -> int:
    """TCP connections to 127.0.0.1:`port` established in this network namespace (/proc/net/tcp)."""
    remote = f"0100007F:{port:04X}"
    rows = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    return sum(1 for row in rows if row[2] == remote and row[3] == ESTABLISHED)
