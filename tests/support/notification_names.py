"""What a consumer of the merged notification log checks inside each event's JSON message: the
database is named as the federation shows it, in `db` and in every Thrift-JSON object embedded in
the message (docs/notifications.md, "Names as the federation shows them")."""

from __future__ import annotations

import json

#: Message keys holding one Thrift-JSON Table or Partition (their field 2 is the database).
OBJECT_KEYS = ("tableObjJson", "tableObjBeforeJson", "tableObjAfterJson", "ptnObjJson", "partitionObjBeforeJson", "partitionObjAfterJson")


def assert_named_as_the_federation_shows(event_type: str, db: str, table: str | None, message: str) -> None:
    decoded = json.loads(message)
    assert decoded["db"] == db, decoded
    objects = [json.loads(decoded[key]) for key in OBJECT_KEYS if key in decoded]
    objects += [json.loads(p) for p in decoded.get("partitionListJson", [])]
    for obj in objects:
        assert obj["2"]["str"] == db, (event_type, obj["2"])
    if event_type in ("CREATE_TABLE", "ADD_PARTITION", "ALTER_TABLE", "ALTER_PARTITION"):
        assert objects, f"{event_type} carries the table or partition object in its message"
    if event_type == "ADD_PARTITION":
        assert decoded["partitions"] and decoded["table"] == table
