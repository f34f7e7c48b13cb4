// A Hive 4 client's everyday calls through hmsproxy: Hive 4.0.1's own HiveMetaStoreClient, which
// sends the *_req calls, "@hive#db" names and get_catalogs that a Hive 2.3 metastore lacks.
// Prints one line per step: "<step>\tOK\t<value>" or "<step>\tFAIL\t<exception class>: <message>";
// tests/integration/test_hive4_client.py runs it and checks the lines.
// Usage: Hive4Client <thrift uri> <new db> <warehouse uri> <federated db> <federated table> <read-only db>
//        Hive4Client transaction <thrift uri> <db> <transactional table>   (a writer's transaction, step by step)
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.common.ValidReadTxnList;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.LockComponentBuilder;
import org.apache.hadoop.hive.metastore.LockRequestBuilder;
import org.apache.hadoop.hive.metastore.api.*;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf;
import org.apache.hadoop.hive.metastore.conf.MetastoreConf.ConfVars;

public class Hive4Client {
  interface Step { Object run() throws Exception; }

  static void step(String name, Step s) {
    try {
      System.out.println(name + "\tOK\t" + s.run());
    } catch (Throwable t) {
      System.out.println(name + "\tFAIL\t" + t.getClass().getSimpleName() + ": " + String.valueOf(t.getMessage()).replace('\n', ' '));
    }
  }

