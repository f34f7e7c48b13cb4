"""hmsproxy's command line."""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import threading
from pathlib import Path

from hmsproxy import __version__
from hmsproxy.clients.lookup_cli import add_lookup_parser
from hmsproxy.clients.token_cli import add_token_parser
from hmsproxy.jobs.cli import add_job_parser
from hmsproxy.ops.pid_file import DEFAULT_PID_FILE
from hmsproxy.protocol.sasl_options import add_sasl_options, sasl_principal
from hmsproxy.streaming.cli import add_stream_parser


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="hmsproxy YAML file")
    p.add_argument("--server-config", help="Waggle Dance's waggle-dance-server.yml")
    p.add_argument("--federation-config", help="Waggle Dance's waggle-dance-federation.yml")
    p.add_argument(
        "--strict",
        action="store_true",
        help="an unknown key in Waggle Dance's files is an error, not a warning (hmsproxy's own file: always)",
    )


def _load(args):
    from hmsproxy.app import config_sections
    from hmsproxy.config import load_from_paths

    if not args.config and not args.federation_config:
        raise SystemExit("hmsproxy: give --config FILE, or --server-config and --federation-config")
    return load_from_paths(
        config=args.config,
        server_config=args.server_config,
        federation_config=args.federation_config,
        feature_sections=config_sections(),
        strict=args.strict,
    )


def _setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper()), format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _serve_config(args):
    """The config files with the command line's overrides; a reload reads it again."""
    from dataclasses import replace

    config = _load(args)
    server_cfg, http = config.server, config.http
    if args.host:
        server_cfg = replace(server_cfg, host=args.host)
    if args.port is not None:
        server_cfg = replace(server_cfg, port=args.port)
    if args.workers is not None:
        server_cfg = replace(server_cfg, workers=args.workers)
    if args.http_port is not None:
        http = replace(http, port=args.http_port)
    return replace(config, server=server_cfg, http=http)


def cmd_serve(args) -> int:
    from hmsproxy.config import ConfigError
    from hmsproxy.ops.pid_file import refuse_if_running, remove_pid_file, write_pid_file

    config = _serve_config(args)
    refuse_if_running(args.pid_file)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a reload before the server is up must not kill it
    pid_file = Path(args.pid_file)
    try:
        if config.server.workers > 1:
            from hmsproxy.ops.workers import supervise

            _listen(config.server, reuse_port=True).close()  # taken: said here, once, not by each worker
            write_pid_file(pid_file)  # `hmsproxy reload` signals this (the supervising) process
            latest = [config]  # the last valid config: a restarted worker starts with it

            def reread():
                try:
                    latest[0] = _serve_config(args)
                except ConfigError:
                    pass  # each worker logs the rejection itself

            print(f"hmsproxy {__version__} starting {config.server.workers} workers", flush=True)
            return supervise(config.server.workers, lambda i: _serve_one(args, latest[0], worker=i), on_hup=reread)
        return _serve_one(args, config, on_listening=lambda: write_pid_file(pid_file))
    finally:
        remove_pid_file(pid_file)


def _listen(server_config, *, reuse_port: bool = False):
    """A socket listening on the configured address; one line (no traceback) when it is taken."""
    import socket

    try:
        return socket.create_server((server_config.host, server_config.port), reuse_port=reuse_port, backlog=128)
    except OSError as e:
        raise SystemExit(f"hmsproxy: can't start: {server_config.host}:{server_config.port} is not free ({e.strerror or e})") from None


