"""A Kerberized HDFS for the tests: tests/support/hdfs.py's minicluster with Hadoop security on,
its NameNode and DataNode logging in from keytabs of the suite's KDC (tests/support/kdc.py).

What a secure cluster has, on loopback and free ports: `hadoop.security.authentication=kerberos`
(RPC only through SASL GSSAPI), block access tokens, and SASL on the data transfer protocol
(`dfs.data.transfer.protection`) instead of root's privileged ports. A DataNode refuses SASL data
transfer without HTTPS unless `ignore.secure.ports.for.testing` is set: it is, as Hadoop's own
secure tests do, so no keystore is needed. The NameNode's web server wants an HTTP principal.

`kerberized_hdfs_conf` gives the client's side: the keys a HADOOP_CONF_DIR of a user of this
cluster holds (hdfs-native reads them through hmsproxy's storage door).
"""

from __future__ import annotations

from pathlib import Path

from hmsproxy.dev import storage_jars
from tests.support.hdfs import HdfsServer
from tests.support.jvm_child import start_or_unavailable

SERVICE = "hdfs/localhost"  # the NameNode's and DataNode's principal (one, as small clusters have)
HTTP = "HTTP/localhost"
PROTECTION = "authentication"


def kerberized_hdfs_conf() -> dict[str, str]:
    """The client's keys: Kerberos on the RPC, SASL (without a security layer) on the data transfer."""
    return {"hadoop.security.authentication": "kerberos", "dfs.data.transfer.protection": PROTECTION}


def server_conf(kdc) -> dict[str, str]:
    service, http = kdc.principals.get(SERVICE) or kdc.add_principal(SERVICE), kdc.principals.get(HTTP) or kdc.add_principal(HTTP)
    return {
        **kerberized_hdfs_conf(),
        "dfs.namenode.kerberos.principal": kdc.principal(SERVICE),
        "dfs.namenode.keytab.file": str(service),
        "dfs.datanode.kerberos.principal": kdc.principal(SERVICE),
        "dfs.datanode.keytab.file": str(service),
        "dfs.web.authentication.kerberos.principal": kdc.principal(HTTP),
        "dfs.web.authentication.kerberos.keytab": str(http),
        "dfs.namenode.kerberos.internal.spnego.principal": kdc.principal(HTTP),
        "dfs.block.access.token.enable": "true",
        "ignore.secure.ports.for.testing": "true",
    }


def start_kerberized_hdfs(root: Path, kdc) -> HdfsServer:
    """A Kerberized minicluster of `kdc`'s realm; `unavailable` (skip, or fail in CI) when it can't start."""
    conf = server_conf(kdc)
    jvm = (f"-Djava.security.krb5.conf={kdc.krb5_conf}", "-Dsun.security.krb5.disableReferrals=true")
    return start_or_unavailable(
        "the Kerberized HDFS minicluster",
        storage_jars.minicluster_classpath,
        lambda cp: HdfsServer(root, cp, conf=conf, jvm_options=jvm).start(),
    )
