"""How many rows/s hmsproxy.streaming.buckets assigns: `python -m tests.bench.bench_buckets [--rows N]`.

One int bucket column and (int, string), both bucketing versions, through bucket_of (per row, the
table's function looked up in a cache) and through bucketer (resolved once, as a writer holds it).
Prints wall-clock and process-CPU rates: on a shared machine the CPU rate is the one to compare.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from hmsproxy.streaming.buckets import bucket_of, bucketer

BUCKETS = 32


def _rate(rows: list, assign: Callable[[list], int]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        assign(row)
    return len(rows) / (time.perf_counter() - wall), len(rows) / (time.process_time() - cpu)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    ints = [[rng.randint(-(2**31), 2**31 - 1)] for _ in range(args.rows)]
    pairs = [[i[0], f"user-{rng.randint(0, 10**6)}-{'x' * rng.randint(0, 10)}"] for i in ints]
    for label, rows, types in (("int", ints, ["int"]), ("int, string", pairs, ["int", "string"])):
        for version in (1, 2):
            table = bucketer(tuple(types), BUCKETS, version)
            for api, assign in (
                ("bucket_of", lambda row, t=types, v=version: bucket_of(row, t, BUCKETS, v)),
                ("bucketer", table),
            ):
                wall, cpu = _rate(rows, assign)
                print(f"{label:12s} v{version} {api:10s} {wall:12,.0f} rows/s wall {cpu:12,.0f} rows/s cpu")


if __name__ == "__main__":
    main()
