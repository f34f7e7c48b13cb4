"""The proxy's own state: SQLAlchemy Core on SQLite or PostgreSQL. Features own their tables (a StoreSchema each)."""

from hmsproxy.store.db import AlreadyExists, Store, StoreError
from hmsproxy.store.schema import StoreSchema

__all__ = ["AlreadyExists", "Store", "StoreError", "StoreSchema"]
