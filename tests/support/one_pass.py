"""What the one-pass job tests share: a reference laid down partition by partition, then the pass
held to doing everything itself."""

from __future__ import annotations

from collections.abc import Callable

import pytest


def alone_then_only_the_pass(run: Callable, table: str, days: list[str], monkeypatch, module, names: tuple[str, ...]) -> None:
    """`run(table, '--partition', 'ds=<day>')` for each day (one target each: the job's per-partition
    path, the reference), then every function of `module` in `names` (its ways of working a partition
    on its own) fails the test when called."""
    for ds in days:
        status, ctx = run(table, "--partition", f"ds={ds}")
        assert status == 0, ctx.stderr.getvalue()

    def on_its_own(*args, **kwargs):
        pytest.fail(f"a partition of the pass was worked on its own ({module.__name__})")

    for name in names:
        monkeypatch.setattr(module, name, on_its_own)


def failed_alone(run: Callable, table: str, bad: str, partitions: int, done: str, monkeypatch, module, name: str) -> None:
    """Run the job on `table` whose partition ds=`bad` holds a file that is not Parquet: it must be the
    one partition worked on its own (`module.name`, called with the target fifth), fail with Spark's
    own reason and the job's one-line report, while the others are `done` ("rewritten", "laid out")."""
    real, alone = getattr(module, name), []

    def on_its_own(*args):
        alone.append(args[4].name)
        return real(*args)

    monkeypatch.setattr(module, name, on_its_own)
    status, ctx = run(table)
    assert status == 1
    assert f"{partitions - 1} {done}, 0 skipped, 1 failed" in ctx.stdout.getvalue()
    last = ctx.stderr.getvalue().strip().splitlines()[-1]
    assert f"failed for 1 of {partitions} partitions (left as they were); ds={bad}: " in last
    assert "part-broken.parquet is not a Parquet file" in last  # Spark's own reason, as working it alone gives
    assert alone == [f"ds={bad}"]  # its footer gave it away: the pass went on without it
