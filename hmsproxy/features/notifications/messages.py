"""Database names inside an event's message, as the federation shows them.

Hive 2.3's and 3.1's JSONMessageFactory write a JSON object with the database in `db` and, for most
events, the objects themselves as strings of Thrift's JSON protocol (TJSONProtocol: fields by id,
`{"2":{"str":"sales"}}`) under keys ending in `Json`; field names checked against the message classes
of hive-metastore 2.3.10 and hive-standalone-metastore 3.1.3. Hive 4's default `gzip(json-2.0)` is the
same JSON, gzipped and base64-encoded: decoded, rewritten and encoded again, so each event keeps
its format. A message in any other format is passed on as it is.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable

from hmsproxy.protocol import idl

hive = idl.hive

Rename = Callable[[str], str]

#: Message key -> the Thrift struct its JSON string (or list of strings) holds.
OBJECT_KEYS: dict[str, type] = {
    **dict.fromkeys(("tableObjJson", "tableObjBeforeJson", "tableObjAfterJson"), hive.Table),
    **dict.fromkeys(("partitionListJson", "partitionObjBeforeJson", "partitionObjAfterJson", "ptnObjJson"), hive.Partition),
    **dict.fromkeys(("dbJson", "dbObjBeforeJson", "dbObjAfterJson"), hive.Database),
    "functionObjJson": hive.Function,
    **dict.fromkeys(("indexObjJson", "beforeIndexObjJson", "afterIndexObjJson"), hive.Index),
    "primaryKeyListJson": hive.SQLPrimaryKey,
    "foreignKeyListJson": hive.SQLForeignKey,
    "uniqueConstraintListJson": hive.SQLUniqueConstraint,
    "notNullConstraintListJson": hive.SQLNotNullConstraint,
}
#: The fields naming a database, by struct (a Database's own name is its `name`).
_DB_FIELDS = ("dbName", "table_db", "pktable_db", "fktable_db")


def _db_field_ids(struct: type) -> tuple[str, ...]:
    names = ("name",) if struct is hive.Database else _DB_FIELDS
    return tuple(str(fid) for fid, spec in struct.thrift_spec.items() if spec[1] in names)


_FIELD_IDS = {struct: _db_field_ids(struct) for struct in set(OBJECT_KEYS.values())}

GZIP_PREFIX = "gzip"


def rewrite_message(message: str, message_format: str | None, rename: Rename) -> str:
    """`message` with every database name in it renamed; in the format it came in."""
    if message_format and message_format.startswith(GZIP_PREFIX):
        plain = gzip.decompress(base64.b64decode(message)).decode("utf-8")
        return base64.b64encode(gzip.compress(_rewrite_json(plain, rename).encode("utf-8"))).decode("ascii")
    return _rewrite_json(message, rename)


def _rewrite_json(message: str, rename: Rename) -> str:
    try:
        body = json.loads(message)
    except ValueError:  # not a format we know: as it is
        return message
    if not isinstance(body, dict):
        return message
    if isinstance(body.get("db"), str):
        body["db"] = rename(body["db"])
    for key, struct in OBJECT_KEYS.items():
        value = body.get(key)
        if isinstance(value, str):
            body[key] = _rewrite_object(value, struct, rename)
        elif isinstance(value, list):
            body[key] = [_rewrite_object(v, struct, rename) if isinstance(v, str) else v for v in value]
    return json.dumps(body, separators=(",", ":"))


def _rewrite_object(encoded: str, struct: type, rename: Rename) -> str:
    """One Thrift-JSON object with its database fields renamed."""
    try:
        fields = json.loads(encoded)
    except ValueError:
        return encoded
    if not isinstance(fields, dict):
        return encoded
    for fid in _FIELD_IDS[struct]:
        value = fields.get(fid)
        if isinstance(value, dict) and isinstance(value.get("str"), str):
            value["str"] = rename(value["str"])
    return json.dumps(fields, separators=(",", ":"))
