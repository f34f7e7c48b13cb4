// The Hive Metastore Thrift API (the Hive 2.3 wire contract) that hmsproxy serves and calls.
// Struct field ids, names and types, enums and methods match hive-metastore-2.3.x as shipped
// in pyspark's jars/; tests/contract/test_idl_contract.py checks that, and lets through only
// the few optional Hive 3.x fields marked below and the Hive 3/4 request calls at the end.

include "fb303.thrift"

namespace java org.apache.hadoop.hive.metastore.api

enum ClientCapability {
  TEST_CAPABILITY = 1,
}

enum CompactionType {
  MINOR = 1,
  MAJOR = 2,
}

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

enum EventRequestType {
  INSERT = 1,
  UPDATE = 2,
  DELETE = 3,
}

enum FileMetadataExprType {
  ORC_SARG = 1,
}

enum FunctionType {
  JAVA = 1,
}

enum GrantRevokeType {
  GRANT = 1,
  REVOKE = 2,
}

enum HiveObjectType {
  GLOBAL = 1,
  DATABASE = 2,
  TABLE = 3,
  PARTITION = 4,
  COLUMN = 5,
}

enum LockLevel {
  DB = 1,
  TABLE = 2,
  PARTITION = 3,
}

enum LockState {
  ACQUIRED = 1,
  WAITING = 2,
  ABORT = 3,
  NOT_ACQUIRED = 4,
}

enum LockType {
  SHARED_READ = 1,
  SHARED_WRITE = 2,
  EXCLUSIVE = 3,
}

enum PartitionEventType {
  LOAD_DONE = 1,
}

enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

enum ResourceType {
  JAR = 1,
  FILE = 2,
  ARCHIVE = 3,
}

enum TxnState {
  COMMITTED = 1,
  ABORTED = 2,
  OPEN = 3,
}

// From Hive 3.x/4.x: not in the 2.3 jar.
enum TxnType {
  DEFAULT = 0,
  REPL_CREATED = 1,
  READ_ONLY = 2,
  COMPACTION = 3,
  MATER_VIEW_REBUILD = 4,
  SOFT_DELETE = 5,
  REBALANCE_COMPACTION = 6,
}

// Hive 3.x/4.x's transaction structs: write ids and commit options (the 4.0.1 layout).
struct TxnToWriteId {
  1: required i64 txnId,
  2: required i64 writeId,
}

struct AllocateTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: optional list<i64> txnIds,
  4: optional string replPolicy,
  5: optional list<TxnToWriteId> srcTxnToWriteIdList,
  6: optional bool reallocate,
}

struct AllocateTableWriteIdsResponse {
  1: required list<TxnToWriteId> txnToWriteIds,
}

struct GetValidWriteIdsRequest {
  1: required list<string> fullTableNames,
  2: optional string validTxnList,
  3: optional i64 writeId,
}

struct TableValidWriteIds {
  1: required string fullTableName,
  2: required i64 writeIdHighWaterMark,
  3: required list<i64> invalidWriteIds,
  4: optional i64 minOpenWriteId,
  5: required binary abortedBits,
}

// Hive 4's get_open_txns_req: the snapshot Hive 4's DbTxnManager takes; answered by the primary.
struct GetOpenTxnsRequest {
  1: optional list<TxnType> excludeTxnTypes,
}

struct GetValidWriteIdsResponse {
  1: required list<TableValidWriteIds> tblValidWriteIds,
}

struct WriteEventInfo {
  1: required i64 writeId,
  2: required string database,
  3: required string table,
  4: required string files,
  5: optional string partition,
  6: optional string tableObj,
  7: optional string partitionObj,
}

struct ReplLastIdInfo {
  1: required string database,
  2: required i64 lastReplId,
  3: optional string table,
  4: optional string catalog,
  5: optional list<string> partitionList,
}

struct CommitTxnKeyValue {
  1: required i64 tableId,
  2: required string key,
  3: required string value,
}

struct AbortTxnRequest {
  1: required i64 txnid,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  2: optional string replPolicy,
  3: optional TxnType txn_type,
  4: optional i64 errorCode,
}

struct AbortTxnsRequest {
  1: required list<i64> txn_ids,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  2: optional i64 errorCode,
}

struct AddDynamicPartitions {
  1: required i64 txnid,
  2: required string dbname,
  3: required string tablename,
  4: required list<string> partitionnames,
  5: optional DataOperationType operationType,
}

struct SQLForeignKey {
  1: string pktable_db,
  2: string pktable_name,
  3: string pkcolumn_name,
  4: string fktable_db,
  5: string fktable_name,
  6: string fkcolumn_name,
  7: i32 key_seq,
  8: i32 update_rule,
  9: i32 delete_rule,
  10: string fk_name,
  11: string pk_name,
  12: bool enable_cstr,
  13: bool validate_cstr,
  14: bool rely_cstr,
}

struct AddForeignKeyRequest {
  1: required list<SQLForeignKey> foreignKeyCols,
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment,
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string,string> parameters,
}

