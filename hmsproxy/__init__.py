"""hmsproxy: a federating Hive Metastore proxy."""

__version__ = "0.1.0"
