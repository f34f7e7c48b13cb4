"""The Thrift contract, loaded once.

Every module imports the generated classes from here so that a struct made in
one place is the same class everywhere (thriftpy2 builds classes per load).
"""

from pathlib import Path

from hmsproxy.protocol import idl_snapshot

THRIFT_DIR = Path(__file__).parent / "thrift"

# thriftpy2.load, or its snapshot from an earlier process (idl_snapshot.py): parsing costs ~0.2 s.
hms = idl_snapshot.load(THRIFT_DIR / "hmsproxy.thrift", module_name="hmsproxy_thrift", include_dirs=[THRIFT_DIR])
fb303 = hms.hive_metastore.fb303
hive = hms.hive_metastore

#: The service the proxy serves: the metastore's calls plus the proxy's own.
HmsProxy = hms.HmsProxy
#: The service the proxy calls on a backend.
ThriftHiveMetastore = hive.ThriftHiveMetastore
