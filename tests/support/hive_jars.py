"""Hive 3.1/4.0 jars for tests: fetched with Maven once (`make test` does it), else skip or, in CI, fail."""

from __future__ import annotations

from pathlib import Path

from hmsproxy.dev import maven
from hmsproxy.dev.versions import hive_version
from tests.support.required import unavailable


def require_hive(version: str) -> Path:
    """The directory holding Hive `version`'s jars (lib/), fetching them if needed."""
    try:
        hive_version(version).prepare()
    except maven.FetchError as exc:
        unavailable(f"cannot fetch Hive {version} with Maven: {exc}")
    return maven.hive_home(version)
