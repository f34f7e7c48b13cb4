"""`hmsproxy token fetch --uri URI --sasl --principal P --out FILE`: a delegation token from a
Kerberized proxy (as your Kerberos ticket), written as Hadoop's token storage file.

That file is what Hadoop processes read from HADOOP_TOKEN_FILE_LOCATION (YARN and Spark hand one
to every job): Hive's CLI or a Spark driver started with it and no Kerberos ticket logs in to the
proxy over SASL DIGEST-MD5 with the token whose service equals its hive.metastore.token.signature
(empty by default, as `--service` is). Exit status: 0 written, 1 the proxy refused, 2 bad usage.
"""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

from hmsproxy.protocol.sasl_options import add_sasl_options, sasl_principal

#: The alias the token is kept under in the file (Hadoop's Credentials are a map alias -> token).
DEFAULT_ALIAS = "hmsproxy"


def add_token_parser(sub) -> None:
    token = sub.add_parser("token", help="delegation tokens of a Kerberized proxy")
    tsub = token.add_subparsers(dest="token_command", required=True)
    fetch = tsub.add_parser(
        "fetch", help="get a delegation token as your Kerberos ticket and write it as a Hadoop token file (HADOOP_TOKEN_FILE_LOCATION)"
    )
    fetch.add_argument("--uri", default="thrift://127.0.0.1:9083", help="the proxy (default thrift://127.0.0.1:9083)")
    add_sasl_options(fetch)
    fetch.add_argument("--renewer", default="", help="who may renew the token (default: you)")
    fetch.add_argument(
        "--service",
        default="",
        help="the token's service: Hive's clients take the token whose service equals hive.metastore.token.signature (default: empty, its default)",
    )
    fetch.add_argument("--alias", default=DEFAULT_ALIAS, help=f"the token's name in the file (default {DEFAULT_ALIAS})")
    fetch.add_argument("--out", required=True, type=Path, help="the token file to write (readable by you only)")
    fetch.set_defaults(func=cmd_token_fetch)


def cmd_token_fetch(args) -> int:
    from hmsproxy.protocol.client import open_client
    from hmsproxy.protocol.delegation_token import Token, token_storage_file
    from hmsproxy.protocol.uris import parse_uri

    try:
        principal = sasl_principal(args)
    except ValueError as e:
        print(f"hmsproxy: {e}", file=sys.stderr)
        return 2
    if principal is None:
        print("hmsproxy: a proxy gives tokens only to Kerberos-authenticated connections: give --sasl --principal", file=sys.stderr)
        return 2
    host, port = parse_uri(args.uri)
    try:
        client = open_client(host, port, user=getpass.getuser(), timeout_s=60, sasl_principal=principal)
        try:
            text = client.get_delegation_token("", args.renewer)  # owner "": the caller's own token
        finally:
            client.close()
    except Exception as e:  # no ticket, the proxy refused, it is down, ...
        print(f"hmsproxy: can't get a delegation token from {args.uri}: {getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
    token = Token.decode(text)
    token = Token(token.identifier, token.password, token.kind, args.service)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # a token logs in as its owner
    with os.fdopen(fd, "wb") as out:
        out.write(token_storage_file({args.alias: token}))
    print(f"delegation token written to {args.out} (service {args.service!r}); use it with HADOOP_TOKEN_FILE_LOCATION={args.out}")
    return 0
