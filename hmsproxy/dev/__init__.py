"""Local development: real Hive metastores from pyspark's jars and the federation `hmsproxy dev up` starts."""
