"""The Thrift contract, loaded once.

Every module imports the generated classes from here so that a struct made in
one place is the same class everywhere (thriftpy2 builds classes per load).
"""

from pathlib import Path

import thriftpy2

THRIFT_DIR = Path(__file__).parent / "thrift"

hms = thriftpy2.load(
    str(THRIFT_DIR / "hmsproxy.thrift"),
    module_name="hmsproxy_thrift",
    include_dirs=[str(THRIFT_DIR)],
)
fb303 = hms.hive_metastore.fb303
hive = hms.hive_metastore

#: The service the proxy serves: the metastore's calls plus the proxy's own.
HmsProxy = hms.HmsProxy
#: The service the proxy calls on a backend.
ThriftHiveMetastore = hive.ThriftHiveMetastore
