"""`--sasl` and `--principal`: how every command of hmsproxy that talks to a proxy (sql, job, stream,
lookup) is told the proxy's port is Kerberized. Standard library only: every command declares them,
and a plain command must not load gssapi or the SASL code (protocol/kerberos_client.py loads it
when a connection needs it)."""

from __future__ import annotations

import argparse

#: Said when one of the two options comes without the other: a mistake, not a default.
TOGETHER = "--sasl and --principal go together (the proxy's principal, e.g. hive/_HOST@EXAMPLE.COM)"


def add_sasl_options(parser: argparse.ArgumentParser, default=None) -> None:
    """`default=argparse.SUPPRESS` for a sub-command's copy of options its parent also takes."""
    parser.add_argument(
        "--sasl",
        action="store_true",
        default=False if default is None else default,
        help="Kerberos (SASL GSSAPI) to a Kerberized proxy port, as your ticket cache (kinit)",
    )
    parser.add_argument(
        "--principal",
        default=default,
        help="with --sasl: the proxy's Kerberos principal, e.g. hive/_HOST@EXAMPLE.COM (_HOST: the URI's host)",
    )


def sasl_principal(args: argparse.Namespace) -> str | None:
    """The proxy's principal when --sasl is given with it, None without either; ValueError(TOGETHER)
    for one without the other."""
    sasl, principal = getattr(args, "sasl", False), getattr(args, "principal", None)
    if bool(sasl) != bool(principal):
        raise ValueError(TOGETHER)
    return principal if sasl else None
