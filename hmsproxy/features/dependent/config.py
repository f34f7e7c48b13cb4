"""The `dependent` section of hmsproxy's YAML: where lineage events go (lineage.py).

dependent:
  lineage:
    file: /var/log/hmsproxy/lineage.jsonl   # JSON lines, appended
    http: https://lineage.example/api/v1/lineage   # POSTed one event per request
    timeout-s: 2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import present, read_mapping, read_positive_number, read_section, read_str
from hmsproxy.pipeline.platform import ConfigSection


@dataclass(frozen=True)
class LineageConfig:
    file: str | None = None  # JSON lines, appended
    http: str | None = None  # POSTed one event per request
    timeout_s: float = 2.0

    @property
    def enabled(self) -> bool:
        return bool(self.file or self.http)


@dataclass(frozen=True)
class DependentConfig:
    lineage: LineageConfig = LineageConfig()


def parse(ctx: Ctx, raw: Any) -> DependentConfig:
    path = "dependent"
    section = read_section(ctx, path, read_mapping(ctx, path, raw), ("lineage",))
    if not present(section, "lineage"):
        return DependentConfig()
    lpath = join_key(path, "lineage")
    lineage = read_section(ctx, lpath, read_mapping(ctx, lpath, section["lineage"]), ("file", "http", "timeout-s"))
    file = read_str(ctx, join_key(lpath, "file"), lineage["file"]) if present(lineage, "file") else None
    http = read_str(ctx, join_key(lpath, "http"), lineage["http"]) if present(lineage, "http") else None
    if http is not None and not http.startswith(("http://", "https://")):
        raise ctx.error(join_key(lpath, "http"), f"must be an http:// or https:// URL, got {http!r}")
    timeout = read_positive_number(ctx, join_key(lpath, "timeout-s"), lineage["timeout-s"]) if present(lineage, "timeout-s") else 2.0
    return DependentConfig(LineageConfig(file, http, timeout))


def _describe(settings: DependentConfig) -> list[str]:
    sinks = [s for s in (settings.lineage.file, settings.lineage.http) if s]
    return [f"Dependent tables' lineage events: {', '.join(sinks) if sinks else 'off'}"]


SECTION = ConfigSection("dependent", parse, DependentConfig(), _describe)
