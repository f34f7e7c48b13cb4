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

from hmsproxy.config import readers as r
from hmsproxy.config.errors import Ctx
from hmsproxy.config.keys import key, section
from hmsproxy.config.sections import keyed_section


def _http_url(ctx: Ctx, path: str, raw: Any) -> str:
    url = r.text()(ctx, path, raw)
    if not url.startswith(("http://", "https://")):
        raise ctx.error(path, f"must be an http:// or https:// URL, got {url!r}")
    return url


@dataclass(frozen=True)
class LineageConfig:
    file: str | None = key("file", r.text(), "a file lineage events are appended to, as JSON lines", default=None)
    http: str | None = key("http", _http_url, "an http(s) URL each lineage event is POSTed to", default=None)
    timeout_s: float = key("timeout-s", r.positive, "seconds a POST may take", default=2.0)

    @property
    def enabled(self) -> bool:
        return bool(self.file or self.http)


@dataclass(frozen=True)
class DependentConfig:
    lineage: LineageConfig = key("lineage", section(LineageConfig), "where lineage events go", default=LineageConfig(), shown_default="off")


def _describe(settings: DependentConfig) -> list[str]:
    sinks = [s for s in (settings.lineage.file, settings.lineage.http) if s]
    return [f"Dependent tables' lineage events: {', '.join(sinks) if sinks else 'off'}"]


SECTION = keyed_section("dependent", DependentConfig, _describe)
