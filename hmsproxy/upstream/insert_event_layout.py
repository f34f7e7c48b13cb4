"""`fire_listener_event` for Hive 3.0+ metastores, whose InsertEventRequestData has another layout.

Hive 3.0 put `1: optional bool replace` first and moved `filesAdded` and `filesAddedChecksum` to ids 2
and 3. Our IDL has 2.3's layout (1: filesAdded, 2: filesAddedChecksum), so a Hive 2.3 client's INSERT
event (Spark with hive.metastore.dml.events) reached a 3.x metastore with `filesAdded` where `replace`
belongs: the metastore refused the request undecoded and closed the connection. To a metastore
configured as 3.0 or later the request goes in 3.x's layout instead (translations.py).

A 3.x client's request decoded with our layout has its files at id 2, our `filesAddedChecksum`, and no
`filesAdded`: those are its files (its checksums and `replace` were lost when it was decoded).
"""

from __future__ import annotations

import io

import thriftpy2

from hmsproxy.protocol import idl

#: Hive 3.1.3's definitions of the structs a fire_listener_event carries (hive_metastore.thrift).
_HIVE3_IDL = """
struct InsertEventRequestData {
  1: optional bool replace,
  2: required list<string> filesAdded,
  3: optional list<string> filesAddedChecksum,
}
union FireEventRequestData {
  1: optional InsertEventRequestData insertData,
}
struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: optional string dbName,
  4: optional string tableName,
  5: optional list<string> partitionVals,
}
struct FireEventResponse {
}
service Hive3Events {
  FireEventResponse fire_listener_event(1: FireEventRequest rqst),
}
"""

hive3 = thriftpy2.load_fp(io.StringIO(_HIVE3_IDL), module_name="hive3_fire_event_thrift")


def hive3_fire_listener_event(args):
    """`args` (a fire_listener_event_args in our layout) in Hive 3's layout, same call name."""
    rqst = args.rqst
    data = None
    if rqst.data is not None and rqst.data.insertData is not None:
        insert = rqst.data.insertData
        if insert.filesAdded is not None:  # a 2.3 client's: files and their checksums
            files, checksums = insert.filesAdded, insert.filesAddedChecksum
        else:  # a 3.x client's, whose files landed on our id 2
            files, checksums = insert.filesAddedChecksum or [], None
        data = hive3.FireEventRequestData(insertData=hive3.InsertEventRequestData(filesAdded=files, filesAddedChecksum=checksums))
    request = hive3.FireEventRequest(
        successful=rqst.successful,
        data=data or hive3.FireEventRequestData(),
        dbName=rqst.dbName,
        tableName=rqst.tableName,
        partitionVals=rqst.partitionVals,
    )
    return hive3.Hive3Events.fire_listener_event_args(rqst=request)


def answer(success, args):
    """Neither 2.3's nor 3.1's FireEventResponse carries anything (Hive 4's has eventIds)."""
    return idl.hive.FireEventResponse()