struct Order {
  1: string col,
  2: i32 order,
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>,string> skewedColValueLocationMaps,
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string,string> parameters,
  11: optional SkewedInfo skewedInfo,
  12: optional bool storedAsSubDirectories,
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: PrincipalType grantorType,
  5: bool grantOption,
}

struct PrincipalPrivilegeSet {
  1: map<string,list<PrivilegeGrantInfo>> userPrivileges,
  2: map<string,list<PrivilegeGrantInfo>> groupPrivileges,
  3: map<string,list<PrivilegeGrantInfo>> rolePrivileges,
}

struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string,string> parameters,
  8: optional PrincipalPrivilegeSet privileges,
  9: optional string catName,
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: optional bool needResult,
  6: optional string catName,
}

struct AddPartitionsResult {
  1: optional list<Partition> partitions,
}

struct SQLPrimaryKey {
  1: string table_db,
  2: string table_name,
  3: string column_name,
  4: i32 key_seq,
  5: string pk_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
}

struct AddPrimaryKeyRequest {
  1: required list<SQLPrimaryKey> primaryKeyCols,
}

struct BooleanColumnStatsData {
  1: required i64 numTrues,
  2: required i64 numFalses,
  3: required i64 numNulls,
  4: optional string bitVectors,
}

struct LongColumnStatsData {
  1: optional i64 lowValue,
  2: optional i64 highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

struct DoubleColumnStatsData {
  1: optional double lowValue,
  2: optional double highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

struct StringColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

struct BinaryColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: optional string bitVectors,
}

struct Decimal {
  1: required binary unscaled,
  3: required i16 scale,
}

struct DecimalColumnStatsData {
  1: optional Decimal lowValue,
  2: optional Decimal highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

struct Date {
  1: required i64 daysSinceEpoch,
}

struct DateColumnStatsData {
  1: optional Date lowValue,
  2: optional Date highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional string bitVectors,
}

union ColumnStatisticsData {
  1: optional BooleanColumnStatsData booleanStats,
  2: optional LongColumnStatsData longStats,
  3: optional DoubleColumnStatsData doubleStats,
  4: optional StringColumnStatsData stringStats,
  5: optional BinaryColumnStatsData binaryStats,
  6: optional DecimalColumnStatsData decimalStats,
  7: optional DateColumnStatsData dateStats,
}

struct ColumnStatisticsObj {
  1: required string colName,
  2: required string colType,
  3: required ColumnStatisticsData statsData,
}

struct AggrStats {
  1: required list<ColumnStatisticsObj> colStats,
  2: required i64 partsFound,
}

exception AlreadyExistsException {
  1: string message,
}

struct CacheFileMetadataRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional string partName,
  4: optional bool isAllParts,
}

struct CacheFileMetadataResult {
  1: required bool isSupported,
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: optional i64 txnid,
  3: optional i64 elapsed_ms,
}

struct ClearFileMetadataRequest {
  1: required list<i64> fileIds,
}

struct ClearFileMetadataResult {
}

struct ClientCapabilities {
  1: required list<ClientCapability> values,
}

struct ColumnStatisticsDesc {
  1: required bool isTblLevel,
  2: required string dbName,
  3: required string tableName,
  4: optional string partName,
  5: optional i64 lastAnalyzed,
  6: optional string catName,
}

struct ColumnStatistics {
  1: required ColumnStatisticsDesc statsDesc,
  2: required list<ColumnStatisticsObj> statsObj,
}

struct CommitTxnRequest {
  1: required i64 txnid,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  2: optional string replPolicy,
  3: optional list<WriteEventInfo> writeEventInfos,
  4: optional ReplLastIdInfo replLastIdInfo,
  5: optional CommitTxnKeyValue keyValue,
  6: optional bool exclWriteEnabled,
  7: optional TxnType txn_type,
}

struct CompactionRequest {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: optional string runas,
  6: optional map<string,string> properties,
}

struct CompactionResponse {
  1: required i64 id,
  2: required string state,
  3: required bool accepted,
}

exception ConfigValSecurityException {
  1: string message,
}

struct CurrentNotificationEventId {
  1: required i64 eventId,
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string,string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
}

struct DropConstraintRequest {
  1: required string dbname,
  2: required string tablename,
  3: required string constraintname,
}

struct DropPartitionsExpr {
  1: required binary expr,
  2: optional i32 partArchiveLevel,
}

union RequestPartsSpec {
  1: optional list<string> names,
  2: optional list<DropPartitionsExpr> exprs,
}

struct EnvironmentContext {
  1: map<string,string> properties,
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: optional bool deleteData,
  5: optional bool ifExists,
  6: optional bool ignoreProtection,
  7: optional EnvironmentContext environmentContext,
  8: optional bool needResult,
  9: optional string catName,
}

struct DropPartitionsResult {
  1: optional list<Partition> partitions,
}

struct InsertEventRequestData {
  1: required list<string> filesAdded,
  2: optional list<string> filesAddedChecksum,
}

union FireEventRequestData {
  1: optional InsertEventRequestData insertData,
}

struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: optional string dbName,
  4: optional string tableName,
  5: optional list<string> partitionVals,
}

struct FireEventResponse {
}