def _serve_one(args, config, worker: int | None = None, on_listening=lambda: None) -> int:
    import os

    from hmsproxy.app import build_handler
    from hmsproxy.downstream.server import ProxyServer
    from hmsproxy.ops.reload import reload_config
    from hmsproxy.pipeline.platform import FeatureError
    from hmsproxy.protocol.sasl import SaslError

    s = config.server
    try:
        handler = build_handler(config)
    except FeatureError as e:  # a feature written wrong (a misspelled hook): no traceback, the reason
        raise SystemExit(f"hmsproxy: can't start: {e}") from None
    try:
        server = ProxyServer(handler, s.host, s.port, transport=s.transport, tls=s.tls, sasl=s.sasl, reuse_port=worker is not None)
    except SaslError as e:  # the keytab lacks the principal: said at start, not to the first client
        handler.close()
        raise SystemExit(f"hmsproxy: can't start: server.sasl: {e}") from None
    except OSError as e:  # the address is taken: one line naming it, no traceback
        handler.close()
        raise SystemExit(f"hmsproxy: can't start: {s.host}:{s.port} is not free ({e.strerror or e})") from None
    try:
        ops = _start_ops_http(handler, config.http, worker or 0)
    except SystemExit:
        server.stop()
        handler.close()
        raise
    signals = _catch_stop_signals()
    on_listening()
    who = "" if worker is None else f" worker {worker} (pid {os.getpid()})"
    print(
        f"hmsproxy {__version__}{who} serving {server.uri}{' (TLS)' if s.tls else ''}{' (Kerberos)' if s.sasl and s.sasl.enabled else ''}",
        flush=True,
    )
    _serve_until_signal(
        server,
        handler,
        signals,
        on_stop=[ops.stop] if ops else (),
        on_reload=lambda: reload_config(handler, lambda: _serve_config(args)),
    )
    return 0


def _start_ops_http(handler, http, offset: int = 0):
    """The /metrics, /healthz, /readyz endpoint if http.port is set; worker i uses port + i."""
    from hmsproxy.ops.http import OpsHttpServer

    if http.port is None:
        return None
    port = http.port + offset if http.port else 0
    try:
        ops = OpsHttpServer(handler, http.host, port).start()
    except OSError as e:  # the operations port is taken: one line naming it, no traceback
        raise SystemExit(f"hmsproxy: can't start: the operations endpoint's {http.host}:{port} is not free ({e.strerror or e})") from None
    print(f"operations endpoint {ops.url} (/metrics, /healthz, /readyz)", flush=True)
    return ops


def cmd_reload(args) -> int:
    from hmsproxy.ops.reload import signal_reload

    pid = signal_reload(args.pid_file)
    print(f"asked hmsproxy (pid {pid}) to reload; its log says whether the new configuration was applied")
    return 0


def _catch_stop_signals(reloadable: bool = True) -> tuple[threading.Event, threading.Event]:
    """(stop, hup) events set by SIGINT/SIGTERM and SIGHUP. Installed before the server says it
    serves: a SIGTERM sent as soon as "serving" is read then stops it cleanly (exit 0)."""
    stop, hup = threading.Event(), threading.Event()
    stop.by = None  # which signal: Ctrl-C (SIGINT) drains without the load balancer's notice

    def on_stop(signum, _frame):
        stop.by = signum
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_stop)
    if reloadable:
        signal.signal(signal.SIGHUP, lambda *_: hup.set())
    return stop, hup


def _serve_until_signal(server, handler, signals, on_stop=(), on_reload=None) -> None:
    from hmsproxy.ops.drain import CLOSE_GRACE_S, ExitDeadline, drain

    stop, hup = signals
    server.start()
    deadline = None
    try:
        while not stop.wait(0.5):
            if hup.is_set():  # reloaded here, not in the signal handler, so it may take locks
                hup.clear()
                on_reload()
        s = handler.config.server  # the current snapshot: a reload may have changed the bounds
        notice_s = 0.0 if getattr(stop, "by", None) == signal.SIGINT else s.drain_notice_s
        deadline = ExitDeadline(notice_s + s.drain_timeout_s + CLOSE_GRACE_S)
        drain(server, handler.draining, notice_s, s.drain_timeout_s)
    finally:
        server.stop()
        handler.close()
        for fn in on_stop:
            fn()
        if deadline is not None:  # left running: it bounds the interpreter's exit too
            deadline.closed()


def cmd_check_config(args) -> int:
    from hmsproxy.app import config_sections
    from hmsproxy.config import ConfigError, describe

    if args.keys:  # the key table needs no configuration: it comes from the keys' definitions
        from hmsproxy.config.key_table import markdown

        print(markdown(config_sections()), end="")
        return 0
    try:
        config = _load(args)
    except ConfigError as e:
        print(f"invalid: {e}", file=sys.stderr)
        return 1
    problem = _keytab_problem(config.server)
    if problem:
        print(f"invalid: server.sasl: {problem}", file=sys.stderr)
        return 1
    print(describe(config, config_sections()))
    return 0


