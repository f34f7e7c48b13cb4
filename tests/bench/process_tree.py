"""This process and every process below it (Spark's and the metastore's JVMs), from /proc."""

from __future__ import annotations

import os


def own_stats() -> list[list[str]]:
    """/proc/PID/stat's fields after the command name, for this process and each descendant."""
    parents, fields_of = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        parents[int(entry)], fields_of[int(entry)] = int(fields[1]), fields
    me, own = os.getpid(), []
    for pid, fields in fields_of.items():
        p, hops = pid, 0
        while p > 1 and p != me and hops < 64:
            p, hops = parents.get(p, 0), hops + 1
        if p == me:
            own.append(fields)
    return own


def resident_bytes(pid: int) -> int:
    """One process's resident set (VmRSS), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
