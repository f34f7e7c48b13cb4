"""The proxy's own state (remote databases and tables, ...): SQLAlchemy Core on SQLite or PostgreSQL."""

from hmsproxy.store.db import AlreadyExists, Store, StoreError, store_check
from hmsproxy.store.remotes import RemoteDatabase, RemoteRepository, RemoteTable

__all__ = ["AlreadyExists", "RemoteDatabase", "RemoteRepository", "RemoteTable", "Store", "StoreError", "store_check"]
