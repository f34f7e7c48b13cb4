"""Argument types the jobs share (argparse `type=` functions with messages in words)."""

from __future__ import annotations

import argparse


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def share(text: str) -> float:
    """A fraction in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], not {value}")
    return value


def add_partition_option(parser: argparse.ArgumentParser, which: str = "partitions") -> None:
    """--partition K=V[/K2=V2], repeatable: the jobs' way to pick partitions (tables.parse_spec reads it)."""
    parser.add_argument(
        "--partition",
        action="append",
        default=[],
        metavar="K=V[/K2=V2]",
        help=f"only {which} matching this spec (repeatable; default: every partition)",
    )
