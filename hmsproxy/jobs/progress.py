"""Progress of a job over its partitions, on standard error.

On a terminal: one bar redrawn in place (done/total, rows, bytes, elapsed, the
partition being worked on), failures printed above it so they stay visible. In a
log (stderr not a TTY): exactly one line per finished partition, no redraws, so
CI logs and spark-submit driver logs stay readable. The formatting is plain
functions so it can be tested without a terminal or a clock.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

OK, SKIPPED, FAILED = "ok", "skipped", "failed"


@dataclass(frozen=True)
class ItemResult:
    """How one partition ended; rows and bytes are what the job wrote (None: not known)."""

    status: str
    rows: int | None = None
    bytes: int | None = None
    note: str = ""


def format_count(n: int) -> str:
    return f"{n:,}"


def format_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_duration(seconds: float) -> str:
    """Seconds with one decimal under a minute, else m:ss or h:mm:ss."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def format_item_line(title: str, done: int, total: int, item: str, result: ItemResult, elapsed: float) -> str:
    """The log line for one finished partition."""
    head = f"{title} [{done}/{total}] {item}"
    if result.status == FAILED:
        return f"{head}: FAILED after {format_duration(elapsed)}: {result.note}"
    if result.status == SKIPPED:
        return f"{head}: skipped: {result.note}"
    parts = ["ok"]
    if result.rows is not None:
        parts.append(f"{format_count(result.rows)} rows")
    if result.bytes is not None:
        parts.append(format_bytes(result.bytes))
    parts.append(format_duration(elapsed))
    line = f"{head}: {', '.join(parts)}"
    return f"{line} ({result.note})" if result.note else line


def format_bar(fraction: float, width: int, ascii_only: bool = False) -> str:
    fraction = min(max(fraction, 0.0), 1.0)
    full, empty = ("#", "-") if ascii_only else ("█", "░")
    filled = int(round(fraction * width))
    return full * filled + empty * (width - filled)


def format_bar_line(
    title: str, done: int, total: int, rows: int, nbytes: int, elapsed: float, current: str | None, columns: int, ascii_only: bool = False
) -> str:
    """The one terminal line: cut to the terminal's width so it never wraps (a wrapped line can't be redrawn)."""
    bar = format_bar(done / total if total else 1.0, 20, ascii_only)
    sep = " | " if ascii_only else " · "
    fields = [f"{done}/{total}", f"{format_count(rows)} rows", format_bytes(nbytes), format_duration(elapsed)]
    if current:
        fields.append(current)
    line = f"{title} {bar} {sep.join(fields)}"
    limit = max(columns - 1, 10)
    return line if len(line) <= limit else line[: limit - 1] + ("~" if ascii_only else "…")


class Progress:
    """Counts finished partitions; subclasses decide how it looks. Use as a context manager."""

    def __init__(self, title: str, total: int, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self.title = title
        self.total = total
        self.stream = stream
        self.clock = clock
        self.done = self.rows = self.bytes = self.failed = self.skipped = 0
        self.started_at = clock()
        self.current: str | None = None
        self._item_started = self.started_at
        self._lock = threading.Lock()  # the bar's refresh thread draws too

    def start(self, item: str) -> None:
        with self._lock:
            self.current = item
            self._item_started = self.clock()
            self._on_start()

    def finish(self, item: str, result: ItemResult) -> None:
        with self._lock:
            elapsed = self.clock() - self._item_started
            self.done += 1
            self.rows += result.rows or 0
            self.bytes += result.bytes or 0
            self.failed += result.status == FAILED
            self.skipped += result.status == SKIPPED
            self.current = None
            self._on_finish(format_item_line(self.title, self.done, self.total, item, result, elapsed), result)

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started_at

    def close(self) -> None:
        pass

    def _on_start(self) -> None:
        pass

    def _on_finish(self, line: str, result: ItemResult) -> None:
        raise NotImplementedError

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LineProgress(Progress):
    """One line per finished partition (logs, pipes, CI)."""

    def _on_finish(self, line: str, result: ItemResult) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


class BarProgress(Progress):
    """A single bar redrawn in place; a thread redraws it so elapsed time moves during a long partition."""

    def __init__(
        self,
        title: str,
        total: int,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        *,
        refresh_s: float | None = 1.0,
        columns: Callable[[], int] | None = None,
    ):
        super().__init__(title, total, stream, clock)
        self._columns = columns or (lambda: shutil.get_terminal_size((100, 20)).columns)
        self._ascii = not _can_encode(stream, "█░·…")
        self._stop = threading.Event()
        self._closed = False
        self._thread = None
        with self._lock:
            self._draw()
        if refresh_s:
            self._thread = threading.Thread(target=self._refresh, args=(refresh_s,), name="job-progress", daemon=True)
            self._thread.start()

    def _line(self) -> str:
        return format_bar_line(
            self.title, self.done, self.total, self.rows, self.bytes, self.elapsed, self.current, self._columns(), self._ascii
        )

    def _draw(self) -> None:
        self.stream.write("\r" + self._line() + "\x1b[K")
        self.stream.flush()

    def _refresh(self, every: float) -> None:
        while not self._stop.wait(every):
            with self._lock:
                if not self._closed:
                    self._draw()

    def _on_start(self) -> None:
        self._draw()

    def _on_finish(self, line: str, result: ItemResult) -> None:
        if result.status == FAILED:  # above the bar, so it is still on screen when the job ends
            self.stream.write("\r" + line + "\x1b[K\n")
        self._draw()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._draw()
                self.stream.write("\n")
                self.stream.flush()


def _can_encode(stream: TextIO, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or fake stream
        return False


def make_progress(title: str, total: int, stream: TextIO, **kwargs) -> Progress:
    """The bar on a terminal, one line per partition anywhere else."""
    if is_terminal(stream):
        return BarProgress(title, total, stream, **kwargs)
    kwargs.pop("refresh_s", None)
    kwargs.pop("columns", None)
    return LineProgress(title, total, stream, **kwargs)
