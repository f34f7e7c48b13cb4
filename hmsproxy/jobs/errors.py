"""How a job ends: its exit status and the one line it prints on standard error."""

from __future__ import annotations

EXIT_OK = 0
#: The job ran and failed (a partition could not be rewritten, the table is missing, ...).
EXIT_FAILED = 1
#: The command line was wrong (argparse uses 2 too, so every usage error looks the same).
EXIT_USAGE = 2
#: Ctrl-C, as shells report SIGINT.
EXIT_INTERRUPTED = 130

_MAX_MESSAGE = 400


class JobError(Exception):
    """The job failed for a reason worth one line to the user; exit status 1."""


class UsageError(Exception):
    """The job was asked for something that cannot make sense (bad spec, wrong URI); exit status 2."""


def error_text(e: BaseException) -> str:
    """A metastore exception's own message (thriftpy2's str() of a declared exception is the struct's repr)."""
    return getattr(e, "message", None) or str(e) or type(e).__name__


def one_line(exc: BaseException | str, limit: int = _MAX_MESSAGE) -> str:
    """One line saying what went wrong, shortened.

    Spark and py4j errors carry whole Java stack traces; the user needs the
    innermost Java cause, or else the first line of the text (with the type of
    an unexpected exception).
    """
    root = None if isinstance(exc, str) else java_root_cause(exc)
    if root is not None:
        exc = root
    text = exc if isinstance(exc, str) else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # py4j's first line only says which Java call failed; the Java exception follows as ": <class>: <message>".
    if lines and lines[0].startswith("An error occurred while calling") and len(lines) > 1:
        lines = [lines[1].lstrip(": ")]
    first = lines[0] if lines else ""
    if not isinstance(exc, str) and not first:
        first = type(exc).__name__
    elif not isinstance(exc, (str, JobError, UsageError)) and type(exc).__name__ not in first:
        # An unexpected exception: its type tells what kind of failure it was.
        first = f"{type(exc).__name__}: {first}"
    return first if len(first) <= limit else first[: limit - 1] + "…"


def java_root_cause(exc: BaseException, max_depth: int = 32) -> str | None:
    """For a py4j error, '<Class>: <message>' of the deepest Java cause that has a message.

    Spark wraps a failed task as "Job aborted due to stage failure: … Exception
    thrown in awaitResult"; the innermost cause ("… is not a Parquet file", "No
    space left on device") is the part that says what to fix.
    """
    java = getattr(exc, "java_exception", None)
    found = None
    try:
        for _ in range(max_depth):
            if java is None:
                break
            message = java.getMessage()
            if message and message.strip():
                found = f"{java.getClass().getSimpleName()}: {message.strip()}"
            java = java.getCause()
    except Exception:  # the JVM is gone or this is not a Java object: fall back to Python's text
        return None
    return found
