// hmsproxy's own service: the Hive Metastore API plus calls only the proxy answers.
// What it inherits matches the metastore jar shipped with pyspark; the methods added here
// must be allow-listed in tests/contract/test_idl_contract.py, which checks both.
include "hive_metastore.thrift"

namespace java io.hmsproxy.api

// One statement's result as text.
struct HmsProxyResult {
  1: list<string> columns,
  2: list<list<string>> rows,
}

service HmsProxy extends hive_metastore.ThriftHiveMetastore {
  // The proxy's version and the federation it serves, as text (for `hmsproxy status`).
  string hmsproxy_describe() throws (1: hive_metastore.MetaException o1),
  // Run hmsproxy's own statements (CREATE/DROP/SHOW/DESCRIBE REMOTE ...) as the caller's
  // set_ugi user; `current_database` is where unqualified remote tables go. Answers the last
  // statement's result; a failing statement stops the script and arrives as MetaException.
  HmsProxyResult hmsproxy_execute(1: string statements, 2: string current_database)
      throws (1: hive_metastore.MetaException o1),
  // The same, answering one result per statement, in order (nothing runs on a syntax error).
  list<HmsProxyResult> hmsproxy_execute_script(1: string statements, 2: string current_database)
      throws (1: hive_metastore.MetaException o1),
}
