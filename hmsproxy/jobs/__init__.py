"""Maintenance jobs: PySpark jobs run through the proxy (`hmsproxy job NAME`, `python -m hmsproxy.jobs NAME`).

Each job is a pure DataFrame function wrapped in a thin I/O shell; the shared
pieces are modules of this package: `session` (Spark wired to the proxy),
`metastore` (the proxy over Thrift), `tables` (which partitions, where, what
format), `storage` (files through Hadoop), `swap` (new files beside the old,
location switched in the metastore), `progress`, `errors` (exit status).
"""

from hmsproxy.jobs.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, JobError, UsageError
from hmsproxy.jobs.registry import Job, all_jobs, get_job, register

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Job", "JobError", "UsageError", "all_jobs", "get_job", "register"]
