// Spark's HiveDelegationTokenProvider as `spark-submit --proxy-user NAME` runs it: the current user
// is a proxy user NAME over the keytab login, so the provider asks for a token whose owner is
// currentUser.getUserName() = NAME, a short name (and calls the metastore as the real user).
// tests/support/spark_token_provider_job.py calls it from the driver.
package hmsproxytest;

import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.hive.security.HiveDelegationTokenProvider;

public final class ProxyUserProvider {
  private ProxyUserProvider() {}

  public static void obtain(String proxyUser, Configuration hadoopConf, SparkConf sparkConf, Credentials creds) throws Exception {
    UserGroupInformation user = UserGroupInformation.createProxyUser(proxyUser, UserGroupInformation.getLoginUser());
    user.doAs((PrivilegedExceptionAction<Object>) () -> new HiveDelegationTokenProvider().obtainDelegationTokens(hadoopConf, sparkConf, creds));
  }
}
