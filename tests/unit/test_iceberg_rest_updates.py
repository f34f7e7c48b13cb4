"""commit_changes: a Hive-catalog writer's new table metadata as a REST commit's requirements and
updates, and the differences it refuses."""

from __future__ import annotations

import copy

import pytest

from hmsproxy.catalogs.iceberg_rest.updates import UnsupportedChange, commit_changes

SCHEMA0 = {"schema-id": 0, "type": "struct", "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}
SNAP1 = {"snapshot-id": 11, "sequence-number": 1, "timestamp-ms": 1, "manifest-list": "file:/t/m1.avro", "summary": {"operation": "append"}}
BASE = {
    "format-version": 2,
    "table-uuid": "u-1",
    "location": "file:/t",
    "last-updated-ms": 1,
    "last-sequence-number": 1,
    "last-column-id": 1,
    "current-schema-id": 0,
    "schemas": [SCHEMA0],
    "last-partition-id": 999,
    "default-spec-id": 0,
    "partition-specs": [{"spec-id": 0, "fields": []}],
    "default-sort-order-id": 0,
    "sort-orders": [{"order-id": 0, "fields": []}],
    "properties": {"a": "1", "gone": "x"},
    "current-snapshot-id": 11,
    "snapshots": [SNAP1],
    "refs": {"main": {"snapshot-id": 11, "type": "branch"}},
    "snapshot-log": [{"snapshot-id": 11, "timestamp-ms": 1}],
    "metadata-log": [],
}


def changed(**fields) -> dict:
    new = copy.deepcopy(BASE)
    new.update(fields)
    new["last-updated-ms"] = 2  # derived fields differ too: never compared
    new["metadata-log"] = [{"metadata-file": "file:/t/metadata/1.json", "timestamp-ms": 1}]
    return new


def test_an_append_adds_the_snapshot_and_moves_main_from_where_it_was():
    snap2 = {**SNAP1, "snapshot-id": 12, "parent-snapshot-id": 11, "sequence-number": 2, "manifest-list": "file:/t/m2.avro"}
    new = changed(snapshots=[SNAP1, snap2], refs={"main": {"snapshot-id": 12, "type": "branch"}}, **{"current-snapshot-id": 12})
    requirements, updates = commit_changes(BASE, new)
    assert requirements == [
        {"type": "assert-table-uuid", "uuid": "u-1"},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 11},
    ]
    assert updates == [
        {"action": "add-snapshot", "snapshot": snap2},
        {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 12, "type": "branch"},
    ]


def test_the_first_snapshot_asserts_main_did_not_exist():
    empty = {**copy.deepcopy(BASE), "snapshots": [], "refs": {}, "current-snapshot-id": None}
    new = {**copy.deepcopy(BASE)}
    requirements, updates = commit_changes(empty, new)
    assert {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None} in requirements
    assert [u["action"] for u in updates] == ["add-snapshot", "set-snapshot-ref"]


def test_a_new_current_schema_is_added_and_set_as_the_last_added():
    schema1 = {
        "schema-id": 1,
        "type": "struct",
        "fields": [*SCHEMA0["fields"], {"id": 2, "name": "n", "required": False, "type": "string"}],
    }
    new = changed(schemas=[SCHEMA0, schema1], **{"current-schema-id": 1, "last-column-id": 2})
    requirements, updates = commit_changes(BASE, new)
    assert {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1} in requirements
    assert {"type": "assert-current-schema-id", "current-schema-id": 0} in requirements
    assert updates == [
        {"action": "add-schema", "schema": schema1, "last-column-id": 2},
        {"action": "set-current-schema", "schema-id": -1},
    ]


def test_specs_sort_orders_properties_location_and_format_version():
    spec1 = {"spec-id": 1, "fields": [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[4]"}]}
    order1 = {"order-id": 1, "fields": [{"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}
    new = changed(
        **{
            "partition-specs": [*BASE["partition-specs"], spec1],
            "default-spec-id": 1,
            "last-partition-id": 1000,
            "sort-orders": [*BASE["sort-orders"], order1],
            "default-sort-order-id": 1,
            "properties": {"a": "2", "b": "3"},
            "location": "file:/t2",
            "format-version": 3,
        }
    )
    requirements, updates = commit_changes(BASE, new)
    assert requirements == [
        {"type": "assert-table-uuid", "uuid": "u-1"},
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
        {"type": "assert-default-spec-id", "default-spec-id": 0},
        {"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
    ]
    assert updates == [
        {"action": "upgrade-format-version", "format-version": 3},
        {"action": "add-spec", "spec": spec1},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": order1},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-properties", "updates": {"a": "2", "b": "3"}},
        {"action": "remove-properties", "removals": ["gone"]},
        {"action": "set-location", "location": "file:/t2"},
    ]


def test_expired_snapshots_and_a_dropped_tag_are_removed():
    old = {**copy.deepcopy(BASE), "refs": {**BASE["refs"], "v1": {"snapshot-id": 11, "type": "tag"}}}
    snap2 = {**SNAP1, "snapshot-id": 12, "sequence-number": 2}
    old["snapshots"] = [SNAP1, snap2]
    old["refs"]["main"] = {"snapshot-id": 12, "type": "branch"}
    new = {**copy.deepcopy(old), "snapshots": [snap2], "refs": {"main": {"snapshot-id": 12, "type": "branch"}}}
    requirements, updates = commit_changes(old, new)
    assert {"type": "assert-ref-snapshot-id", "ref": "v1", "snapshot-id": 11} in requirements
    assert updates == [{"action": "remove-snapshot-ref", "ref-name": "v1"}, {"action": "remove-snapshots", "snapshot-ids": [11]}]


def test_format_1_metadata_without_refs_has_main_at_its_current_snapshot():
    old = {k: v for k, v in BASE.items() if k != "refs"} | {"format-version": 1}
    snap2 = {**SNAP1, "snapshot-id": 12}
    new = {**copy.deepcopy(old), "snapshots": [SNAP1, snap2], "current-snapshot-id": 12}
    requirements, updates = commit_changes(old, new)
    assert {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 11} in requirements
    assert {"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 12, "type": "branch"} in updates


def test_no_change_is_nothing_to_send():
    assert commit_changes(BASE, changed()) == ([], [])


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"table-uuid": "u-2"}, "another table's"),
        ({"format-version": 1}, "format version 1 is older"),
        ({"statistics": [{"snapshot-id": 11}]}, "changes to statistics can't be sent"),
        ({"snapshots": [{**SNAP1, "manifest-list": "file:/other.avro"}]}, "snapshot 11 was rewritten"),
    ],
)
def test_what_a_rest_commit_cant_carry_is_refused(fields, said):
    with pytest.raises(UnsupportedChange, match=said):
        commit_changes(BASE, changed(**fields))
