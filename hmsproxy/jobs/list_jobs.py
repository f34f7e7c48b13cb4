"""list: the available jobs and what they do. Needs no Spark and no metastore (it proves the seam)."""

from __future__ import annotations

import argparse

from hmsproxy.jobs.registry import Job, all_jobs


def format_jobs(jobs: list[Job]) -> str:
    width = max((len(j.name) for j in jobs), default=0)
    return "\n".join(f"{j.name:<{width}}  {j.help}" for j in jobs)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass  # none: `list` takes no options of its own


def run(args: argparse.Namespace, context) -> int:
    context.out(format_jobs(all_jobs()))
    return 0


JOB = Job("list", "list the available jobs", add_arguments, run)
