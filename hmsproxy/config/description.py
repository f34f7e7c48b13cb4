"""The resolved federation as readable text (for ``hmsproxy check-config``)."""

from __future__ import annotations

from collections.abc import Sequence

from hmsproxy.config.model import (
    AccessControlType,
    Config,
    DatabaseResolution,
    MetastoreConfig,
    ProxyUser,
    proxy_users,
    qop_list,
)
from hmsproxy.config.sections import ConfigSection


def _describe_access(ms: MetastoreConfig) -> list[tuple[str, str]]:
    access = ms.access_control_type
    rows = [("access control", access.value)]
    if access is AccessControlType.READ_ONLY:
        rows.append(("writes", "none (read only)"))
    elif access is AccessControlType.READ_AND_WRITE_AND_CREATE:
        rows.append(("writes", "all databases; may create databases"))
    else:
        listed = ", ".join(ms.writable_database_white_list) or "(empty: no database is writable)"
        creates = (
            "may create databases (they become writable)"
            if access is AccessControlType.READ_AND_WRITE_AND_CREATE_ON_DATABASE_WHITELIST
            else "may not create databases"
        )
        rows.append(("writable databases", listed))
        rows.append(("creates", creates))
    return rows


def _describe_operations(config: Config, feature_sections: Sequence[ConfigSection]) -> list[str]:
    server, http, audit = config.server, config.http, config.audit
    tls = "off"
    if server.tls is not None:
        tls = f"on (cert {server.tls.cert_file}, key {server.tls.key_file}"
        tls += f"; clients need a certificate from {server.tls.client_ca_file})" if server.tls.client_ca_file else ")"
    ops = "off" if http.port is None else f"http://{http.host}:{http.port or '<any free port>'} (/metrics, /healthz, /readyz)"
    if audit.enabled:
        where = audit.file or "standard error"
        audit_text = f"{audit.level} calls to {where} (arguments cut at {audit.max_arg_chars} chars)"
    else:
        audit_text = "off"
    kerberos = "none (no metastore with sasl)"
    if server.sasl is not None:
        port = (
            f"SASL GSSAPI only (QOP {','.join(qop_list(server.sasl.qop))}, the client picks; identity: the principal's short name)"
            if server.sasl.enabled
            else "plain"
        )
        kerberos = f"{_own_principal(server)} from keytab {server.sasl.keytab} (towards metastores with sasl; own port: {port})"
        if server.sasl.enabled and server.sasl.auth_to_local:
            kerberos += f"; user names by auth-to-local: {' | '.join(rule.text for rule in server.sasl.auth_to_local)}"
        if server.sasl.enabled:
            kerberos += (
                f"; issues delegation tokens (DIGEST-MD5 on its port; renew interval {server.sasl.token_renew_interval_ms} ms,"
                f" max lifetime {server.sasl.token_max_lifetime_ms} ms)"
            )
        if server.sasl.enabled and server.sasl.impersonation:
            rules = proxy_users(server.sasl.impersonation).values()
            kerberos += f"; may act for others with set_ugi: {', '.join(_describe_proxy_user(rule) for rule in rules)}"
    return [
        f"TLS: {tls}",
        f"Kerberos identity: {kerberos}",
        f"Workers: {server.workers} process{'es' if server.workers > 1 else ''}",
        f"Operations endpoint: {ops}",
        f"Audit: {audit_text}",
        f"Store: {config.store.url}",
        *_feature_lines(config, feature_sections),
    ]


def _feature_lines(config: Config, feature_sections: Sequence[ConfigSection]) -> list[str]:
    return [line for s in feature_sections for line in s.describe(config.sections.get(s.key, s.default))]


