"""Start-up of `hmsproxy sql` (issue #25, "instant statements"): wall and CPU time of whole commands.
`python -m tests.bench.bench_sql_startup [--uri thrift://127.0.0.1:9083] [--runs 10]` (`make bench-sql`).

Runs `hmsproxy sql --uri URI -e "SHOW REMOTE DATABASES"` against a running proxy (`make up`'s by
default), one warm-up and then RUNS times, each a new process as a user types it, and prints each
run's wall time and the process's user and system CPU, their medians, and the load average before and
after (the machine's other work shows in the wall times: read them with it). For comparison, the same
for a bare interpreter (`python -c pass`), the floor no command goes below. Target: median wall
under 0.3 s on a warm machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.3
STATEMENT = "SHOW REMOTE DATABASES"


def timed(cmd: list[str]) -> tuple[float, float, float, subprocess.CompletedProcess]:
    """(wall s, user CPU s, system CPU s, the finished process) of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, done


def measure(name: str, cmd: list[str], runs: int) -> float:
    first = timed(cmd)[3]  # warm-up: the page cache, the user cache (~/.cache/hmsproxy)
    if first.returncode != 0:
        raise SystemExit(f"{name} failed ({first.returncode}): {first.stderr.strip()}")
    rows = [timed(cmd)[:3] for _ in range(runs)]
    walls, users, systems = (sorted(r[i] for r in rows) for i in range(3))
    print(f"{name}: walls {' '.join(f'{w:.3f}' for w in walls)}")
    print(
        f"{name}: median wall {statistics.median(walls):.3f} s, user CPU {statistics.median(users):.3f} s, "
        f"system CPU {statistics.median(systems):.3f} s"
    )
    return statistics.median(walls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="thrift://127.0.0.1:9083", help="a running proxy (default: make up's)")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    hmsproxy = str(Path(sys.executable).with_name("hmsproxy"))
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    measure("python -c pass", [sys.executable, "-c", "pass"], args.runs)
    median = measure(f'hmsproxy sql -e "{STATEMENT}"', [hmsproxy, "sql", "--uri", args.uri, "-e", STATEMENT], args.runs)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"target: median wall < {TARGET_S} s: {'PASS' if median < TARGET_S else 'FAIL'} ({median:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