def _keytab_problem(server) -> str | None:
    """Why the proxy could not accept Kerberos clients with server.sasl's keytab (it lacks the
    principal, gssapi is missing), as `serve` would say at start; None when it can."""
    if server.sasl is None or not server.sasl.enabled:
        return None
    from hmsproxy.protocol.sasl import SaslError
    from hmsproxy.upstream.kerberos import KerberosLogin

    try:
        KerberosLogin(server.sasl.principal, server.sasl.keytab, server.host, usage="accept").credentials()
    except SaslError as e:
        return str(e)
    return None


def cmd_status(args) -> int:
    import thriftpy2.rpc

    from hmsproxy.protocol import idl
    from hmsproxy.upstream.wire import parse_uri

    host, port = parse_uri(args.uri)
    client = thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=10000)
    try:
        print(client.hmsproxy_describe())
    finally:
        client.close()
    return 0


def _spark_sql(text: str, line: int = 1, column: int = 1) -> str | None:
    """The statement at `line`:`column` of a script, if it is Spark's or Hive's SQL rather than
    hmsproxy's (`SELECT 1`, `SHOW TABLES`): its first line, for saying where to run it."""
    from hmsproxy.ddl.starts import LEADING_NOISE
    from hmsproxy.features import is_hmsproxy_statement

    lines = text.split("\n")
    offset = sum(len(t) + 1 for t in lines[: line - 1]) + column - 1
    start = text.rfind(";", 0, offset) + 1  # the statement the position is in (a ';' in a string may mislead: a hint only)
    statement = text[start:]
    statement = statement[re.match(LEADING_NOISE, statement, re.S).end() :]
    if not statement or is_hmsproxy_statement(statement):
        return None
    return statement.split("\n", 1)[0].split(";", 1)[0].strip()


def _say_spark_sql(statement: str, where: str) -> int:
    print(
        f"hmsproxy: {statement!r}{where} is Spark SQL or Hive SQL, not one of hmsproxy's statements: run it in Spark "
        "or Hive, whose metastore is the proxy (`hmsproxy sql --help` lists hmsproxy's own)",
        file=sys.stderr,
    )
    return 1


