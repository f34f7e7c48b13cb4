"""The `job` command: `hmsproxy job NAME [options]` and `python -m hmsproxy.jobs NAME [options]`.

Both share one argument layout: common options (--uri, --conf) before or after
the job's name, then the job's own. Exit status: 0 done, 1 the job failed (one
line on stderr says why), 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from hmsproxy.jobs.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, JobError, UsageError, one_line
from hmsproxy.jobs.registry import all_jobs, get_job
from hmsproxy.jobs.session import DEFAULT_URI
from hmsproxy.protocol.sasl_options import add_sasl_options, sasl_principal

if TYPE_CHECKING:
    from hmsproxy.jobs.context import JobContext


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key.strip(), value


def _add_common(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument(
        "--uri",
        default=default,
        metavar="thrift://HOST:PORT",
        help=f"the proxy (default: the running SparkSession's metastore, else {DEFAULT_URI})",
    )
    parser.add_argument(
        "--conf",
        action="append",
        type=_conf_pair,
        default=default,
        metavar="KEY=VALUE",
        help="a Spark setting for the job's local session (repeatable)",
    )
    parser.add_argument(
        "--master",
        default=default,
        metavar="URL",
        help="the Spark master of the job's session: spark://HOST:PORT, yarn, k8s://…, local[N] (default: local[*]; under spark-submit, its --master)",
    )
    parser.add_argument(
        "--remote",
        default=default,
        metavar="sc://HOST:PORT",
        help="run on a Spark Connect server (default: SPARK_REMOTE if set); its metastore must be the proxy",
    )
    add_sasl_options(parser, default)  # a Kerberized proxy port: the job's connections and its Spark


def configure(parser: argparse.ArgumentParser) -> None:
    """Common options, then one sub-command per job with its own options."""
    _add_common(parser, None)
    sub = parser.add_subparsers(dest="job_name", metavar="NAME", required=True)
    for job in all_jobs():
        p = sub.add_parser(job.name, help=job.help, description=job.help)
        _add_common(p, argparse.SUPPRESS)  # also accepted after the name; SUPPRESS keeps the earlier value
        job.add_arguments(p)


def add_job_parser(subparsers, with_jobs: bool = True) -> None:
    """Add `job` to hmsproxy's sub-commands (`args.func` runs it). `with_jobs=False` leaves out each job's
    sub-command and options, for a command line that doesn't run one (no job module is imported)."""
    p = subparsers.add_parser(
        "job",
        help="run a maintenance job (PySpark) through the proxy",
        description="Run a maintenance job on a SparkSession wired to the proxy.",
    )
    if with_jobs:
        configure(p)
    p.set_defaults(func=run_job_command)


def run_job_command(args: argparse.Namespace, context: JobContext | None = None) -> int:
    """Run `args.job_name`; the exit status. `context` lets a caller (a test) pass its own session and streams."""
    from hmsproxy.jobs.context import JobContext  # Thrift and the IDL load here, not with hmsproxy's parser

    job = get_job(args.job_name)
    try:
        principal = sasl_principal(args)
    except ValueError as e:
        print(f"hmsproxy job {job.name}: {e}", file=(context.stderr if context else sys.stderr), flush=True)
        return EXIT_USAGE
    ctx = context or JobContext(
        args.uri, spark_conf=dict(args.conf or []), sasl_principal=principal, master=args.master, remote=args.remote
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)  # py4j logs every gateway call at INFO
    try:
        return job.run(args, ctx)
    except UsageError as e:
        print(f"hmsproxy job {job.name}: {one_line(e)}", file=ctx.stderr, flush=True)
        return EXIT_USAGE
    except JobError as e:
        print(f"hmsproxy job {job.name}: {one_line(e)}", file=ctx.stderr, flush=True)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print(f"hmsproxy job {job.name}: interrupted", file=ctx.stderr, flush=True)
        return EXIT_INTERRUPTED
    except Exception as e:  # unexpected: still one line, the type says what kind of failure
        print(f"hmsproxy job {job.name}: failed: {one_line(e)}", file=ctx.stderr, flush=True)
        return EXIT_FAILED
    finally:
        if context is None:
            ctx.close()


def build_parser(prog: str = "python -m hmsproxy.jobs") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Run an hmsproxy maintenance job (also under spark-submit).")
    configure(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_job_command(args)
