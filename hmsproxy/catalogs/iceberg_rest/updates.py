"""What a Hive-catalog writer's new table metadata changes, as an Iceberg REST commit: the updates
that turn the catalog's current metadata into the new one, and the requirements that make the
commit fail (409) if the table moved on meanwhile.

The requirements are the ones Iceberg's own REST clients send for such updates (the table's uuid;
each changed branch or tag at the snapshot it had; the schema, spec and sort order ids it had when
one is added or changed), so a writer that started from an older version loses cleanly.
A difference the REST protocol's updates can't carry is refused (UnsupportedChange) before anything
is sent.
"""

from __future__ import annotations

MAIN = "main"
#: Metadata fields the catalog derives itself from the updates: never compared.
_DERIVED = frozenset(
    {
        "last-updated-ms",
        "last-sequence-number",
        "last-column-id",
        "last-partition-id",
        "snapshot-log",
        "metadata-log",
        "current-snapshot-id",
        "schema",  # format 1's copy of the current schema
        "partition-spec",  # format 1's copy of the default spec
        "next-row-id",
    }
)
#: Fields compared by the updates below.
_HANDLED = frozenset(
    {
        "format-version",
        "table-uuid",
        "location",
        "properties",
        "schemas",
        "current-schema-id",
        "partition-specs",
        "default-spec-id",
        "sort-orders",
        "default-sort-order-id",
        "snapshots",
        "refs",
    }
)


class UnsupportedChange(ValueError):
    """The new metadata differs in a way a REST commit can't express."""


def commit_changes(old: dict, new: dict) -> tuple[list[dict], list[dict]]:
    """(requirements, updates) turning metadata `old` into `new`; no updates: nothing changed."""
    if old.get("table-uuid") != new.get("table-uuid"):
        raise UnsupportedChange(f"the new metadata is another table's (uuid {new.get('table-uuid')}, not {old.get('table-uuid')})")
    others = sorted(k for k in set(old) | set(new) if k not in _DERIVED | _HANDLED and old.get(k) != new.get(k))
    if others:
        raise UnsupportedChange(f"changes to {', '.join(others)} can't be sent as a REST commit")
    requirements: list[dict] = [{"type": "assert-table-uuid", "uuid": old.get("table-uuid")}]
    updates: list[dict] = []
    _format_version(old, new, updates)
    _schemas(old, new, requirements, updates)
    _by_id(old, new, "partition-specs", "spec-id", "default-spec-id", "add-spec", "spec", "set-default-spec", requirements, updates)
    _by_id(old, new, "sort-orders", "order-id", "default-sort-order-id", "add-sort-order", "sort-order", "set-default-sort-order", requirements, updates)  # fmt: skip
    _snapshots(old, new, requirements, updates)
    _properties(old, new, updates)
    if old.get("location") != new.get("location"):
        updates.append({"action": "set-location", "location": new.get("location")})
    return (requirements, updates) if updates else ([], [])


def _format_version(old: dict, new: dict, updates: list) -> None:
    before, after = int(old.get("format-version") or 1), int(new.get("format-version") or 1)
    if after < before:
        raise UnsupportedChange(f"format version {after} is older than the table's {before}")
    if after > before:
        updates.append({"action": "upgrade-format-version", "format-version": after})


def _schemas(old: dict, new: dict, requirements: list, updates: list) -> None:
    known = {s.get("schema-id") for s in old.get("schemas") or ()}
    added = [s for s in new.get("schemas") or () if s.get("schema-id") not in known]
    if added:
        requirements.append({"type": "assert-last-assigned-field-id", "last-assigned-field-id": old.get("last-column-id")})
    for schema in added:
        updates.append({"action": "add-schema", "schema": schema, "last-column-id": new.get("last-column-id")})
    current = new.get("current-schema-id")
    if current != old.get("current-schema-id"):
        requirements.append({"type": "assert-current-schema-id", "current-schema-id": old.get("current-schema-id")})
        # -1: the schema just added (the catalog may number it otherwise)
        updates.append({"action": "set-current-schema", "schema-id": -1 if current in {s.get("schema-id") for s in added} else current})


def _by_id(old, new, key, id_key, default_key, add, field, set_default, requirements, updates) -> None:
    """Partition specs and sort orders: the new ones added, the default set (and asserted)."""
    known = {item.get(id_key) for item in old.get(key) or ()}
    added = [item for item in new.get(key) or () if item.get(id_key) not in known]
    if key == "partition-specs" and added:
        requirements.append({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": old.get("last-partition-id")})
    for item in added:
        updates.append({"action": add, field: item})
    default = new.get(default_key)
    if default != old.get(default_key):
        assertion = "assert-default-spec-id" if key == "partition-specs" else "assert-default-sort-order-id"
        requirements.append({"type": assertion, default_key: old.get(default_key)})
        updates.append(
            {"action": set_default, default_key.removeprefix("default-"): -1 if default in {i.get(id_key) for i in added} else default}
        )


def _refs(metadata: dict) -> dict[str, dict]:
    """Branches and tags; format 1 metadata without refs has main at its current snapshot."""
    refs = dict(metadata.get("refs") or {})
    current = metadata.get("current-snapshot-id")
    if MAIN not in refs and current is not None and current >= 0:
        refs[MAIN] = {"snapshot-id": current, "type": "branch"}
    return refs


def _snapshots(old: dict, new: dict, requirements: list, updates: list) -> None:
    before = {s.get("snapshot-id"): s for s in old.get("snapshots") or ()}
    after = {s.get("snapshot-id"): s for s in new.get("snapshots") or ()}
    for snapshot_id, snapshot in after.items():
        if snapshot_id not in before:
            updates.append({"action": "add-snapshot", "snapshot": snapshot})
        elif snapshot != before[snapshot_id]:
            raise UnsupportedChange(f"snapshot {snapshot_id} was rewritten")
    old_refs, new_refs = _refs(old), _refs(new)
    for name in sorted(set(old_refs) | set(new_refs)):
        was, now = old_refs.get(name), new_refs.get(name)
        if was == now:
            continue
        requirements.append({"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": was.get("snapshot-id") if was else None})
        if now is None:
            updates.append({"action": "remove-snapshot-ref", "ref-name": name})
        else:
            updates.append({"action": "set-snapshot-ref", "ref-name": name, **now})
    removed = sorted(i for i in before if i not in after)
    if removed:
        updates.append({"action": "remove-snapshots", "snapshot-ids": removed})


def _properties(old: dict, new: dict, updates: list) -> None:
    before, after = old.get("properties") or {}, new.get("properties") or {}
    changed = {k: v for k, v in after.items() if before.get(k) != v}
    removed = sorted(k for k in before if k not in after)
    if changed:
        updates.append({"action": "set-properties", "updates": changed})
    if removed:
        updates.append({"action": "remove-properties", "removals": removed})
