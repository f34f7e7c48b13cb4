"""Local development: real Hive metastores (2.3 from pyspark's jars; 3.1, 4.0 and 4.2 fetched with Maven)
and the federation `hmsproxy dev up` starts.

- ``ports``: free TCP ports
- ``kept_ports``: the ports ``dev up`` keeps across restarts of one state directory
- ``jvm``: ``java``, pyspark's Hive jars, JVM flags
- ``maven``: fetching a Hive version's jars once into a cache (poms/)
- ``versions``: what each Hive version needs to start (classpath, main class, settings, schema)
- ``lifetime``: no metastore JVM outlives its Python process
- ``metastore``: ``LocalMetastore`` (one Hive metastore of any version, Derby) and ``start_metastores``
- ``config``: ``dev_config``, the federation ``dev up`` serves
- ``demo``: the sample data of ``dev up --demo``
- ``federation``: ``start_federation``, what ``dev up`` starts
"""
