"""The jobs by name.

A job is a name, a one-line help, the options it adds to its command line and
`run(args, context) -> exit status`. The built-in jobs are modules of this
package, each defining `JOB`; they are imported only when the registry is first
asked, so `import hmsproxy.jobs` (and the `hmsproxy` CLI) stays cheap.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hmsproxy.jobs.context import JobContext

#: Modules that define a built-in job as `JOB`; later jobs (rebuild-index, skew-layout) add theirs here.
BUILTIN_MODULES = ("hmsproxy.jobs.list_jobs", "hmsproxy.jobs.compact", "hmsproxy.jobs.skew_layout", "hmsproxy.jobs.rebuild_index")


@dataclass(frozen=True)
class Job:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, JobContext], int]


_jobs: dict[str, Job] = {}
_loaded = False


def register(job: Job) -> Job:
    """Add a job; a second job of the same name is a programming error."""
    existing = _jobs.get(job.name)
    if existing is not None and existing is not job:
        raise ValueError(f"a job named {job.name!r} is already registered")
    _jobs[job.name] = job
    return job


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    for module in BUILTIN_MODULES:
        job: Any = importlib.import_module(module).JOB
        register(job)
    _loaded = True


def all_jobs() -> list[Job]:
    """Every job, sorted by name (the order `list` and `--help` show them in)."""
    _load_builtins()
    return sorted(_jobs.values(), key=lambda j: j.name)


def get_job(name: str) -> Job:
    _load_builtins()
    try:
        return _jobs[name]
    except KeyError:
        raise KeyError(f"no job named {name!r}; known: {', '.join(sorted(_jobs))}") from None