struct ForeignKeysRequest {
  1: string parent_db_name,
  2: string parent_tbl_name,
  3: string foreign_db_name,
  4: string foreign_tbl_name,
}

struct ForeignKeysResponse {
  1: required list<SQLForeignKey> foreignKeys,
}

struct ResourceUri {
  1: ResourceType resourceType,
  2: string uri,
}

struct Function {
  1: string functionName,
  2: string dbName,
  3: string className,
  4: string ownerName,
  5: PrincipalType ownerType,
  6: i32 createTime,
  7: FunctionType functionType,
  8: list<ResourceUri> resourceUris,
  9: optional string catName,
}

struct GetAllFunctionsResponse {
  1: optional list<Function> functions,
}

struct GetFileMetadataByExprRequest {
  1: required list<i64> fileIds,
  2: required binary expr,
  3: optional bool doGetFooters,
  4: optional FileMetadataExprType type,
}

struct MetadataPpdResult {
  1: optional binary metadata,
  2: optional binary includeBitset,
}

struct GetFileMetadataByExprResult {
  1: required map<i64,MetadataPpdResult> metadata,
  2: required bool isSupported,
}

struct GetFileMetadataRequest {
  1: required list<i64> fileIds,
}

struct GetFileMetadataResult {
  1: required map<i64,binary> metadata,
  2: required bool isSupported,
}

struct TxnInfo {
  1: required i64 id,
  2: required TxnState state,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo,
  6: optional i32 heartbeatCount,
  7: optional string metaInfo,
  8: optional i64 startedTime,
  9: optional i64 lastHeartbeatTime,
}

struct GetOpenTxnsInfoResponse {
  1: required i64 txn_high_water_mark,
  2: required list<TxnInfo> open_txns,
}

struct GetOpenTxnsResponse {
  1: required i64 txn_high_water_mark,
  2: required set<i64> open_txns,
  3: optional i64 min_open_txn,
}

struct GetPrincipalsInRoleRequest {
  1: required string roleName,
}

struct RolePrincipalGrant {
  1: string roleName,
  2: string principalName,
  3: PrincipalType principalType,
  4: bool grantOption,
  5: i32 grantTime,
  6: string grantorName,
  7: PrincipalType grantorPrincipalType,
}

struct GetPrincipalsInRoleResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GetRoleGrantsForPrincipalRequest {
  1: required string principal_name,
  2: required PrincipalType principal_type,
}

struct GetRoleGrantsForPrincipalResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: optional ClientCapabilities capabilities,
  // From Hive 3.x: not in the 2.3 jar.
  4: optional string catName,
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string,string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  13: optional PrincipalPrivilegeSet privileges,
  14: optional bool temporary,
  15: optional bool rewriteEnabled,
  16: optional string catName,
  // Hive 3.x moved catName here (16 became creationMetadata); named apart from 16 because thriftpy2
  // needs unique names. The proxy fills it in answers (routing/default_catalog.py).
  17: optional string catNameHive3,
}

struct GetTableResult {
  1: required Table table,
  // From Hive 3.x: not in the 2.3 jar.
  2: optional bool isStatsCompliant,
}

struct GetTablesRequest {
  1: required string dbName,
  2: optional list<string> tblNames,
  3: optional ClientCapabilities capabilities,
  // From Hive 3.x: not in the 2.3 jar.
  4: optional string catName,
}

struct GetTablesResult {
  1: required list<Table> tables,
}

struct HiveObjectRef {
  1: HiveObjectType objectType,
  2: string dbName,
  3: string objectName,
  4: list<string> partValues,
  5: string columnName,
  6: optional string catName,
}

struct HiveObjectPrivilege {
  1: HiveObjectRef hiveObject,
  2: string principalName,
  3: PrincipalType principalType,
  4: PrivilegeGrantInfo grantInfo,
}

struct PrivilegeBag {
  1: list<HiveObjectPrivilege> privileges,
}

struct GrantRevokePrivilegeRequest {
  1: GrantRevokeType requestType,
  2: PrivilegeBag privileges,
  3: optional bool revokeGrantOption,
}

struct GrantRevokePrivilegeResponse {
  1: optional bool success,
}

struct GrantRevokeRoleRequest {
  1: GrantRevokeType requestType,
  2: string roleName,
  3: string principalName,
  4: PrincipalType principalType,
  5: optional string grantor,
  6: optional PrincipalType grantorType,
  7: optional bool grantOption,
}

struct GrantRevokeRoleResponse {
  1: optional bool success,
}

struct HeartbeatRequest {
  1: optional i64 lockid,
  2: optional i64 txnid,
}

struct HeartbeatTxnRangeRequest {
  1: required i64 min,
  2: required i64 max,
}

struct HeartbeatTxnRangeResponse {
  1: required set<i64> aborted,
  2: required set<i64> nosuch,
}

struct Index {
  1: string indexName,
  2: string indexHandlerClass,
  3: string dbName,
  4: string origTableName,
  5: i32 createTime,
  6: i32 lastAccessTime,
  7: string indexTableName,
  8: StorageDescriptor sd,
  9: map<string,string> parameters,
  10: bool deferredRebuild,
}

