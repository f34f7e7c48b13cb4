"""Local development: real Hive metastores from pyspark's jars and the federation `hmsproxy dev up` starts.

- ``ports``: free TCP ports
- ``jvm``: ``java``, pyspark's Hive jars, JVM flags
- ``lifetime``: no metastore JVM outlives its Python process
- ``metastore``: ``LocalMetastore`` (one Hive 2.3 metastore, Derby) and ``start_metastores``
- ``config``: ``dev_config``, the federation ``dev up`` serves
- ``demo``: the sample data of ``dev up --demo``
- ``federation``: ``start_federation``, what ``dev up`` starts
"""
