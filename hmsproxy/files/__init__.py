"""Data files and Hive's names for them, shared by the proxy's features and the maintenance jobs:
file systems (storage.py), partition names (partition_names.py), a data file's compact index rows
(compact_index.py). Imports neither side."""