exception IndexAlreadyExistsException {
  1: string message,
}

exception InvalidInputException {
  1: string message,
}

exception InvalidObjectException {
  1: string message,
}

exception InvalidOperationException {
  1: string message,
}

exception InvalidPartitionException {
  1: string message,
}

struct LockComponent {
  1: required LockType type,
  2: required LockLevel level,
  3: required string dbname,
  4: optional string tablename,
  5: optional string partitionname,
  6: optional DataOperationType operationType,
  7: optional bool isAcid,
  8: optional bool isDynamicPartitionWrite,
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: optional i64 txnid,
  3: required string user,
  4: required string hostname,
  5: optional string agentInfo,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  6: optional bool zeroWaitReadEnabled,
  7: optional bool exclusiveCTAS,
  8: optional bool locklessReadsEnabled,
}

struct LockResponse {
  1: required i64 lockid,
  2: required LockState state,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  3: optional string errorMessage,
}

exception MetaException {
  1: string message,
}

exception NoSuchLockException {
  1: string message,
}

exception NoSuchObjectException {
  1: string message,
}

exception NoSuchTxnException {
  1: string message,
}

struct NotificationEvent {
  1: required i64 eventId,
  2: required i32 eventTime,
  3: required string eventType,
  4: optional string dbName,
  5: optional string tableName,
  6: required string message,
  7: optional string messageFormat,
  8: optional string catName,
}

// Fields 3-6 are Hive 4.0's filters (the notifications feature applies them to the merged log).
struct NotificationEventRequest {
  1: required i64 lastEvent,
  2: optional i32 maxEvents,
  3: optional list<string> eventTypeSkipList,
  4: optional string catName,
  5: optional string dbName,
  6: optional list<string> tableNames,
}

// Hive 3.0+ (fields 4-6 are Hive 4.0's).
struct NotificationEventsCountRequest {
  1: required i64 fromEventId,
  2: required string dbName,
  3: optional string catName,
  4: optional i64 toEventId,
  5: optional i64 limit,
  6: optional list<string> tableNames,
}

struct NotificationEventsCountResponse {
  1: required i64 eventsCount,
}

struct NotificationEventResponse {
  1: required list<NotificationEvent> events,
}

struct OpenTxnRequest {
  1: required i32 num_txns,
  2: required string user,
  3: required string hostname,
  4: optional string agentInfo,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  5: optional string replPolicy,
  6: optional list<i64> replSrcTxnIds,
  7: optional TxnType txn_type,
}

struct OpenTxnsResponse {
  1: required list<i64> txn_ids,
}

struct PartitionListComposingSpec {
  1: list<Partition> partitions,
}

struct PartitionWithoutSD {
  1: list<string> values,
  2: i32 createTime,
  3: i32 lastAccessTime,
  4: string relativePath,
  5: map<string,string> parameters,
  6: optional PrincipalPrivilegeSet privileges,
}

struct PartitionSpecWithSharedSD {
  1: list<PartitionWithoutSD> partitions,
  2: StorageDescriptor sd,
}

struct PartitionSpec {
  1: string dbName,
  2: string tableName,
  3: string rootPath,
  4: optional PartitionSpecWithSharedSD sharedSDPartitionSpec,
  5: optional PartitionListComposingSpec partitionList,
  6: optional string catName,
}

struct PartitionValuesRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<FieldSchema> partitionKeys,
  4: optional bool applyDistinct,
  5: optional string filter,
  6: optional list<FieldSchema> partitionOrder,
  7: optional bool ascending,
  8: optional i64 maxParts,
  9: optional string catName,
}

struct PartitionValuesRow {
  1: required list<string> row,
}

struct PartitionValuesResponse {
  1: required list<PartitionValuesRow> partitionValues,
}

struct PartitionsByExprRequest {
  1: required string dbName,
  2: required string tblName,
  3: required binary expr,
  4: optional string defaultPartitionName,
  5: optional i16 maxParts,
  6: optional string catName,
}

struct PartitionsByExprResult {
  1: required list<Partition> partitions,
  2: required bool hasUnknownPartitions,
}

struct PartitionsStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: required list<string> partNames,
  5: optional string catName,
}

struct PartitionsStatsResult {
  1: required map<string,list<ColumnStatisticsObj>> partStats,
}

struct PrimaryKeysRequest {
  1: required string db_name,
  2: required string tbl_name,
}

struct PrimaryKeysResponse {
  1: required list<SQLPrimaryKey> primaryKeys,
}

struct PutFileMetadataRequest {
  1: required list<i64> fileIds,
  2: required list<binary> metadata,
  3: optional FileMetadataExprType type,
}

struct PutFileMetadataResult {
}

struct Role {
  1: string roleName,
  2: i32 createTime,
  3: string ownerName,
}

struct Schema {
  1: list<FieldSchema> fieldSchemas,
  2: map<string,string> properties,
}

struct SetPartitionsStatsRequest {
  1: required list<ColumnStatistics> colStats,
  2: optional bool needMerge,
}

struct ShowCompactRequest {
}

