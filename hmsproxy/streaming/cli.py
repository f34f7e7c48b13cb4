"""`hmsproxy stream`: lines from standard input (or a file) into a table, committed every N rows or S seconds.

    tail -F app.log | hmsproxy stream shop.alerts --partition continent=Asia,country=India \\
        --format regex --regex '(?P<id>\\d+) (?P<msg>.*)' --rows-per-txn 10000 --seconds-per-txn 5

A reader thread feeds lines to the writer loop, so a quiet input still commits on time: a line waits
at most S seconds for its commit, and no transaction is begun while nothing comes. Records that
don't parse go to the dead-letter file (the record, a tab, the reason) when the lines around them
commit, never into the table. A failure other than a bad record is retried (retrying.py: a new
batch after an exponential pause, the held lines sent again); when retries run out the last
committed input line is printed, and `--skip N` resumes after it. Progress (rows, rows/s, commits,
rejected, retries) goes to standard error once a second; the last line sums up. Exit status: 0 done,
1 the stream failed (what was committed stays), 2 a usage error.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path

from hmsproxy.protocol.sasl_options import add_sasl_options, sasl_principal

EOF_MARK = object()


def add_stream_parser(sub) -> None:
    s = sub.add_parser(
        "stream",
        help="stream lines (CSV, JSON, regex) into a table in small transactions through the proxy",
        description="Stream records into a Parquet or ORC table through the proxy; each transaction's rows "
        "become visible to new queries when it commits.",
    )
    s.add_argument("table", metavar="DB.TABLE")
    s.add_argument("--partition", default="", help="the partition, as key=value,key=value (made if missing)")
    s.add_argument("--format", choices=("csv", "json", "regex"), default="csv")
    s.add_argument("--delimiter", default=",", help="csv: the field delimiter (default ',')")
    s.add_argument("--columns", help="csv: the input's field names, comma-separated (default: the table's columns)")
    s.add_argument("--regex", help="regex: named groups (or groups in column order) give the columns")
    s.add_argument("--rows-per-txn", type=int, default=10_000, help="commit after this many rows (default 10000)")
    s.add_argument(
        "--seconds-per-txn",
        type=float,
        default=5.0,
        help="commit a line at most this many seconds after it came; an idle input begins no transaction (default 5)",
    )
    s.add_argument("--txns-per-batch", type=int, default=10, help="transactions asked of the metastore at once (default 10)")
    s.add_argument("--retries", type=int, default=8, help="retries after failures in a row before giving up (default 8)")
    s.add_argument("--retry-backoff", type=float, default=1.0, help="seconds before the first retry, doubled each time (default 1)")
    s.add_argument("--retry-backoff-max", type=float, default=30.0, help="the longest pause between retries (default 30)")
    s.add_argument(
        "--skip", type=int, default=0, metavar="N", help="leave out the first N input lines (resume after the N printed on a failure)"
    )
    s.add_argument("--input", default="-", help="read this file instead of standard input")
    s.add_argument("--dead-letter", default="rejected.txt", help="where records that don't parse go (default rejected.txt)")
    s.add_argument("--uri", default="thrift://127.0.0.1:9083", help="the proxy (default thrift://127.0.0.1:9083)")
    s.add_argument("--user", help="stream as this user (default: the OS user)")
    add_sasl_options(s)
    s.set_defaults(func=cmd_stream)


def _partition_values(text: str, keys: tuple[str, ...]) -> list[str]:
    given = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            raise ValueError(f"--partition: {part!r} is not key=value")
        given[key.strip().lower()] = value.strip()
    if set(given) != set(keys):
        raise ValueError(f"--partition must give exactly the partition keys ({', '.join(keys) or 'none: the table is not partitioned'})")
    return [given[k] for k in keys]


def _writer(args, columns):
    from hmsproxy.streaming import DelimitedInputWriter, StrictJsonWriter, StrictRegexWriter

    if args.format == "json":
        return StrictJsonWriter()
    if args.format == "regex":
        if not args.regex:
            raise ValueError("--format regex needs --regex")
        return StrictRegexWriter(args.regex)
    names = [c.strip() for c in args.columns.split(",")] if args.columns else [name for name, _ in columns]
    return DelimitedInputWriter(names, args.delimiter.encode().decode("unicode_escape"))


def _read_lines(path: str, lines: queue.Queue) -> None:
    source = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    try:
        for line in source:
            lines.put(line.rstrip(b"\r\n"))
    finally:
        if source is not sys.stdin.buffer:
            source.close()
        lines.put(EOF_MARK)


class Progress:
    def __init__(self, out=sys.stderr):
        self.out = out
        self.started = self.last_shown = time.monotonic()
        self.rows = self.commits = self.rejected = self.retries = 0

    def show(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self.last_shown < 1.0:
            return
        self.last_shown = now
        rate = self.rows / max(now - self.started, 1e-9)
        line = f"rows {self.rows:,} ({rate:,.0f}/s)  commits {self.commits:,}  rejected {self.rejected:,}  retries {self.retries:,}"
        end = "\n" if final or not self.out.isatty() else "\r"
        print(line, end=end, file=self.out, flush=True)


def cmd_stream(args) -> int:
    from hmsproxy.files.locations import StorageError
    from hmsproxy.streaming import HiveEndPoint, StreamingError
    from hmsproxy.streaming.metastore import Metastore
    from hmsproxy.streaming.retrying import RetryingWriter
    from hmsproxy.streaming.target import describe_table

    db, dot, table = args.table.partition(".")
    if not dot or not db or not table:
        print(f"hmsproxy: stream: give the table as DB.TABLE, not {args.table!r}", file=sys.stderr)
        return 2
    if args.rows_per_txn < 1 or args.seconds_per_txn <= 0 or args.txns_per_batch < 1:
        print("hmsproxy: stream: --rows-per-txn, --seconds-per-txn and --txns-per-batch must be positive", file=sys.stderr)
        return 2
    if args.retries < 0 or args.skip < 0 or args.retry_backoff < 0 or args.retry_backoff_max < args.retry_backoff:
        print(
            "hmsproxy: stream: --retries, --skip and --retry-backoff must not be negative, nor --retry-backoff-max below --retry-backoff",
            file=sys.stderr,
        )
        return 2
    try:
        principal = sasl_principal(args)
    except ValueError as e:
        print(f"hmsproxy: stream: {e}", file=sys.stderr)
        return 2
    try:
        ms = Metastore(args.uri, args.user, sasl_principal=principal)
        try:
            target = describe_table(ms, db, table)
        finally:
            ms.close()
        values = _partition_values(args.partition, target.partition_keys)
        writer = _writer(args, target.columns)
    except ValueError as e:
        print(f"hmsproxy: stream: {e}", file=sys.stderr)
        return 2
    except StreamingError as e:
        print(f"hmsproxy: stream: {e}", file=sys.stderr)
        return 1
    lines: queue.Queue = queue.Queue(maxsize=100_000)
    threading.Thread(target=_read_lines, args=(args.input, lines), name="stream-input", daemon=True).start()
    progress = Progress()

    def retrying(attempt: int, pause: float, error: Exception) -> None:
        progress.retries += 1
        print(f"hmsproxy: stream: retry {attempt} of {args.retries} in {pause:g} s: {error}", file=sys.stderr, flush=True)

    stream = RetryingWriter(
        HiveEndPoint(args.uri, db, table, values),
        writer,
        txns_per_batch=args.txns_per_batch,
        retries=args.retries,
        backoff_s=args.retry_backoff,
        backoff_max_s=args.retry_backoff_max,
        auto_create_partition=True,
        user=args.user,
        sasl_principal=principal,
        on_retry=retrying,
    )
    try:
        stream.connect()  # a wrong partition, store or login fails now, in one line, and is not retried
    except (StreamingError, StorageError) as e:
        print(f"hmsproxy: stream: {e}", file=sys.stderr)
        stream.close()
        return 1
    run = _Run(stream, progress, Path(args.dead_letter), skip=args.skip)
    try:
        run.feed(lines, args.rows_per_txn, args.seconds_per_txn)
    except (StreamingError, StorageError) as e:
        if progress.rows or progress.commits:  # a failure before any row is the error's line alone
            progress.show(final=True)
        print(f"hmsproxy: stream: {e}", file=sys.stderr)
        run.say_where()
        return 1
    except KeyboardInterrupt:
        print("\nhmsproxy: stream: interrupted; the open transaction is aborted", file=sys.stderr)
        run.say_where()
        return 1
    finally:
        stream.close()
        run.close()
    progress.show(final=True)
    if progress.rejected:
        print(f"hmsproxy: stream: {progress.rejected} record(s) rejected: see {run.dead_letter}", file=sys.stderr)
    return 0


class _Run:
    """Input lines into the retrying writer; which input line was committed last, and the dead letters
    of the lines up to it (written at their commit, so a resumed run never writes one twice)."""

    def __init__(self, stream, progress: Progress, dead_letter: Path, *, skip: int):
        self.stream = stream
        self.progress = progress
        self.dead_letter = dead_letter
        self.read = 0  # input lines read, skipped ones included
        self.committed_through = skip  # every input line up to this one is committed or dead-lettered
        self._rejects: list[bytes] = []
        self._file = None

    def feed(self, lines: queue.Queue, rows_per_txn: int, seconds_per_txn: float) -> None:
        from hmsproxy.streaming import SerializationError

        skip, deadline = self.committed_through, None  # deadline: the first uncommitted line's + S
        while True:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                line = lines.get(timeout=wait)
            except queue.Empty:
                line = None
            if line is EOF_MARK:
                break
            if line is not None:
                self.read += 1
                if self.read <= skip:
                    self.committed_through = self.read
                    continue
                try:
                    self.stream.write(line)
                except SerializationError as e:
                    self._rejects.append(line + b"\t" + str(e).encode(errors="replace") + b"\n")
                if deadline is None:  # after the write: opening a batch (or retrying) is not the line's wait
                    deadline = time.monotonic() + seconds_per_txn
            self.progress.rows = self.stream.committed + self.stream.held
            self.progress.show()
            if self.stream.held >= rows_per_txn or (deadline is not None and time.monotonic() >= deadline):
                self.commit()
                deadline = None
        self.commit()

    def commit(self) -> None:
        if self.stream.commit():
            self.progress.commits += 1
        if self._rejects:
            if self._file is None:
                self._file = self.dead_letter.open("ab")
            self._file.writelines(self._rejects)
            self._file.flush()
            self.progress.rejected += len(self._rejects)
            self._rejects = []
        self.committed_through = self.read
        self.progress.rows = self.stream.committed

    def say_where(self) -> None:
        n = self.committed_through
        where = f"input lines 1-{n} are committed (or dead-lettered)" if n else "no input line is committed"
        print(f"hmsproxy: stream: {where}; resume with --skip {n}", file=sys.stderr)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
