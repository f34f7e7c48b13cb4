"""What a statement answers: columns and rows of text, and how the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ResultSet:
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def as_dicts(self) -> list[dict[str, str]]:
        return [dict(zip(self.columns, row)) for row in self.rows]


def format_table(rs: ResultSet) -> str:
    """An aligned text table: header, rule, rows (as `psql` does)."""
    widths = [len(c) for c in rs.columns]
    for row in rs.rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells):
        return " | ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(rs.columns), "-+-".join("-" * w for w in widths)]
    out.extend(line(row) for row in rs.rows)
    n = len(rs.rows)
    out.append(f"({n} row{'s' if n != 1 else ''})")
    return "\n".join(out)
