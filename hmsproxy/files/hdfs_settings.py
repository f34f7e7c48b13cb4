"""Where an HDFS location's NameNodes are, and the settings hdfs-native is given, from Hadoop's keys.

`hdfs://host:port` is one NameNode (port 8020 when left out); `hdfs://NAME` where `dfs.nameservices`
lists NAME is an HA pair: `dfs.ha.namenodes.NAME` names them, `dfs.namenode.rpc-address.NAME.NN`
says where each listens. hdfs-native does the failover itself; these addresses only let a NameNode
that does not answer be found out in seconds (hdfs-native retries for minutes).
"""

from __future__ import annotations

DEFAULT_PORT = 8020
#: Keys handed to hdfs-native (it reads HADOOP_CONF_DIR itself; these add a Spark driver's keys).
CLIENT_PREFIXES = ("fs.", "dfs.", "hadoop.security.")


def namenode_addresses(authority: str, conf: dict[str, str]) -> list[tuple[str, int]]:
    nameservices = [n.strip() for n in conf.get("dfs.nameservices", "").split(",") if n.strip()]
    if authority in nameservices:
        found = []
        for nn in conf.get(f"dfs.ha.namenodes.{authority}", "").split(","):
            address = conf.get(f"dfs.namenode.rpc-address.{authority}.{nn.strip()}")
            if nn.strip() and address:
                found.append(_host_port(address))
        return found
    return [_host_port(authority)]


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":") if ":" in address else (address, "", "")
    return host.strip("[]"), int(port) if port else DEFAULT_PORT


def client_config(conf: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in conf.items() if k.startswith(CLIENT_PREFIXES)}
