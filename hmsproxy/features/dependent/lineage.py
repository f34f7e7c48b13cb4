"""Lineage events of dependent tables (seed: "the inputs should also contain T@ds=1/hr=1 ... hr=24").

Publishing, re-pointing and dropping a dependent partition, and a protected change on a table
others depend on, each emit one OpenLineage-style run event: the job is the statement (or the
Thrift call), the inputs the underlying partitions with their locations, the output the
dependent partition. Events go to the configured sink (`dependent.lineage`: a JSON-lines file
or an HTTP endpoint, config.py; off by default) and to the audit log. A sink that fails is logged, never
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

from hmsproxy.features.dependent.config import LineageConfig
from hmsproxy.ops.line_file import LineFile

log = logging.getLogger(__name__)

PRODUCER = "https://github.com/hmsproxy/hmsproxy"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
JOB_NAMESPACE = "hmsproxy"


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
