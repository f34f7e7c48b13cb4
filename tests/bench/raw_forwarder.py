"""The floor of any Python metastore proxy: a byte forwarder that reads nothing it forwards.

``bench_proxy --floor`` runs it beside hmsproxy, in front of the same metastore (its own config
file and port), as a third path interleaved in the same runs, so the benchmark shows what a proxy
costs on this machine before it does any work: an extra loopback hop each way and a Python
process copying bytes (one thread per direction per client).
Not a product: no Thrift, no routing, no limits.

    python -m tests.bench.raw_forwarder CONFIG   (server.port and the primary's first URI)
"""

from __future__ import annotations

import socket
import sys
import threading

import yaml

from hmsproxy.upstream.wire import parse_uri


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65_536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _connect(backend: tuple[str, int], client: socket.socket) -> None:
    upstream = socket.create_connection(backend)
    for s in (client, upstream):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
    _pump(client, upstream)
    client.close()
    upstream.close()


def main(config_path: str) -> int:
    with open(config_path, encoding="utf-8") as fh:
        config = yaml.safe_load(fh)
    port = int(config["server"]["port"])
    backend = parse_uri(str(config["primary-meta-store"]["remote-meta-store-uris"]).split(",")[0])
    listener = socket.create_server(("127.0.0.1", port), backlog=128)
    print(f"raw byte forwarder serving thrift://127.0.0.1:{port} -> {backend[0]}:{backend[1]}", flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_connect, args=(backend, client), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