def cmd_sql(args) -> int:
    """hmsproxy's own statements (CREATE/DROP/SHOW/DESCRIBE REMOTE ...) through a running proxy."""
    from hmsproxy.clients.proxy import HmsProxyClient, HmsProxyError
    from hmsproxy.ddl.errors import DdlSyntaxError
    from hmsproxy.ddl.results import format_table

    if args.file is not None:
        try:
            text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
        except OSError as e:
            print(f"hmsproxy: can't read {args.file}: {e.strerror}", file=sys.stderr)
            return 1
    else:
        text = args.execute
    try:
        principal = sasl_principal(args)
    except ValueError as e:
        print(f"hmsproxy: {e}", file=sys.stderr)
        return 2
    where = f" in {args.file}" if args.file else ""
    foreign = _spark_sql(text)
    if foreign:  # said before connecting: the proxy has nothing to add
        return _say_spark_sql(foreign, where)
    try:
        with HmsProxyClient(args.uri, user=args.user, sasl_principal=principal) as client:
            for n, rs in enumerate(client.execute(text, database=args.database)):
                if n:
                    print()
                print(rs.rows[0][0] if rs.columns == ["result"] and len(rs.rows) == 1 else format_table(rs))
    except DdlSyntaxError as e:
        foreign = _spark_sql(text, e.line, e.column)
        if foreign:
            return _say_spark_sql(foreign, f" (line {e.line}{where})")
        print(f"hmsproxy: syntax error{where} at {e}", file=sys.stderr)
        return 1
    except HmsProxyError as e:
        print(str(e) if str(e).startswith("hmsproxy:") else f"hmsproxy: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the proxy is down, the URI is wrong, ...
        print(f"hmsproxy: can't run statements through {args.uri}: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_dev_hms(args) -> int:
    from hmsproxy.dev.maven import FetchError
    from hmsproxy.dev.metastore import LocalMetastore

    hms = LocalMetastore(args.port, Path(args.state_dir), hive_version=args.hive)
    try:
        hms.start()
    except FetchError as e:
        raise SystemExit(f"hmsproxy: {e}") from None
    stop, _ = _catch_stop_signals(reloadable=False)
    print(f"Hive {args.hive} metastore ready at {hms.uri} (state in {args.state_dir}); Ctrl-C stops it", flush=True)
    try:
        while not stop.wait(0.5) and hms.is_running:
            pass
    finally:
        hms.stop()
    return 0


def cmd_dev_fetch(args) -> int:
    from hmsproxy.dev import waggle_dance
    from hmsproxy.dev.maven import FetchError, hive_home
    from hmsproxy.dev.versions import HIVE_VERSIONS, hive_version

    try:
        # "waggle-dance": the benchmark's comparison (hmsproxy.dev.waggle_dance); "storage": S3A, s3proxy and
        # the HDFS minicluster (hmsproxy.dev.storage_jars); both fetched by default too.
        if not args.versions or "storage" in args.versions:
            from hmsproxy.dev import storage_jars

            for line in storage_jars.fetch_all(say=lambda m: print(m, flush=True)):
                print(line, flush=True)
        if not args.versions or "iceberg-rest" in args.versions:  # the tests' REST catalog server
            from hmsproxy.dev import iceberg_rest

            print(f"Iceberg REST {iceberg_rest.VERSION}: {iceberg_rest.classpath(say=lambda m: print(m, flush=True))}", flush=True)
        if not args.versions or "iceberg-spark" in args.versions:  # Iceberg's Spark runtime, where pyspark's Spark has one
            from hmsproxy.dev import iceberg_jars

            if args.versions or iceberg_jars.has_runtime():
                print(f"Iceberg Spark runtime: {iceberg_jars.runtime_jar(say=lambda m: print(m, flush=True))}", flush=True)
        wanted = [v for v in args.versions if v not in ("waggle-dance", "storage", "iceberg-rest", "iceberg-spark")]
        versions = [hive_version(v) for v in wanted] or ([] if args.versions else list(HIVE_VERSIONS.values()))
        if not args.versions or "waggle-dance" in args.versions:
            print(f"Waggle Dance {waggle_dance.VERSION}: {waggle_dance.fetch(say=lambda m: print(m, flush=True))}", flush=True)
        for v in versions:
            v.prepare(say=lambda m: print(m, flush=True))
            print(f"Hive {v.name}: {hive_home(v.name) if v.fetched else 'pyspark jars'}", flush=True)
            if v.listener is not None:  # the notification listener's jars, if the version has one
                failed = v.listener.fetch(say=lambda m: print(m, flush=True))
                if failed:
                    raise FetchError(failed)
    except (ValueError, FetchError) as e:
        raise SystemExit(f"hmsproxy: {e}") from None
    return 0


def cmd_dev_up(args) -> int:
    from hmsproxy.app import config_sections
    from hmsproxy.config import describe
    from hmsproxy.dev.federation import parse_backends, start_federation
    from hmsproxy.dev.kept_ports import PortTaken
    from hmsproxy.dev.maven import FetchError
    from hmsproxy.dev.server_jvm import ServerFailed
    from hmsproxy.ops.pid_file import refuse_if_running, remove_pid_file, write_pid_file
    from hmsproxy.ops.reload import reload_config

    refuse_if_running(args.pid_file)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # `hmsproxy reload` while the metastores start must not kill it
    try:
        backends = parse_backends(args.backends)
        fed = start_federation(
            backends,
            Path(args.state_dir),
            host=args.host,
            port=args.port,
            http_port=args.http_port,
            demo=args.demo,
            storage=args.storage,
            say=lambda m: print(m, flush=True),
        )
    except (ValueError, FetchError, PortTaken, ServerFailed) as e:  # ServerFailed: the store's server, stopped, names its log
        raise SystemExit(f"hmsproxy: {e}") from None
    except OSError as e:  # e.g. the port was taken after the check (the metastores it started are stopped again)
        raise SystemExit(f"hmsproxy: can't serve on {args.host}: {e.strerror or e}") from None
    print(describe(fed.config, config_sections()))
    ops = _start_ops_http(fed.handler, fed.config.http)
    signals = _catch_stop_signals()
    pid_file = write_pid_file(args.pid_file)  # `hmsproxy reload` finds this process; before "ready" is said
    print("\n" + fed.usage(), flush=True)
    try:
        _serve_until_signal(
            fed.server,
            fed.handler,
            signals,
            on_stop=[*([ops.stop] if ops else []), fed.stop_metastores],
            # No config files to read again: a reload applies the dev config anew (routes re-resolved).
            on_reload=lambda: reload_config(fed.handler, lambda: fed.config),
        )
    finally:
        remove_pid_file(pid_file)
    return 0


class _StatementsHelp(argparse.Action):
    """`sql --help`: also every family of statements, from the features' grammar (loaded only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help="show this help message and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import textwrap

        from hmsproxy.features import builtin_grammar

        families = [s.summary for s in builtin_grammar().sets if s.summary]
        listed = [textwrap.fill(f, 100, initial_indent="  ", subsequent_indent="      ") for f in families]
        parser.epilog = "statements:\n" + "\n".join(listed)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        parser.print_help()
        parser.exit()


def _add_dev_parser(sub, full: bool) -> None:
    """`dev` and, if `full`, its sub-commands (declaring `dev hms --hive` imports the Hive versions,
    Maven's helpers among them: not for a command line that doesn't name `dev`)."""
    dev = sub.add_parser("dev", help="local federations for development and tests")
    if not full:
        return
    dsub = dev.add_subparsers(dest="dev_command", required=True)
    up = dsub.add_parser("up", help="start local metastores and hmsproxy in front of them")
    up.add_argument(
        "--backends",
        default="2",
        help="how many Hive 2.3 metastores (default 2: a primary and one federated), or their Hive versions, primary first: 2.3,3.1,4.0",
    )
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument(
        "--port", type=int, help="the proxy's port (default: the one kept in the state directory, else 9083; 0: any free port, then kept)"
    )
    up.add_argument("--http-port", type=int, help="serve /metrics, /healthz, /readyz on this port (0: the kept one, else any free port)")
    up.add_argument(
        "--state-dir",
        default=".state/dev",
        help="where metastores keep their data and ports.json their ports, the same at every start (default .state/dev)",
    )
    up.add_argument("--pid-file", default=DEFAULT_PID_FILE, help=f"where `hmsproxy reload` finds it (default {DEFAULT_PID_FILE})")
    up.add_argument("--demo", action="store_true", help="add sample data: database sales with table orders on fed1 (fed1_sales.orders)")
    up.add_argument(
        "--storage",
        choices=("local", "s3", "hdfs"),
        default="local",
        help="where the warehouses are: the local disk (default), s3proxy (s3a://warehouse) or an HDFS minicluster, "
        "started beside the metastores (jars: `hmsproxy dev fetch storage`)",
    )
    up.set_defaults(func=cmd_dev_up)
    hms = dsub.add_parser("hms", help="run one real local Hive metastore")
    hms.add_argument("--port", type=int, required=True)
    hms.add_argument("--state-dir", required=True)
    from hmsproxy.dev.versions import HIVE_VERSIONS  # light: no pyspark, no JVM

    hms.add_argument(
        "--hive",
        choices=tuple(HIVE_VERSIONS),
        default="2.3",
        help="Hive version (default 2.3 from pyspark; 3.1, 4.0, 4.2 fetched with Maven once)",
    )
    hms.set_defaults(func=cmd_dev_hms)
    fetch = dsub.add_parser(
        "fetch",
        help="download the jars of Hive metastore versions not in pyspark, Waggle Dance's and real storage's (once; later starts are offline)",
    )
    fetch.add_argument(
        "versions",
        nargs="*",
        metavar="VERSION",
        help="e.g. 3.1 4.0, waggle-dance (the benchmark's Waggle Dance jar), storage (S3A, s3proxy, the HDFS minicluster), "
        "iceberg-rest (Iceberg's REST catalog server, for the tests) or iceberg-spark (Iceberg's Spark runtime for pyspark's "
        "Spark); default: every version, each one's notification listener, Waggle Dance, storage, iceberg-rest and iceberg-spark",
    )
    fetch.set_defaults(func=cmd_dev_fetch)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given the arguments, without the jobs' own options unless they name `job`
    (declaring those imports every job module, a sixth of a short command like `hmsproxy sql`)."""
    p = argparse.ArgumentParser(prog="hmsproxy", description="A federating Hive Metastore proxy.")
    p.add_argument("--version", action="version", version=f"hmsproxy {__version__}")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR (default INFO)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve a federation described by config files")
    _add_config_args(s)
    s.add_argument("--host", help="override the listen address")
    s.add_argument("--port", type=int, help="override the listen port")
    s.add_argument("--http-port", type=int, help="serve /metrics, /healthz, /readyz on this port (0: any free port)")
    s.add_argument("--workers", type=int, help="processes sharing the port (overrides server.workers)")
    s.add_argument("--pid-file", default=DEFAULT_PID_FILE, help=f"where `hmsproxy reload` finds this server (default {DEFAULT_PID_FILE})")
    s.set_defaults(func=cmd_serve)

    r = sub.add_parser("reload", help="make a running `serve` re-read its config files (SIGHUP)")
    r.add_argument("--pid-file", default=DEFAULT_PID_FILE, help=f"the server's pid file (default {DEFAULT_PID_FILE})")
    r.set_defaults(func=cmd_reload)

    c = sub.add_parser("check-config", help="validate config and print the resolved federation")
    _add_config_args(c)
    c.add_argument("--keys", action="store_true", help="print every configuration key with its default and meaning (Markdown)")
    c.set_defaults(func=cmd_check_config)

    st = sub.add_parser("status", help="ask a running proxy for each backend's state and version")
    st.add_argument("--uri", default="thrift://127.0.0.1:9083")
    st.set_defaults(func=cmd_status)

    q = sub.add_parser(
        "sql",
        help="run hmsproxy's own statements (remote links, skew, dependent tables, indexes) through a proxy",
        description="Run hmsproxy's own statements through a running proxy.\nSpark SQL and Hive SQL "
        "(SELECT, SHOW TABLES, ...) run in Spark or Hive, whose metastore is the proxy.",
        add_help=False,
    )
    q.add_argument("-h", "--help", action=_StatementsHelp)
    what = q.add_mutually_exclusive_group(required=True)
    what.add_argument("-e", "--execute", metavar="SQL", help="the statements (';' between them)")
    what.add_argument("-f", "--file", metavar="FILE", help="a script of statements ('-': standard input)")
    q.add_argument("--uri", default="thrift://127.0.0.1:9083", help="the proxy (default thrift://127.0.0.1:9083)")
    q.add_argument("--user", help="run as this user (set_ugi; default: the OS user)")
    q.add_argument("--database", default="default", help="the current database, for unqualified tables (default 'default')")
    add_sasl_options(q)
    q.set_defaults(func=cmd_sql)

    _add_dev_parser(sub, full=argv is None or "dev" in argv)
    add_job_parser(sub, with_jobs=argv is None or "job" in argv)
    add_lookup_parser(sub)
    add_stream_parser(sub)
    add_token_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from hmsproxy.config import ConfigError

    as_command = argv is None  # the `hmsproxy` command itself, not a caller in this process
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    _setup_logging(args.log_level)
    try:
        code = args.func(args)
    except ConfigError as e:
        print(f"hmsproxy: invalid configuration: {e}", file=sys.stderr)
        return 2
    if as_command:
        _end_before_native_clients_abort(code)
    return code


def _end_before_native_clients_abort(code: int | None) -> None:
    """After an HDFS client was used, end the command without the interpreter's finalization:
    pyarrow's I/O threads serving its Python file system handler can abort the process there
    ("terminate called without an active exception", seen after `hmsproxy lookup` on HDFS had
    printed its answer), turning a finished command into a crash. The storage door's exit hook
    (filesystems.release_native_clients) makes that rare, not impossible: a command ends for sure."""
    from hmsproxy.files import filesystems

    if filesystems.native_clients_made():
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code or 0)


if __name__ == "__main__":
    sys.exit(main())
