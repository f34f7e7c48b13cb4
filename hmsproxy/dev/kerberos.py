"""A local metastore that only speaks SASL GSSAPI (Kerberos), for tests of hmsproxy's Kerberos side.

`MetastoreKerberos` is what LocalMetastore(kerberos=...) adds to a plain one (measured with Hive
2.3 from pyspark's jars, /work/shared/ARCHITECTURE.md's recipe):

* the JVM finds the realm through `-Djava.security.krb5.conf` alone;
* hive-site.xml: `hive.metastore.sasl.enabled`, its principal (a host name, not `_HOST`: the
  metastore would put this machine's canonical name there) and keytab;
* core-site.xml beside it (on the classpath): `hadoop.security.authentication=kerberos`, without
  which Hadoop skips the keytab login silently, and `hadoop.rpc.protection` for the QOP offered.

The metastore then refuses plain Thrift, so its readiness check connects with `client`: the
proxy's own SASL settings (upstream/kerberos.GssapiSettings) for some principal of the realm.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: SASL QOP → Hadoop's hadoop.rpc.protection, which Hive 2.3's SASL server reads.
RPC_PROTECTION = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}


@dataclass(frozen=True)
class MetastoreKerberos:
    krb5_conf: Path
    principal: str  # e.g. hive/localhost@HMSPROXY.TEST
    keytab: Path
    client: Any  # wire.SaslSettings for the readiness check's connections
    qop: str = "auth"

    def hive_conf(self) -> dict[str, str]:
        return {
            "hive.metastore.sasl.enabled": "true",
            "hive.metastore.kerberos.principal": self.principal,
            "hive.metastore.kerberos.keytab.file": str(self.keytab),
        }

    def core_site(self) -> dict[str, str]:
        return {
            "hadoop.security.authentication": "kerberos",
            "hadoop.security.authorization": "false",
            "hadoop.rpc.protection": RPC_PROTECTION[self.qop],
        }

    def jvm_args(self) -> list[str]:
        return [f"-Djava.security.krb5.conf={self.krb5_conf}", "-Dsun.security.krb5.disableReferrals=true"]
