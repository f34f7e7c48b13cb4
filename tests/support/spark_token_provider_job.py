"""Spark's own HiveDelegationTokenProvider on a standalone cluster; run in its own process.

`python -m tests.support.spark_token_provider_job MASTER PRINCIPAL KEYTAB SERVICE KRB5_CONF JAR SIDES`
(SERVICE unused: tests/integration/test_kerberos_inbound.run_spark_job's argument order; SIDES: JSON
{name: [thrift URI, hive.metastore.kerberos.principal]}).

Spark makes its HadoopDelegationTokenManager only in the YARN and Kubernetes scheduler backends
(createTokenManager; the standalone backend keeps CoarseGrainedSchedulerBackend's None), so on a
standalone cluster no Spark code asks for a Hive token by itself. This driver runs the code that
manager runs for Hive: HiveDelegationTokenProvider.obtainDelegationTokens(hadoopConf, sparkConf,
creds), which asks `get_delegation_token(currentUser.getUserName(), hive.metastore.kerberos.principal)`
-- the full principal as owner, the principal pattern as renewer -- and keeps the token under
`hive.server2.delegation.token`. Its executors then use that token as executors do on YARN: in the
task's UGI, with Hive's own client (java/hmsproxytest/HiveTokenTask.java, shipped in JAR).
The provider runs twice per side: as the keytab's user (owner `alice@REALM`) and as `spark-submit
--proxy-user alice` runs it (java/hmsproxytest/ProxyUserProvider.java: owner `alice`, a short name).
Prints one line `RESULT {json}`: the driver's user, and per side and owner form the token and each
executor's answer.
"""

from __future__ import annotations

import json
import sys


def kerberized_cluster_spark(master: str, principal: str, keytab: str, krb5_conf: str, jar: str):
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master(master)
        .appName("hmsproxy-token-provider")
        .config("spark.jars", jar)
        .config("spark.kerberos.principal", principal)
        .config("spark.kerberos.keytab", keytab)
        .config("spark.hadoop.hive.metastore.sasl.enabled", "true")
        .config("spark.executor.extraJavaOptions", f"-Djava.security.krb5.conf={krb5_conf}")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "2")
        # Both workers' executors registered before the first job: else a job may run both tasks on the
        # executor that came first, and the other executor never shows it can use the token.
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "120s")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )


def obtain_and_use(spark, uri: str, service: str, proxy_user: str | None = None) -> dict:
    """The provider's token from `uri` (its metastore principal `service`), and the executors' use of
    it. `proxy_user`: as `spark-submit --proxy-user` runs it (the owner is then that short name)."""
    jvm, jsc = spark._jvm, spark.sparkContext._jsc
    conf = jvm.org.apache.hadoop.conf.Configuration(jsc.hadoopConfiguration())
    conf.set("hive.metastore.uris", uri)
    conf.set("hive.metastore.kerberos.principal", service)
    creds = jvm.org.apache.hadoop.security.Credentials()
    # Either way the provider logs a failure and gives no token, as under YARN.
    if proxy_user is None:
        jvm.org.apache.spark.sql.hive.security.HiveDelegationTokenProvider().obtainDelegationTokens(conf, jsc.sc().conf(), creds)
    else:
        jvm.hmsproxytest.ProxyUserProvider.obtain(proxy_user, conf, jsc.sc().conf(), creds)
    token = creds.getToken(jvm.org.apache.hadoop.io.Text("hive.server2.delegation.token"))
    if token is None:
        return {"token": None, "executors": []}
    token_str = token.encodeToUrlString()
    partitions = jvm.java.util.ArrayList()
    for n in range(2):
        partitions.add(n)
    task = jvm.hmsproxytest.HiveTokenTask(token_str, uri, service)
    answers = jsc.parallelize(partitions, 2).mapPartitions(task).collect()
    return {"token": token_str, "executors": sorted(str(a) for a in answers)}


def main(master: str, principal: str, keytab: str, _service: str, krb5_conf: str, jar: str, sides: str) -> None:
    spark = kerberized_cluster_spark(master, principal, keytab, krb5_conf, jar)
    try:
        ugi = spark._jvm.org.apache.hadoop.security.UserGroupInformation
        logged_in_by_spark = bool(ugi.isLoginKeytabBased())
        if not logged_in_by_spark:  # spark-submit logs in from spark.kerberos.keytab for YARN and Kubernetes only
            ugi.loginUserFromKeytab(principal, keytab)
        out = {"user": ugi.getCurrentUser().getUserName(), "spark_logged_in": logged_in_by_spark}
        short = principal.split("@", 1)[0].split("/", 1)[0]
        for side, (uri, service) in json.loads(sides).items():
            out[side] = {"full": obtain_and_use(spark, uri, service), "short": obtain_and_use(spark, uri, service, short)}
    finally:
        spark.stop()
    print("RESULT " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:8])