struct ShowCompactResponseElement {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: required string state,
  6: optional string workerid,
  7: optional i64 start,
  8: optional string runAs,
  9: optional i64 hightestTxnId,
  10: optional string metaInfo,
  11: optional i64 endTime,
  12: optional string hadoopJobId,
  13: optional i64 id,
}

struct ShowCompactResponse {
  1: required list<ShowCompactResponseElement> compacts,
}

struct ShowLocksRequest {
  1: optional string dbname,
  2: optional string tablename,
  3: optional string partname,
  4: optional bool isExtended,
  // From Hive 3.x/4.x: not in the 2.3 jar (kept so a newer client's options reach its metastore).
  5: optional i64 txnid,
}

struct ShowLocksResponseElement {
  1: required i64 lockid,
  2: required string dbname,
  3: optional string tablename,
  4: optional string partname,
  5: required LockState state,
  6: required LockType type,
  7: optional i64 txnid,
  8: required i64 lastheartbeat,
  9: optional i64 acquiredat,
  10: required string user,
  11: required string hostname,
  12: optional i32 heartbeatCount,
  13: optional string agentInfo,
  14: optional i64 blockedByExtId,
  15: optional i64 blockedByIntId,
  16: optional i64 lockIdInternal,
}

struct ShowLocksResponse {
  1: list<ShowLocksResponseElement> locks,
}

struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: optional string comments,
}

struct TableStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
}

struct TableStatsResult {
  1: required list<ColumnStatisticsObj> tableStats,
}

exception TxnAbortedException {
  1: string message,
}

exception TxnOpenException {
  1: string message,
}

struct Type {
  1: string name,
  2: optional string type1,
  3: optional string type2,
  4: optional list<FieldSchema> fields,
}

exception UnknownDBException {
  1: string message,
}

exception UnknownPartitionException {
  1: string message,
}

exception UnknownTableException {
  1: string message,
}

struct UnlockRequest {
  1: required i64 lockid,
}

struct Version {
  1: string version,
  2: string comments,
}

// ---- Hive 3.x/4.x request calls. Not in the 2.3 jar: newer clients (Hive 4's HiveMetaStoreClient)
// send them, and hmsproxy translates them for backends that lack them (hmsproxy/translations.py).
// Checked against the 4.0.1 jar by tests/contract/test_version_diff.py.

enum DatabaseType {
  NATIVE = 1,
  REMOTE = 2,
}

struct CreateDatabaseRequest {
  1: required string databaseName,
  2: optional string description,
  3: optional string locationUri,
  4: optional map<string,string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional PrincipalType ownerType,
  8: optional string catalogName,
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional DatabaseType type,
  12: optional string dataConnectorName,
  13: optional string remote_dbname,
}

struct AlterDatabaseRequest {
  1: required string oldDbName,
  2: required Database newDb,
}

struct DropDatabaseRequest {
  1: required string name,
  2: optional string catalogName,
  3: required bool ignoreUnknownDb,
  4: required bool deleteData,
  5: required bool cascade,
  6: optional bool softDelete,
  7: optional i64 txnId,
  8: optional bool deleteManagedDir,
}

struct GetDatabaseRequest {
  1: optional string name,
  2: optional string catalogName,
  3: optional list<string> processorCapabilities,
  4: optional string processorIdentifier,
}

struct SQLUniqueConstraint {
  1: optional string catName,
  2: optional string table_db,
  3: optional string table_name,
  4: optional string column_name,
  5: optional i32 key_seq,
  6: optional string uk_name,
  7: optional bool enable_cstr,
  8: optional bool validate_cstr,
  9: optional bool rely_cstr,
}

struct SQLNotNullConstraint {
  1: optional string catName,
  2: optional string table_db,
  3: optional string table_name,
  4: optional string column_name,
  5: optional string nn_name,
  6: optional bool enable_cstr,
  7: optional bool validate_cstr,
  8: optional bool rely_cstr,
}

struct SQLDefaultConstraint {
  1: optional string catName,
  2: optional string table_db,
  3: optional string table_name,
  4: optional string column_name,
  5: optional string default_value,
  6: optional string dc_name,
  7: optional bool enable_cstr,
  8: optional bool validate_cstr,
  9: optional bool rely_cstr,
}

struct SQLCheckConstraint {
  1: optional string catName,
  2: optional string table_db,
  3: optional string table_name,
  4: optional string column_name,
  5: optional string check_expression,
  6: optional string dc_name,
  7: optional bool enable_cstr,
  8: optional bool validate_cstr,
  9: optional bool rely_cstr,
}

struct CreateTableRequest {
  1: required Table table,
  2: optional EnvironmentContext envContext,
  3: optional list<SQLPrimaryKey> primaryKeys,
  4: optional list<SQLForeignKey> foreignKeys,
  5: optional list<SQLUniqueConstraint> uniqueConstraints,
  6: optional list<SQLNotNullConstraint> notNullConstraints,
  7: optional list<SQLDefaultConstraint> defaultConstraints,
  8: optional list<SQLCheckConstraint> checkConstraints,
  9: optional list<string> processorCapabilities,
  10: optional string processorIdentifier,
}

