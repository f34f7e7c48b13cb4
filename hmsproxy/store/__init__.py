"""The proxy's own state: SQLAlchemy Core on SQLite or PostgreSQL. Features own their tables."""

from hmsproxy.store.db import AlreadyExists, Store, StoreError, store_check

__all__ = ["AlreadyExists", "Store", "StoreError", "store_check"]
