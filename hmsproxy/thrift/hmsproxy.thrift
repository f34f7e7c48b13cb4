// hmsproxy's own service: the Hive Metastore API plus calls only the proxy answers.
// What it inherits matches the metastore jar shipped with pyspark; the methods added here
// must be allow-listed in tests/contract/test_idl_contract.py, which checks both.
include "hive_metastore.thrift"

namespace java io.hmsproxy.api

service HmsProxy extends hive_metastore.ThriftHiveMetastore {
  // The proxy's version and the federation it serves, as text (for `hmsproxy status`).
  string hmsproxy_describe() throws (1: hive_metastore.MetaException o1),
}