struct AlterTableRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required Table table,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId,
  7: optional string validWriteIdList,
  8: optional list<string> processorCapabilities,
  9: optional string processorIdentifier,
  10: optional string expectedParameterKey,
  11: optional string expectedParameterValue,
}

struct AlterTableResponse {
}

struct DropTableRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional bool deleteData,
  5: optional EnvironmentContext envContext,
  6: optional bool dropPartitions,
}

struct AppendPartitionsRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional string name,
  5: optional list<string> partVals,
  6: optional EnvironmentContext environmentContext,
}

struct DropPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional string partName,
  5: optional list<string> partVals,
  6: optional bool deleteData,
  7: optional EnvironmentContext environmentContext,
}

struct RenamePartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<string> partVals,
  5: required Partition newPart,
  6: optional string validWriteIdList,
  7: optional i64 txnId,
  8: optional bool clonePart,
}

struct RenamePartitionResponse {
}

struct AlterPartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<Partition> partitions,
  5: optional EnvironmentContext environmentContext,
  6: optional i64 writeId,
  7: optional string validWriteIdList,
  8: optional bool skipColumnSchemaForPartition,
  9: optional list<FieldSchema> partitionColSchema,
}

struct AlterPartitionsResponse {
}

struct GetPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: required list<string> partVals,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetPartitionResponse {
  1: required Partition partition,
}

struct PartitionsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional i16 maxParts,
  5: optional string validWriteIdList,
  6: optional i64 id,
  7: optional bool skipColumnSchemaForPartition,
  8: optional string includeParamKeyPattern,
  9: optional string excludeParamKeyPattern,
}

struct PartitionsResponse {
  1: required list<Partition> partitions,
}

struct GetPartitionsByFilterRequest {
  1: optional string catName,
  2: optional string dbName,
  3: optional string tblName,
  4: optional string filter,
  5: optional i16 maxParts,
  6: optional bool skipColumnSchemaForPartition,
  7: optional string includeParamKeyPattern,
  8: optional string excludeParamKeyPattern,
}

struct GetPartitionsByNamesRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: optional list<string> names,
  4: optional bool get_col_stats,
  5: optional list<string> processorCapabilities,
  6: optional string processorIdentifier,
  7: optional string engine,
  8: optional string validWriteIdList,
  9: optional bool getFileMetadata,
  10: optional i64 id,
  11: optional bool skipColumnSchemaForPartition,
  12: optional string includeParamKeyPattern,
  13: optional string excludeParamKeyPattern,
}

struct ObjectDictionary {
  1: required map<string,list<binary>> values,
}

struct GetPartitionsByNamesResult {
  1: required list<Partition> partitions,
  2: optional ObjectDictionary dictionary,
}

struct GetPartitionsPsWithAuthRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional list<string> partVals,
  5: optional i16 maxParts,
  6: optional string userName,
  7: optional list<string> groupNames,
  8: optional string validWriteIdList,
  9: optional i64 id,
  10: optional bool skipColumnSchemaForPartition,
  11: optional string includeParamKeyPattern,
  12: optional string excludeParamKeyPattern,
  13: optional list<string> partNames,
}

struct GetPartitionsPsWithAuthResponse {
  1: required list<Partition> partitions,
}

struct GetPartitionNamesPsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional list<string> partValues,
  5: optional i16 maxParts,
  6: optional string validWriteIdList,
  7: optional i64 id,
}

struct GetPartitionNamesPsResponse {
  1: required list<string> names,
}

struct GetFieldsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetFieldsResponse {
  1: required list<FieldSchema> fields,
}

struct GetSchemaRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id,
}

struct GetSchemaResponse {
  1: required list<FieldSchema> fields,
}

struct GetCatalogsResponse {
  1: optional list<string> names,
}

struct GetCatalogRequest {
  1: optional string name,
}

struct Catalog {
  1: optional string name,
  2: optional string description,
  3: optional string locationUri,
  4: optional i32 createTime,
}

struct GetCatalogResponse {
  1: optional Catalog catalog,
}

