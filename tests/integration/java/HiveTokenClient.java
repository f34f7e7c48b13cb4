// Hive 2.3's own HiveMetaStoreClient and a delegation token, as Hive's and Spark's clients use one:
// logged in from a keytab, it asks for a token (owner, renewer as given), shows what the token
// records, logs in a second client with the token alone (SASL DIGEST-MD5, as a job without a
// ticket), renews and cancels it. tests/integration/test_kerberos_token_owners.py runs it against
// the Kerberized metastore and the proxy in front of it and compares the lines.
// One JVM runs every case against every end (a JVM's start costs more than all the calls).
// Prints one line per step: "<uri>\t<case>\t<step>\tOK\t<value>" or "...\tFAIL\t<exception class>: <message>",
// where <case> is "<owner>|<renewer>" ("-" for the login's "user" step).
// Usage: HiveTokenClient <client principal> <keytab> <owner>|<renewer>[;<owner>|<renewer>...] <thrift uri> <service principal> [<uri> <service>...]
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.security.PrivilegedExceptionAction;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.thrift.DelegationTokenIdentifier;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;

public class HiveTokenClient {
  interface Step { Object run() throws Exception; }

  static void step(String where, String name, Step s) {
    try {
      System.out.println(where + "\t" + name + "\tOK\t" + s.run());
    } catch (Throwable t) {
      System.out.println(where + "\t" + name + "\tFAIL\t" + t.getClass().getSimpleName() + ": " + String.valueOf(t.getMessage()).replace('\n', ' '));
    }
    System.out.flush();
  }

  static Token<DelegationTokenIdentifier> decode(String tokenStr) throws Exception {
    Token<DelegationTokenIdentifier> token = new Token<>();
    token.decodeFromUrlString(tokenStr);
    return token;
  }

  static String recorded(String tokenStr) throws Exception {
    Token<DelegationTokenIdentifier> token = decode(tokenStr);
    DelegationTokenIdentifier id = new DelegationTokenIdentifier();
    id.readFields(new DataInputStream(new ByteArrayInputStream(token.getIdentifier())));
    return "owner=" + id.getOwner() + " renewer=" + id.getRenewer() + " realUser=" + id.getRealUser() + " kind=" + token.getKind();
  }

  public static void main(String[] args) throws Exception {
    String principal = args[0], keytab = args[1];
    String[] cases = args[2].split(";");
    UserGroupInformation.setConfiguration(conf(args[3], args[4]));
    UserGroupInformation.loginUserFromKeytab(principal, keytab);
    for (int i = 3; i + 1 < args.length; i += 2) {
      HiveConf conf = conf(args[i], args[i + 1]);
      step(args[i] + "\t-", "user", () -> UserGroupInformation.getCurrentUser().getUserName());
      for (String c : cases) {
        String[] ownerRenewer = c.split("\\|", 2);
        tokenSteps(conf, args[i] + "\t" + c, ownerRenewer[0], ownerRenewer[1]);
      }
    }
  }

  static HiveConf conf(String uri, String service) {
    HiveConf conf = new HiveConf();
    conf.set("hadoop.security.authentication", "kerberos");
    conf.setVar(HiveConf.ConfVars.METASTOREURIS, uri);
    conf.setBoolVar(HiveConf.ConfVars.METASTORE_USE_THRIFT_SASL, true);
    conf.setVar(HiveConf.ConfVars.METASTORE_KERBEROS_PRINCIPAL, service);
    conf.setIntVar(HiveConf.ConfVars.METASTORETHRIFTCONNECTIONRETRIES, 1);
    return conf;
  }

  static void tokenSteps(HiveConf conf, String where, String owner, String renewer) throws Exception {
    HiveMetaStoreClient client = new HiveMetaStoreClient(conf);
    String[] token = {null};
    step(where, "get", () -> {
      token[0] = client.getDelegationToken(owner, renewer);
      return recorded(token[0]);
    });
    if (token[0] != null) {
      // A client with no Kerberos login of its own: the token in its UGI, selected by its service
      // (hive.metastore.token.signature, empty), logs it in over DIGEST-MD5.
      step(where, "login", () -> {
        UserGroupInformation holder = UserGroupInformation.createRemoteUser("holder");
        Token<DelegationTokenIdentifier> t = decode(token[0]);
        t.setService(new Text(""));
        holder.addToken(t);
        return holder.doAs((PrivilegedExceptionAction<Object>) () -> {
          HiveMetaStoreClient byToken = new HiveMetaStoreClient(conf);
          try {
            return byToken.getAllDatabases().contains("default") ? "served" : "no default database";
          } finally {
            byToken.close();
          }
        });
      });
      step(where, "renew", () -> client.renewDelegationToken(token[0]) > System.currentTimeMillis() ? "renewed" : "expired");
      step(where, "cancel", () -> {
        client.cancelDelegationToken(token[0]);
        return "cancelled";
      });
    }
    client.close();
  }
}