  static Table table(String db, String name, String location) {
    StorageDescriptor sd = new StorageDescriptor();
    sd.setCols(Arrays.asList(new FieldSchema("id", "int", ""), new FieldSchema("name", "string", "")));
    sd.setLocation(location);
    sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat");
    sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat");
    sd.setSerdeInfo(new SerDeInfo(null, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", new HashMap<>()));
    Table t = new Table();
    t.setDbName(db);
    t.setTableName(name);
    t.setOwner("hive4");
    t.setSd(sd);
    t.setPartitionKeys(Arrays.asList(new FieldSchema("ds", "string", "")));
    t.setParameters(new HashMap<>(Map.of("EXTERNAL", "TRUE")));
    t.setTableType("EXTERNAL_TABLE");
    return t;
  }

  static Partition partition(Table t, String day) {
    Partition p = new Partition();
    p.setDbName(t.getDbName());
    p.setTableName(t.getTableName());
    p.setValues(Arrays.asList(day));
    StorageDescriptor sd = new StorageDescriptor(t.getSd());
    sd.setLocation(t.getSd().getLocation() + "/ds=" + day);
    p.setSd(sd);
    p.setParameters(new HashMap<>());
    return p;
  }

  static String values(List<Partition> parts) {
    StringBuilder b = new StringBuilder();
    for (Partition p : parts) b.append(p.getValues()).append('@').append(p.getCatName()).append(' ');
    return b.toString().trim();
  }

  static IMetaStoreClient connect(String uri) throws Exception {
    Configuration conf = MetastoreConf.newMetastoreConf();
    MetastoreConf.setVar(conf, ConfVars.THRIFT_URIS, uri);
    MetastoreConf.setLongVar(conf, ConfVars.THRIFT_CONNECTION_RETRIES, 1);
    return new HiveMetaStoreClient(conf);
  }

  static String writeIds(IMetaStoreClient c, String fullName, String snapshot) throws Exception {
    TableValidWriteIds t = c.getValidWriteIds(Arrays.asList(fullName), snapshot).get(0);
    return t.getFullTableName() + "," + t.getWriteIdHighWaterMark() + "," + t.getInvalidWriteIds();
  }

  // What Hive's DbTxnManager does for an INSERT into a transactional table, one call per step.
  static void transaction(String uri, String db, String table) throws Exception {
    IMetaStoreClient c = connect(uri);
    long[] txn = {-1}, lock = {-1}, write = {-1};
    step("openTxn", () -> txn[0] = c.openTxn("hive4"));
    step("allocateTableWriteId", () -> write[0] = c.allocateTableWriteId(txn[0], db, table));
    step("allocateAgain", () -> c.allocateTableWriteId(txn[0], db, table));
    step("lock", () -> {
      LockComponentBuilder component = new LockComponentBuilder().setSharedWrite().setDbName(db).setTableName(table)
          .setOperationType(DataOperationType.INSERT).setIsTransactional(true);
      LockResponse r = c.lock(new LockRequestBuilder("hive4").setUser("hive4").setTransactionId(txn[0]).addLockComponent(component.build()).build());
      lock[0] = r.getLockid();
      return r.getLockid() + "," + r.getState();
    });
    step("checkLock", () -> c.checkLock(lock[0]).getState());
    step("heartbeat", () -> { c.heartbeat(txn[0], lock[0]); return "ok"; });
    step("showLocks", () -> {
      StringBuilder b = new StringBuilder();
      for (ShowLocksResponseElement e : c.showLocks(new ShowLocksRequest()).getLocks())
        if (table.equals(e.getTablename())) b.append(e.getDbname()).append(',').append(e.getLockid()).append(',').append(e.getTxnid()).append(' ');
      return b.toString().trim();
    });
    step("openTxns", () -> c.showTxns().getOpen_txns().stream().filter(t -> t.getId() == txn[0]).map(t -> t.getState().toString()).findFirst().orElse("absent"));
    // DbTxnManager's snapshot for its transaction (get_open_txns_req), and the one it makes when no other
    // transaction is open: capped at its own, which it leaves out (TxnCommonUtils.createValidReadTxnList).
    step("getValidTxns", () -> c.getValidTxns(txn[0]).writeToString());
    step("validWriteIds", () -> writeIds(c, db + "." + table, new ValidReadTxnList(new long[0], new BitSet(), txn[0], Long.MAX_VALUE).writeToString()));
    step("commitTxn", () -> { c.commitTxn(txn[0]); return "ok"; });
    step("checkLockAfterCommit", () -> c.checkLock(lock[0]).getState());
    step("heartbeatAfterCommit", () -> { c.heartbeat(txn[0], 0); return "ok"; });
    c.close();
  }

  public static void main(String[] a) throws Exception {
    if (a[0].equals("transaction")) {
      transaction(a[1], a[2], a[3]);
      return;
    }
    String uri = a[0], db = a[1], warehouse = a[2], fedDb = a[3], fedTable = a[4], readOnlyDb = a[5];
    String location = warehouse + "/" + db + ".db";
    IMetaStoreClient c = connect(uri);
    String[] days = {"2026-11-01", "2026-11-02"};

    step("databases", () -> c.getAllDatabases());
    step("createDatabase", () -> { c.createDatabase(new Database(db, "via Hive 4", location, new HashMap<>())); return db; });
    step("getDatabase", () -> { Database d = c.getDatabase(db); return d.getName() + "," + d.getCatalogName() + "," + d.getDescription(); });
    step("getDatabases", () -> c.getDatabases(db));
    step("getCatalogs", () -> c.getCatalogs());
    step("getCatalog", () -> { Catalog cat = c.getCatalog("hive"); return cat.getName() + "," + (cat.getLocationUri() != null); });
    step("getOtherCatalog", () -> c.getCatalog("spark"));
    step("createTable", () -> { c.createTable(table(db, "visits", location + "/visits")); return "visits"; });
    step("createTableWithUniqueConstraint", () -> {
      SQLUniqueConstraint unique = new SQLUniqueConstraint("hive", db, "constrained", "id", 1, "uk_id", false, false, false);
      c.createTableWithConstraints(table(db, "constrained", location + "/constrained"), null, null, Arrays.asList(unique), null, null, null);
      return "constrained";
    });
    step("constrainedExists", () -> c.tableExists(db, "constrained"));
    step("getTable", () -> { Table t = c.getTable(db, "visits"); return t.getDbName() + "." + t.getTableName() + "," + t.getCatName() + "," + t.getSd().getCols().size(); });
    step("getTableReq", () -> { GetTableRequest r = new GetTableRequest(db, "visits"); r.setCatName("hive"); Table t = c.getTable(r); return t.getTableName() + "," + t.getCatName(); });
    step("getAllTables", () -> c.getAllTables(db));
    step("getTableObjectsByName", () -> { List<Table> ts = c.getTableObjectsByName(db, Arrays.asList("visits")); return ts.size() + "," + ts.get(0).getTableName(); });
    step("addPartitions", () -> { Table t = c.getTable(db, "visits"); return c.add_partitions(Arrays.asList(partition(t, days[0]), partition(t, days[1]))); });
    step("appendPartition", () -> c.appendPartition(db, "visits", Arrays.asList("2026-11-03")).getValues());
    step("listPartitionNames", () -> c.listPartitionNames(db, "visits", (short) -1));
    step("listPartitions", () -> values(c.listPartitions(db, "visits", (short) -1)));
    step("getPartition", () -> { Partition p = c.getPartition(db, "visits", Arrays.asList(days[1])); return p.getValues() + "@" + p.getCatName(); });
    step("getPartitionByName", () -> c.getPartition(db, "visits", "ds=" + days[0]).getValues());
    step("getPartitionsByNames", () -> values(c.getPartitionsByNames(db, "visits", Arrays.asList("ds=" + days[0], "ds=" + days[1]))));
    step("listPartitionsByFilter", () -> values(c.listPartitionsByFilter(db, "visits", "ds > \"" + days[0] + "\"", (short) -1)));
    step("renamePartition", () -> {
      Partition p = c.getPartition(db, "visits", Arrays.asList("2026-11-03"));
      p.setValues(Arrays.asList("2026-11-04"));
      c.renamePartition(db, "visits", Arrays.asList("2026-11-03"), p);
      return c.listPartitionNames(db, "visits", (short) -1);
    });
    step("alterPartitions", () -> {
      List<Partition> parts = c.listPartitions(db, "visits", (short) -1);
      for (Partition p : parts) p.getParameters().put("checked", "yes");
      c.alter_partitions(db, "visits", parts);
      return c.getPartition(db, "visits", Arrays.asList(days[0])).getParameters().get("checked");
    });
    step("getFields", () -> c.getFields(db, "visits").size());
    step("getSchema", () -> c.getSchema(db, "visits").size());
    step("alterTable", () -> { Table t = c.getTable(db, "visits"); t.getParameters().put("k", "v"); c.alter_table(db, "visits", t); return c.getTable(db, "visits").getParameters().get("k"); });
    step("dropPartition", () -> c.dropPartition(db, "visits", Arrays.asList(days[0]), false));
    step("namesAfterDrop", () -> c.listPartitionNames(db, "visits", (short) -1));
    step("federatedTable", () -> { Table t = c.getTable(fedDb, fedTable); return t.getDbName() + "." + t.getTableName() + "," + t.getCatName(); });
    step("federatedPartitions", () -> values(c.listPartitions(fedDb, fedTable, (short) -1)));
    step("readOnlyCreate", () -> { c.createTable(table(readOnlyDb, "refused", warehouse + "/refused")); return "created"; });
    step("dropTable", () -> { c.dropTable(db, "visits"); return c.tableExists(db, "visits"); });
    step("dropDatabase", () -> { c.dropDatabase(db, true, false, true); return c.getAllDatabases().contains(db); });
    step("dropMissingDatabase", () -> { c.dropDatabase(db, true, true, true); return "ignored"; });
    c.close();
  }
}
