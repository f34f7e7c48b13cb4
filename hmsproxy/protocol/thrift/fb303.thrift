// fb303: the base service ThriftHiveMetastore extends (status, counters, options).
// Its methods, argument ids and types match libfb303 as shipped in pyspark's jars/,
// which tests/contract/test_idl_contract.py checks.

namespace java com.facebook.fb303

enum fb_status {
  DEAD = 0,
  STARTING = 1,
  ALIVE = 2,
  STOPPING = 3,
  STOPPED = 4,
  WARNING = 5,
}

service FacebookService {
  i64 aliveSince(),
  i64 getCounter(1: string key),
  map<string,i64> getCounters(),
  string getCpuProfile(1: i32 profileDurationInSec),
  string getName(),
  string getOption(1: string key),
  map<string,string> getOptions(),
  fb_status getStatus(),
  string getStatusDetails(),
  string getVersion(),
  oneway void reinitialize(),
  void setOption(1: string key, 2: string value),
  oneway void shutdown(),
}
