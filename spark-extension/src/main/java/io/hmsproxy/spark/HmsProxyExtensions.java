package io.hmsproxy.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * spark.sql.extensions=io.hmsproxy.spark.HmsProxyExtensions: plain Spark SQL reads only the files
 * a fresh hmsproxy compact index names (IndexedScanRule). On a Spark line it was not built and
 * tested for, it warns once and leaves every plan alone: Catalyst's internals change between lines.
 */
public final class HmsProxyExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  /** The Spark line (major.minor) this jar was compiled against: written into the jar by the build. */
  static final String BUILT_FOR = builtFor();

  private static final Logger LOG = LoggerFactory.getLogger(HmsProxyExtensions.class);
  private static final AtomicBoolean WARNED = new AtomicBoolean();

  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    extensions.injectOptimizerRule(HmsProxyExtensions::ruleFor);
    return BoxedUnit.UNIT;
  }

  static Rule<LogicalPlan> ruleFor(SparkSession session) {
    String line = sparkLine(session.version());
    if (BUILT_FOR.equals(line)) {
      return new IndexedScanRule(session);
    }
    if (WARNED.compareAndSet(false, true)) {
      LOG.warn(
          "hmsproxy: the Spark extension was built for Spark {} and this is Spark {}: indexes are not used by"
              + " plain Spark SQL in this session (build the extension for it: make install)",
          BUILT_FOR,
          session.version());
    }
    return new UnchangedPlans();
  }

  private static String builtFor() {
    try (InputStream in = HmsProxyExtensions.class.getResourceAsStream("built-for.txt")) {
      return in == null ? "unknown" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      return "unknown";
    }
  }

  static String sparkLine(String version) {
    String[] parts = version.split("\\.");
    return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
  }

  /** What the extension does on a Spark line it was not built for: nothing. */
  static final class UnchangedPlans extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      return plan;
    }
  }
}
