"""What every statement is: a frozen dataclass that remembers its own text. Features define the rest."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Statement:
    #: The statement's own text in the script (without the trailing ';').
    source: str = field(default="", compare=False, kw_only=True)
