// A Spark task that uses the Hive delegation token its driver obtained, as executors do on YARN and
// Kubernetes once the driver's token manager has handed the tokens out: the token goes into the
// task's UGI, and Hive 2.3's own HiveMetaStoreClient logs in with it (SASL DIGEST-MD5, no Kerberos
// login on the executor) and lists the databases.
// tests/support/spark_token_provider_job.py ships it (spark.jars) and runs it on the executors.
package hmsproxytest;

import java.security.PrivilegedExceptionAction;
import java.util.Collections;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.thrift.DelegationTokenIdentifier;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.function.FlatMapFunction;

public class HiveTokenTask implements FlatMapFunction<Iterator<Integer>, String> {
  private final String tokenStr, uri, service;

  public HiveTokenTask(String tokenStr, String uri, String service) {
    this.tokenStr = tokenStr;
    this.uri = uri;
    this.service = service;
  }

  @Override
  public Iterator<String> call(Iterator<Integer> partition) throws Exception {
    Configuration security = new Configuration();
    security.set("hadoop.security.authentication", "kerberos");
    UserGroupInformation.setConfiguration(security);
    UserGroupInformation holder = UserGroupInformation.createRemoteUser("executor");
    Token<DelegationTokenIdentifier> token = new Token<>();
    token.decodeFromUrlString(tokenStr);
    token.setService(new Text(""));  // hive.metastore.token.signature's default
    holder.addToken(token);
    String answer;
    try {
      answer = holder.doAs((PrivilegedExceptionAction<String>) () -> {
        HiveConf conf = new HiveConf();
        conf.setVar(HiveConf.ConfVars.METASTOREURIS, uri);
        conf.setBoolVar(HiveConf.ConfVars.METASTORE_USE_THRIFT_SASL, true);
        conf.setVar(HiveConf.ConfVars.METASTORE_KERBEROS_PRINCIPAL, service);
        conf.setIntVar(HiveConf.ConfVars.METASTORETHRIFTCONNECTIONRETRIES, 1);
        HiveMetaStoreClient client = new HiveMetaStoreClient(conf);
        try {
          return client.getAllDatabases().contains("default") ? "served" : "no default database";
        } finally {
          client.close();
        }
      });
    } catch (Exception e) {
      answer = "FAIL " + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    return Collections.singletonList("executor " + SparkEnv.get().executorId() + "\t" + answer).iterator();
  }
}
