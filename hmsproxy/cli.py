"""hmsproxy's command line."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from hmsproxy import __version__


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="hmsproxy YAML file")
    p.add_argument("--server-config", help="Waggle Dance's waggle-dance-server.yml")
    p.add_argument("--federation-config", help="Waggle Dance's waggle-dance-federation.yml")


def _load(args):
    from hmsproxy.config import load_from_paths

    if not args.config and not args.federation_config:
        raise SystemExit("hmsproxy: give --config FILE, or --server-config and --federation-config")
    return load_from_paths(config=args.config, server_config=args.server_config, federation_config=args.federation_config)


def _setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper()), format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def cmd_serve(args) -> int:
    from dataclasses import replace

    from hmsproxy.app import build_handler
    from hmsproxy.server import ProxyServer

    config = _load(args)
    server_cfg = config.server
    if args.host:
        server_cfg = replace(server_cfg, host=args.host)
    if args.port is not None:
        server_cfg = replace(server_cfg, port=args.port)
    config = replace(config, server=server_cfg)
    handler = build_handler(config)
    server = ProxyServer(handler, server_cfg.host, server_cfg.port, transport=server_cfg.transport)
    print(f"hmsproxy {__version__} serving {server.uri}", flush=True)
    _serve_until_signal(server, handler)
    return 0


def _serve_until_signal(server, handler, on_stop=()) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        handler.close()
        for fn in on_stop:
            fn()


def cmd_check_config(args) -> int:
    from hmsproxy.config import ConfigError, describe

    try:
        config = _load(args)
    except ConfigError as e:
        print(f"invalid: {e}", file=sys.stderr)
        return 1
    print(describe(config))
    return 0


def cmd_status(args) -> int:
    import thriftpy2.rpc

    from hmsproxy import idl
    from hmsproxy.wire import parse_uri

    host, port = parse_uri(args.uri)
    client = thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=10000)
    try:
        print(client.hmsproxy_describe())
    finally:
        client.close()
    return 0


def cmd_dev_hms(args) -> int:
    from hmsproxy.devstack import LocalMetastore

    hms = LocalMetastore(args.port, Path(args.state_dir))
    hms.start()
    print(f"metastore ready at {hms.uri} (state in {args.state_dir}); Ctrl-C stops it", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.wait(0.5) and hms.is_running:
            pass
    finally:
        hms.stop()
    return 0


def cmd_dev_up(args) -> int:
    from hmsproxy.devstack import dev_config, free_port, start_metastores
    from hmsproxy.app import build_handler
    from hmsproxy.server import ProxyServer

    if args.backends < 1:
        raise SystemExit("hmsproxy: --backends must be at least 1")
    state = Path(args.state_dir).resolve()
    print(f"starting {args.backends} local metastores (state in {state}) ...", flush=True)
    metastores = start_metastores(args.backends, state)
    try:
        config = dev_config([m.uri for m in metastores], host=args.host, port=args.port)
        handler = build_handler(config)
        server = ProxyServer(handler, args.host, args.port)
    except BaseException:
        for m in metastores:
            m.stop()
        raise
    from hmsproxy.config import describe

    print(describe(config))
    print(
        "\nhmsproxy is serving {uri}. Use it from Spark with:\n"
        "  spark.sql.catalogImplementation=hive\n"
        "  spark.hadoop.hive.metastore.uris={uri}\n"
        "  spark.sql.warehouse.dir={wh}\n"
        "Ctrl-C stops the proxy and the metastores.".format(uri=server.uri, wh=state / "spark-warehouse"),
        flush=True,
    )
    _serve_until_signal(server, handler, on_stop=[m.stop for m in metastores])
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hmsproxy", description="A federating Hive Metastore proxy.")
    p.add_argument("--version", action="version", version=f"hmsproxy {__version__}")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR (default INFO)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve a federation described by config files")
    _add_config_args(s)
    s.add_argument("--host", help="override the listen address")
    s.add_argument("--port", type=int, help="override the listen port")
    s.set_defaults(func=cmd_serve)

    c = sub.add_parser("check-config", help="validate config and print the resolved federation")
    _add_config_args(c)
    c.set_defaults(func=cmd_check_config)

    st = sub.add_parser("status", help="ask a running proxy for each backend's state and version")
    st.add_argument("--uri", default="thrift://127.0.0.1:9083")
    st.set_defaults(func=cmd_status)

    dev = sub.add_parser("dev", help="local federations for development and tests")
    dsub = dev.add_subparsers(dest="dev_command", required=True)
    up = dsub.add_parser("up", help="start local metastores and hmsproxy in front of them")
    up.add_argument("--backends", type=int, default=2, help="how many metastores (default 2: a primary and one federated)")
    up.add_argument("--host", default="127.0.0.1")
    up.add_argument("--port", type=int, default=9083)
    up.add_argument("--state-dir", default=".state/dev", help="where metastores keep their data (default .state/dev)")
    up.set_defaults(func=cmd_dev_up)
    hms = dsub.add_parser("hms", help="run one real local Hive metastore")
    hms.add_argument("--port", type=int, required=True)
    hms.add_argument("--state-dir", required=True)
    hms.set_defaults(func=cmd_dev_hms)
    return p


def main(argv: list[str] | None = None) -> int:
    from hmsproxy.config import ConfigError

    args = build_parser().parse_args(argv)
    _setup_logging(args.log_level)
    try:
        return args.func(args)
    except ConfigError as e:
        print(f"hmsproxy: invalid configuration: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
