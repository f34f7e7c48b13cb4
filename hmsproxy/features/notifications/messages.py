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
from collections.abc import Callable, Mapping

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
#: Keys of transaction ids in ACID events' messages (Hive 3.1.3's JSONOpenTxnMessage,
#: JSONCommitTxnMessage, JSONAbortTxnMessage, JSONAllocWriteIdMessage; `txnid` also Hive 4's ACID_WRITE).
TXN_ID_KEYS = ("txnid", "fromTxnId", "toTxnId")
TXN_ID_LIST_KEYS = ("txnIds", "txnIdList")
#: The fields naming a database, by struct (a Database's own name is its `name`).
_DB_FIELDS = ("dbName", "table_db", "pktable_db", "fktable_db")


def _db_field_ids(struct: type) -> tuple[str, ...]:
    names = ("name",) if struct is hive.Database else _DB_FIELDS
    return tuple(str(fid) for fid, spec in struct.thrift_spec.items() if spec[1] in names)


_FIELD_IDS = {struct: _db_field_ids(struct) for struct in set(OBJECT_KEYS.values())}

GZIP_PREFIX = "gzip"


def rewrite_message(message: str, message_format: str | None, rename: Rename, txns: Mapping[int, int] | None = None) -> str:
    """`message` with every database name in it renamed, and the transaction ids `txns` maps as clients
    hold them (txn_events.py); in the format it came in."""
    body = decoded_body(message, message_format)
    if body is None:  # not a format we know: as it is
        return message
    if isinstance(body.get("db"), str):
        body["db"] = rename(body["db"])
    if isinstance(body.get("dbName"), str):  # Hive 3.1's ALLOC_WRITE_ID_EVENT
        body["dbName"] = rename(body["dbName"])
    for key, struct in OBJECT_KEYS.items():
        value = body.get(key)
        if isinstance(value, str):
            body[key] = _rewrite_object(value, struct, rename)
        elif isinstance(value, list):
            body[key] = [_rewrite_object(v, struct, rename) if isinstance(v, str) else v for v in value]
    if txns:
        _rewrite_txn_ids(body, txns)
    plain = json.dumps(body, separators=(",", ":"))
    if message_format and message_format.startswith(GZIP_PREFIX):
        # mtime=0: gzip's header holds a time, and an event must read the same at every fetch.
        return base64.b64encode(gzip.compress(plain.encode("utf-8"), mtime=0)).decode("ascii")
    return plain


def decoded_body(message: str | None, message_format: str | None) -> dict | None:
    """The JSON object of a message (gunzipped first for Hive 4's gzip formats); None if it is none."""
    if not message:
        return None
    try:
        if message_format and message_format.startswith(GZIP_PREFIX):
            message = gzip.decompress(base64.b64decode(message)).decode("utf-8")
        body = json.loads(message)
    except (ValueError, OSError, EOFError):
        return None
    return body if isinstance(body, dict) else None


def _rewrite_txn_ids(body: dict, txns: Mapping[int, int]) -> None:
    def swap(value):
        return txns.get(value, value) if isinstance(value, int) else value

    for key in TXN_ID_KEYS:
        if key in body:
            body[key] = swap(body[key])
    for key in TXN_ID_LIST_KEYS:
        if isinstance(body.get(key), list):
            body[key] = [swap(v) for v in body[key]]


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