def describe(config: Config, feature_sections: Sequence[ConfigSection] = ()) -> str:
    """The resolved federation as readable text (for `hmsproxy check-config`), with the settings
    of `feature_sections` (the features' own config keys)."""
    server = config.server
    prefixed = config.database_resolution is DatabaseResolution.PREFIXED
    lines = []
    if config.sources:
        lines.append(f"Configuration: {', '.join(config.sources)}")
    lines.append(f"Listening on: {server.host}:{server.port} ({server.transport} transport)")
    lines.append(
        f"Timeouts: fan-out {server.fanout_timeout_ms} ms (+ each metastore's latency), "
        f"connect {server.connect_timeout_s:g} s, backend call {server.backend_timeout_s:g} s, "
        f"probe a metastore after {server.probe_after_s:g} s without an answer "
        f"(a failed probe fails its waiting and new calls, about {2 * server.probe_after_s:g} s into a hang), "
        f"a client's TLS and SASL handshake {server.handshake_timeout_s:g} s, "
        + (
            f"a quiet client's metastore connections closed after {server.upstream_idle_s:g} s"
            if server.upstream_idle_s > 0
            else "a quiet client's metastore connections kept"
        )
    )
    lines.extend(_describe_operations(config, feature_sections))
    if prefixed:
        lines.append(
            "Database resolution: PREFIXED (clients name databases as <prefix><database>; names matching no prefix go to the primary)"
        )
    else:
        lines.append(
            "Database resolution: MANUAL (databases keep their names; a database not mapped to a federated metastore goes to the primary)"
        )
    lines.append(f"Metastores: {len(config.metastores)} (1 primary, {len(config.federated)} federated)")

    for ms in config.metastores:
        rows: list[tuple[str, str]] = []
        rows.append(("uris", ", ".join(ms.uris)))
        if ms.read_only_uris:
            rows.append(("read-only uris", ", ".join(ms.read_only_uris) + " (get_* calls go here)"))
        prefix = repr(ms.database_prefix) + (" (no prefix)" if not ms.database_prefix else "")
        if not prefixed:
            prefix += " (not used in MANUAL mode)"
        rows.append(("database prefix", prefix))
        if ms.mapped_databases is None:
            rows.append(("mapped databases", "all"))
        elif not ms.mapped_databases:
            rows.append(("mapped databases", "none (no database of this metastore is visible)"))
        else:
            rows.append(("mapped databases", ", ".join(ms.mapped_databases)))
        if ms.mapped_tables:
            for i, mt in enumerate(ms.mapped_tables):
                rows.append(("mapped tables" if i == 0 else "", f"{mt.database}: {', '.join(mt.patterns)}"))
            rows.append(("", "(tables of other databases: all)"))
        else:
            rows.append(("mapped tables", "all"))
        if ms.database_name_mapping:
            for i, (remote, shown) in enumerate(ms.database_name_mapping.items()):
                rows.append(
                    (
                        "database name mapping" if i == 0 else "",
                        f"{remote} -> also shown as {ms.database_prefix if prefixed else ''}{shown}",
                    )
                )
        else:
            rows.append(("database name mapping", "none"))
        rows.extend(_describe_access(ms))
        deadline = server.fanout_timeout_ms + ms.latency_ms
        rows.append(("latency", f"{ms.latency_ms} ms (fan-out deadline {deadline} ms)"))
        if ms.sasl is not None:
            rows.append(("sasl", f"GSSAPI to {ms.sasl.principal} (_HOST: each URI's host), QOP {ms.sasl.qop}"))
        rows.append(("hive version", ms.hive_version or "probed on first connect"))
        rows.append(("metadata cache", _describe_cache(ms.cache)))
        rows.append(("hedged reads", _describe_hedge(ms)))

        role = "primary" if ms.primary else "federated"
        lines.append("")
        lines.append(f"[{role}] {ms.name}")
        width = max(len(label) for label, _ in rows)
        for label, value in rows:
            label_text = f"{label}:" if label else ""
            lines.append(f"  {label_text:<{width + 1}}  {value}")
    return "\n".join(lines) + "\n"


def _describe_hedge(ms) -> str:
    hedge = ms.hedge
    if hedge is None:
        return "off"
    if len(ms.uris) < 2:
        return "on, but with one URI nothing is hedged"
    return (
        f"a read not answered within the p{hedge.percentile:g} of its recent reads "
        f"(at least {hedge.min_ms} ms, at most {hedge.max_ms} ms) also goes to the next URI; the first answer wins"
    )


def _describe_cache(cache) -> str:
    if cache is None:
        return "off"
    fresh = (
        f"notification log every {cache.poll_interval_s:g} s, TTL {cache.ttl_s:g} s"
        if cache.follow_notifications
        else f"TTL {cache.ttl_s:g} s"
    )
    stale = "; serves stale answers while down" if cache.serve_stale else ""
    return f"{cache.max_entries} entries / {cache.max_bytes:,} bytes at most; fresh by {fresh}{stale}"


def _describe_proxy_user(rule: ProxyUser) -> str:
    """`hive` (anyone, anywhere) or `hive (for users alice; groups etl; from 10.0.0.0/8)`."""
    if rule.hosts == ("*",) and rule.users == ("*",):
        return rule.name
    limits = [f"{what} {','.join(names)}" for what, names in (("users", rule.users), ("groups", rule.groups)) if names]
    return f"{rule.name} (for {'; '.join(limits)}; from {','.join(rule.hosts)})"


def _own_principal(server) -> str:
    """server.sasl.principal as the proxy resolves it, with the `_HOST` rule when it has one."""
    from hmsproxy.protocol.kerberos_client import is_address, own_principal

    pattern = server.sasl.principal
    if "_HOST" not in pattern:
        return pattern
    resolved = own_principal(pattern, server.host)
    if server.host and not is_address(server.host):
        return f"{pattern} = {resolved} (_HOST: server.host, a host name; Hive's metastore would take this machine's canonical name)"
    return f"{pattern} = {resolved} (_HOST: this machine's canonical name, as Hive's metastore; server.host {server.host or '(none)'} is an address)"