service ThriftHiveMetastore extends fb303.FacebookService {
  void abort_txn(1: AbortTxnRequest rqst) throws (1: NoSuchTxnException o1),
  void abort_txns(1: AbortTxnsRequest rqst) throws (1: NoSuchTxnException o1),
  AllocateTableWriteIdsResponse allocate_table_write_ids(1: AllocateTableWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: MetaException o3),
  GetOpenTxnsResponse get_open_txns_req(1: GetOpenTxnsRequest getOpenTxnsRequest),
  GetValidWriteIdsResponse get_valid_write_ids(1: GetValidWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: MetaException o2),
  void add_dynamic_partitions(1: AddDynamicPartitions rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void add_foreign_key(1: AddForeignKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Index add_index(1: Index new_index, 2: Table index_table) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  i32 add_master_key(1: string key) throws (1: MetaException o1),
  Partition add_partition(1: Partition new_part) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition add_partition_with_environment_context(1: Partition new_part, 2: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  i32 add_partitions(1: list<Partition> new_parts) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  i32 add_partitions_pspec(1: list<PartitionSpec> new_parts) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  void add_primary_key(1: AddPrimaryKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool add_token(1: string token_identifier, 2: string delegation_token),
  void alter_database(1: string dbname, 2: Database db) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void alter_database_req(1: AlterDatabaseRequest alterDbReq) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void alter_function(1: string dbName, 2: string funcName, 3: Function newFunc) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_index(1: string dbname, 2: string base_tbl_name, 3: string idx_name, 4: Index new_idx) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: Partition new_part, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts) throws (1: InvalidOperationException o1, 2: MetaException o2),
  AlterPartitionsResponse alter_partitions_req(1: AlterPartitionsRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl) throws (1: InvalidOperationException o1, 2: MetaException o2),
  AlterTableResponse alter_table_req(1: AlterTableRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_cascade(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: bool cascade) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  Partition append_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_req(1: AppendPartitionsRequest appendPartitionsReq) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  CacheFileMetadataResult cache_file_metadata(1: CacheFileMetadataRequest req),
  void cancel_delegation_token(1: string token_str_form) throws (1: MetaException o1),
  LockResponse check_lock(1: CheckLockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3),
  ClearFileMetadataResult clear_file_metadata(1: ClearFileMetadataRequest req),
  void commit_txn(1: CommitTxnRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void compact(1: CompactionRequest rqst),
  CompactionResponse compact2(1: CompactionRequest rqst),
  void create_database(1: Database database) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void create_database_req(1: CreateDatabaseRequest createDatabaseRequest) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void create_function(1: Function func) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  bool create_role(1: Role role) throws (1: MetaException o1),
  void create_table(1: Table tbl) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_req(1: CreateTableRequest request) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_with_constraints(1: Table tbl, 2: list<SQLPrimaryKey> primaryKeys, 3: list<SQLForeignKey> foreignKeys) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_with_environment_context(1: Table tbl, 2: EnvironmentContext environment_context) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  bool create_type(1: Type type) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  bool delete_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  bool delete_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  void drop_constraint(1: DropConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  void drop_database_req(1: DropDatabaseRequest req) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  void drop_function(1: string dbName, 2: string funcName) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  bool drop_index_by_name(1: string db_name, 2: string tbl_name, 3: string index_name, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_req(1: DropPartitionRequest dropPartitionReq) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_role(1: string role_name) throws (1: MetaException o1),
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void drop_table_req(1: DropTableRequest dropTableReq) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void drop_table_with_environment_context(1: string dbname, 2: string name, 3: bool deleteData, 4: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  bool drop_type(1: string type) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition exchange_partition(1: map<string,string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  list<Partition> exchange_partitions(1: map<string,string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  list<string> fetch_partition_names_req(1: PartitionsRequest partitionReq) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  FireEventResponse fire_listener_event(1: FireEventRequest rqst),
  void flushCache(),
  string getMetaConf(1: string key) throws (1: MetaException o1),
  AggrStats get_aggr_stats_for(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_all_databases() throws (1: MetaException o1),
  GetAllFunctionsResponse get_all_functions() throws (1: MetaException o1),
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1),
  list<string> get_all_token_identifiers(),
  GetCatalogResponse get_catalog(1: GetCatalogRequest catName) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  GetCatalogsResponse get_catalogs() throws (1: MetaException o1),
  string get_config_value(1: string name, 2: string defaultValue) throws (1: ConfigValSecurityException o1),
  CurrentNotificationEventId get_current_notificationEventId(),
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Database get_database_req(1: GetDatabaseRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_databases(1: string pattern) throws (1: MetaException o1),
  string get_delegation_token(1: string token_owner, 2: string renewer_kerberos_principal_name) throws (1: MetaException o1),
  list<FieldSchema> get_fields(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetFieldsResponse get_fields_req(1: GetFieldsRequest req) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_fields_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetFileMetadataResult get_file_metadata(1: GetFileMetadataRequest req),
  GetFileMetadataByExprResult get_file_metadata_by_expr(1: GetFileMetadataByExprRequest req),
  ForeignKeysResponse get_foreign_keys(1: ForeignKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Function get_function(1: string dbName, 2: string funcName) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<string> get_functions(1: string dbName, 2: string pattern) throws (1: MetaException o1),
  Index get_index_by_name(1: string db_name, 2: string tbl_name, 3: string index_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<string> get_index_names(1: string db_name, 2: string tbl_name, 3: i16 max_indexes) throws (1: MetaException o2),
  list<Index> get_indexes(1: string db_name, 2: string tbl_name, 3: i16 max_indexes) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_master_keys(),
  NotificationEventResponse get_next_notification(1: NotificationEventRequest rqst),
  NotificationEventsCountResponse get_notification_events_count(1: NotificationEventsCountRequest rqst),
  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetOpenTxnsResponse get_open_txns(),
  GetOpenTxnsInfoResponse get_open_txns_info(),
  list<PartitionSpec> get_part_specs_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i32 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  ColumnStatistics get_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts) throws (1: MetaException o2),
  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionNamesPsResponse get_partition_names_ps_req(1: GetPartitionNamesPsRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionResponse get_partition_req(1: GetPartitionRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  PartitionValuesResponse get_partition_values(1: PartitionValuesRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: string user_name, 5: list<string> group_names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PartitionsByExprResult get_partitions_by_expr(1: PartitionsByExprRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_filter_req(1: GetPartitionsByFilterRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name, 3: list<string> names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionsByNamesResult get_partitions_by_names_req(1: GetPartitionsByNamesRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3),
  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts, 5: string user_name, 6: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  GetPartitionsPsWithAuthResponse get_partitions_ps_with_auth_req(1: GetPartitionsPsWithAuthRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<PartitionSpec> get_partitions_pspec(1: string db_name, 2: string tbl_name, 3: i32 max_parts) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PartitionsResponse get_partitions_req(1: PartitionsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PartitionsStatsResult get_partitions_statistics_req(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions_with_auth(1: string db_name, 2: string tbl_name, 3: i16 max_parts, 4: string user_name, 5: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PrimaryKeysResponse get_primary_keys(1: PrimaryKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPrincipalsInRoleResponse get_principals_in_role(1: GetPrincipalsInRoleRequest request) throws (1: MetaException o1),
  PrincipalPrivilegeSet get_privilege_set(1: HiveObjectRef hiveObject, 2: string user_name, 3: list<string> group_names) throws (1: MetaException o1),
  GetRoleGrantsForPrincipalResponse get_role_grants_for_principal(1: GetRoleGrantsForPrincipalRequest request) throws (1: MetaException o1),
  list<string> get_role_names() throws (1: MetaException o1),
  list<FieldSchema> get_schema(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetSchemaResponse get_schema_req(1: GetSchemaRequest req) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_schema_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  Table get_table(1: string dbname, 2: string tbl_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  ColumnStatistics get_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns, 3: list<string> tbl_types) throws (1: MetaException o1),
  list<string> get_table_names_by_filter(1: string dbname, 2: string filter, 3: i16 max_tables) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  GetTableResult get_table_req(1: GetTableRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  TableStatsResult get_table_statistics_req(1: TableStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1),
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType) throws (1: MetaException o1),
  string get_token(1: string token_identifier),
  Type get_type(1: string name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  map<string,Type> get_type_all(1: string name) throws (1: MetaException o2),
  bool grant_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  GrantRevokePrivilegeResponse grant_revoke_privileges(1: GrantRevokePrivilegeRequest request) throws (1: MetaException o1),
  GrantRevokeRoleResponse grant_revoke_role(1: GrantRevokeRoleRequest request) throws (1: MetaException o1),
  bool grant_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type, 4: string grantor, 5: PrincipalType grantorType, 6: bool grant_option) throws (1: MetaException o1),
  void heartbeat(1: HeartbeatRequest ids) throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3),
  HeartbeatTxnRangeResponse heartbeat_txn_range(1: HeartbeatTxnRangeRequest txns),
  bool isPartitionMarkedForEvent(1: string db_name, 2: string tbl_name, 3: map<string,string> part_vals, 4: PartitionEventType eventType) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6),
  list<HiveObjectPrivilege> list_privileges(1: string principal_name, 2: PrincipalType principal_type, 3: HiveObjectRef hiveObject) throws (1: MetaException o1),
  list<Role> list_roles(1: string principal_name, 2: PrincipalType principal_type) throws (1: MetaException o1),
  LockResponse lock(1: LockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void markPartitionForEvent(1: string db_name, 2: string tbl_name, 3: map<string,string> part_vals, 4: PartitionEventType eventType) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6),
  OpenTxnsResponse open_txns(1: OpenTxnRequest rqst),
  bool partition_name_has_valid_characters(1: list<string> part_vals, 2: bool throw_exception) throws (1: MetaException o1),
  map<string,string> partition_name_to_spec(1: string part_name) throws (1: MetaException o1),
  list<string> partition_name_to_vals(1: string part_name) throws (1: MetaException o1),
  PutFileMetadataResult put_file_metadata(1: PutFileMetadataRequest req),
  bool remove_master_key(1: i32 key_seq),
  bool remove_token(1: string token_identifier),
  void rename_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  RenamePartitionResponse rename_partition_req(1: RenamePartitionRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  i64 renew_delegation_token(1: string token_str_form) throws (1: MetaException o1),
  bool revoke_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  bool revoke_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type) throws (1: MetaException o1),
  void setMetaConf(1: string key, 2: string value) throws (1: MetaException o1),
  bool set_aggr_stats_for(1: SetPartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  list<string> set_ugi(1: string user_name, 2: list<string> group_names) throws (1: MetaException o1),
  ShowCompactResponse show_compact(1: ShowCompactRequest rqst),
  ShowLocksResponse show_locks(1: ShowLocksRequest rqst),
  void unlock(1: UnlockRequest rqst) throws (1: NoSuchLockException o1, 2: TxnOpenException o2),
  void update_master_key(1: i32 seq_number, 2: string key) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool update_partition_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  bool update_table_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
}
