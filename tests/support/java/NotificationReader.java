// Reads a metastore's notification log the way Hive's own consumers do: HiveMetaStoreClient's
// getCurrentNotificationEventId, then getNextNotification(last, batch, null) in batches up to it.
// Prints JSON lines: {"current": N}, then one {"id","type","db","table","format","message"} per
// event. Compiled and run against one Hive version's jars (tests/support/hive_java_client.py).
//
// Hive 3.1's client throws "Notification events are missing in the meta store." itself when an id
// is not the previous plus one; Hive 2.3.10's has no such check, so this program makes the same one
// (and says which did it) rather than let a hole pass unseen.
//
// Usage: NotificationReader <thrift uri> <last event id, or -1 for the current> <batch size>
import java.lang.reflect.Constructor;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;

public class NotificationReader {
  // Bounds the loop: a test reads a few hundred events at most.
  static final int MAX_BATCHES = 1000;

  static String q(String s) {
    if (s == null) return "null";
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    return sb.append('"').toString();
  }

  // 2.3's client takes a HiveConf, 3.1's a Configuration: build whichever this classpath has.
  static IMetaStoreClient connect(String uri) throws Exception {
    Configuration conf;
    try {
      conf = (Configuration) Class.forName("org.apache.hadoop.hive.conf.HiveConf").getConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      conf = new Configuration();
    }
    conf.set("hive.metastore.uris", uri);
    conf.set("metastore.thrift.uris", uri);
    conf.set("hive.metastore.execute.setugi", "false");
    conf.set("metastore.execute.setugi", "false");
    for (Constructor<?> c : HiveMetaStoreClient.class.getConstructors()) {
      Class<?>[] params = c.getParameterTypes();
      if (params.length == 1 && params[0].isInstance(conf)) {
        return (IMetaStoreClient) c.newInstance(conf);
      }
    }
    throw new IllegalStateException("no HiveMetaStoreClient(conf) constructor on this classpath");
  }

  public static void main(String[] args) throws Exception {
    IMetaStoreClient client = connect(args[0]);
    long last = Long.parseLong(args[1]);
    int batch = Integer.parseInt(args[2]);
    try {
      long current = client.getCurrentNotificationEventId().getEventId();
      System.out.println("{\"current\":" + current + "}");
      if (last < 0) last = current;
      for (int i = 0; i < MAX_BATCHES && last < current; i++) {
        List<NotificationEvent> events = client.getNextNotification(last, batch, null).getEvents();
        if (events == null || events.isEmpty()) break;
        for (NotificationEvent e : events) {
          if (e.getEventId() != last + 1) {
            throw new IllegalStateException("Notification events are missing (checked by NotificationReader): expected "
                + (last + 1) + ", got " + e.getEventId());
          }
          last = e.getEventId();
          System.out.println("{\"id\":" + e.getEventId() + ",\"type\":" + q(e.getEventType()) + ",\"db\":" + q(e.getDbName())
              + ",\"table\":" + q(e.getTableName()) + ",\"format\":" + q(e.getMessageFormat()) + ",\"message\":" + q(e.getMessage()) + "}");
        }
      }
    } finally {
      client.close();
    }
  }
}
