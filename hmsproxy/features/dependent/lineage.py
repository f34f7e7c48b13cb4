"""Lineage events of dependent tables (seed: "the inputs should also contain T@ds=1/hr=1 ... hr=24").

Publishing, re-pointing and dropping a dependent partition, and a protected change on a table
others depend on, each emit one OpenLineage-style run event: the job is the statement (or the
Thrift call), the inputs the underlying partitions with their locations, the output the
dependent partition. Events go to the configured sink (`dependent.lineage`: a JSON-lines file
or an HTTP endpoint; off by default) and to the audit log. A sink that fails is logged, never
fails the statement: the change itself is already in the store.
"""

from __future__ import annotations

import json
import logging
import urllib.request
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hmsproxy.config.errors import Ctx, join_key
from hmsproxy.config.fields import present, read_mapping, read_positive_number, read_section, read_str
from hmsproxy.ops.line_file import LineFile
from hmsproxy.pipeline.platform import ConfigSection

log = logging.getLogger(__name__)

PRODUCER = "https://github.com/hmsproxy/hmsproxy"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
JOB_NAMESPACE = "hmsproxy"


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


@dataclass(frozen=True)
class Dataset:
    """A table or one of its partitions, as lineage names it."""

    namespace: str  # hive://<metastore>
    name: str  # db.table as clients see it
    partition: str | None = None  # ds=1/hr=3
    location: str | None = None

    def as_json(self) -> dict:
        facets: dict[str, Any] = {}
        if self.partition is not None:
            facets["partition"] = {"_producer": PRODUCER, "spec": self.partition}
        if self.location is not None:
            facets["storage"] = {"_producer": PRODUCER, "location": self.location}
        return {"namespace": self.namespace, "name": self.name, "facets": facets}


def run_event(job: str, action: str, user: str | None, inputs: list[Dataset], outputs: list[Dataset], problem: str | None = None) -> dict:
    """One OpenLineage RunEvent (eventType COMPLETE); `action` says what happened, `problem` what broke."""
    run_facets: dict[str, Any] = {"hmsproxy": {"_producer": PRODUCER, "action": action, "user": user}}
    if problem is not None:
        run_facets["hmsproxy"]["problem"] = problem
    return {
        "eventType": "COMPLETE",
        "eventTime": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": str(uuid.uuid4()), "facets": run_facets},
        "job": {"namespace": JOB_NAMESPACE, "name": job},
        "inputs": [d.as_json() for d in inputs],
        "outputs": [d.as_json() for d in outputs],
    }


class LineageSink:
    """Writes events where the current config says (the file is reopened when a reload moves it)."""

    def __init__(self):
        self._file = LineFile()

    def emit(self, config: LineageConfig, event: dict) -> None:
        line = json.dumps(event, sort_keys=True)
        if config.file:
            try:
                self._file.write(config.file, line + "\n")
            except OSError as e:
                log.warning("dependent tables: can't write lineage event to %s: %s", config.file, e)
        if config.http:
            request = urllib.request.Request(config.http, data=line.encode(), headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=config.timeout_s) as response:
                    response.read()
            except OSError as e:
                log.warning("dependent tables: can't post lineage event to %s: %s", config.http, e)

    def close(self) -> None:
        self._file.close()
