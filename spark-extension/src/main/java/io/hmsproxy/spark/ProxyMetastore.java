package io.hmsproxy.spark;

import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.api.Index;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.hadoop.hive.shims.ShimLoader;
import org.apache.hadoop.hive.shims.Utils;
import org.apache.hadoop.hive.thrift.HadoopThriftAuthBridge;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;

/**
 * A plain Thrift connection to the session's metastore for what Spark's own Hive client does not
 * give: whether it is a hmsproxy (fb303 getName, asked once per URI and JVM), the base table's
 * indexes (the proxy answers get_indexes from memory), and the index table with its partitions
 * (Spark refuses an INDEX_TABLE). At most one connection per query planned on an indexed-looking
 * filter, none when what it needs was asked recently (IndexedScanRule.recentIndexes, IndexTableMeta).
 *
 * <p>A Kerberized metastore (hive.metastore.sasl.enabled) is reached as Spark's own Hive client
 * reaches it, through Hive's auth bridge in Spark's jars: the session's delegation token for the
 * metastore when it holds one (hive.metastore.token.signature; DIGEST-MD5, as on a cluster's
 * executors and YARN drivers), else Kerberos as the logged-in user (GSSAPI), at the QOP
 * hadoop.rpc.protection says.
 */
final class ProxyMetastore implements AutoCloseable {
  static final String HMSPROXY_NAME = "hmsproxy";
  private static final int PARTITION_NAMES_PER_CALL = 100;
  private static final Map<String, Boolean> IS_HMSPROXY = new ConcurrentHashMap<>();

  static final String SASL_ENABLED = "hive.metastore.sasl.enabled";
  private static final String KERBEROS_PRINCIPAL = "hive.metastore.kerberos.principal";
  private static final String TOKEN_SIGNATURE = "hive.metastore.token.signature";

  private final String uris;
  private final int timeoutMs;
  private final Configuration hadoop;
  private TTransport transport;
  private ThriftHiveMetastore.Client client;

  /** A connection to the first of the URIs that answers, opened at the first call that needs it. */
  ProxyMetastore(String uris, int timeoutMs, Configuration hadoop) {
    this.uris = uris;
    this.timeoutMs = timeoutMs;
    this.hadoop = hadoop;
  }

  String uris() {
    return uris;
  }

  /** The client, connected now if it is not yet; an exception names the last URI's failure. */
  private ThriftHiveMetastore.Client client() throws Exception {
    if (client != null) {
      return client;
    }
    Exception last = null;
    for (String uri : uris.split(",")) {
      if (uri.isBlank()) {
        continue;
      }
      URI parsed = URI.create(uri.trim());
      TTransport opened = new TSocket(parsed.getHost(), parsed.getPort(), timeoutMs);
      try {
        boolean sasl = hadoop.getBoolean(SASL_ENABLED, false);
        if (sasl) {
          opened = saslTransport(parsed.getHost(), opened);
        }
        opened.open();
        ThriftHiveMetastore.Client answering = new ThriftHiveMetastore.Client(new TBinaryProtocol(opened));
        if (!sasl) {
          // As Spark's own client does without SASL: the proxy checks access as this user.
          answering.set_ugi(UserGroupInformation.getCurrentUser().getShortUserName(), Collections.emptyList());
        }
        transport = opened;
        client = answering;
        return client;
      } catch (Exception e) {
        opened.close();
        last = e;
      }
    }
    throw last != null ? last : new IllegalArgumentException("no metastore URI in '" + uris + "'");
  }

  /** The socket wrapped for a Kerberized metastore, as HiveMetaStoreClient.open wraps it (its open runs as the current user). */
  private TTransport saslTransport(String host, TTransport socket) throws Exception {
    HadoopThriftAuthBridge bridge = ShimLoader.getHadoopThriftAuthBridge();
    Map<String, String> qop = bridge.getHadoopSaslProperties(hadoop);
    String token = Utils.getTokenStrForm(hadoop.get(TOKEN_SIGNATURE, ""));
    if (token != null) {
      return bridge.createClient().createClientTransport(null, host, "DIGEST", token, socket, qop);
    }
    String principal = hadoop.get(KERBEROS_PRINCIPAL, "");
    if (principal.isBlank()) {
      throw new IllegalArgumentException(SASL_ENABLED + " is true but " + KERBEROS_PRINCIPAL + " is not set");
    }
    return bridge.createClient().createClientTransport(principal, host, "KERBEROS", null, socket, qop);
  }

  /** Whether the metastore at these URIs is a hmsproxy; asked once per URIs in this JVM. */
  boolean isHmsProxy() throws Exception {
    Boolean known = IS_HMSPROXY.get(uris);
    if (known == null) {
      known = HMSPROXY_NAME.equals(client().getName());
      IS_HMSPROXY.put(uris, known);
    }
    return known;
  }

  static Boolean knownHmsProxy(String uris) {
    return IS_HMSPROXY.get(uris);
  }

  List<Index> indexes(String db, String table) throws Exception {
    return client().get_indexes(db, table, (short) -1);
  }

  Table table(String db, String table) throws Exception {
    return client().get_table(db, table);
  }

  /** The named partitions that exist (in pieces of 100 names a call). */
  List<Partition> partitions(String db, String table, List<String> names) throws Exception {
    List<Partition> found = new ArrayList<>();
    for (int i = 0; i < names.size(); i += PARTITION_NAMES_PER_CALL) {
      List<String> part = names.subList(i, Math.min(names.size(), i + PARTITION_NAMES_PER_CALL));
      found.addAll(client().get_partitions_by_names(db, table, part));
    }
    return found;
  }

  @Override
  public void close() {
    if (transport != null) {
      transport.close();
    }
  }
}
