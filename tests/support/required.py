"""What a test does when a real service it needs (PostgreSQL, sshd, ...) is not there.

On a developer machine the test is skipped with the reason. In CI (`CI=true`,
where `make test` installs everything) a missing service is a broken setup, so
the test fails with the reason instead of passing silently as a skip.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    if in_ci():
        pytest.fail(f"{reason} (CI=true: required here, so this fails instead of skipping)", pytrace=False)
    pytest.skip(reason)
