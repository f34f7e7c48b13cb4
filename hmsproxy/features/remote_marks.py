"""The parameters that mark a remote link: set by CREATE DATABASE / CREATE TABLE … TBLPROPERTIES to
ask for one, and carried by the database and table objects the remotes feature answers for linked
names. Other features read them to tell a remote apart (indexes refuse to index one)."""

from __future__ import annotations

LINK_URIS = "hmsproxy.remote.uris"
LINK_DATABASE = "hmsproxy.remote.database"
LINK_TABLE = "hmsproxy.remote.table"
LINK_FACTORY = "hmsproxy.remote.factory"
LINK_KEYS = (LINK_URIS, LINK_DATABASE, LINK_TABLE, LINK_FACTORY)


def is_link(parameters: dict | None) -> bool:
    """True if these parameters ask for, or describe, a remote instead of a real object."""
    return bool(parameters) and any(k in parameters for k in (LINK_URIS, LINK_FACTORY))
