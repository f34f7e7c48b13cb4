"""fire_listener_event to a Hive 3.0+ metastore in its layout of InsertEventRequestData
(hmsproxy/upstream/insert_event_layout.py): the bytes a 3.x metastore reads, decoded with 3.1's
definitions, carry the files where 3.1 expects them."""

from __future__ import annotations

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.protocol import idl
from hmsproxy.upstream.insert_event_layout import hive3
from hmsproxy.upstream.translations import TRANSLATIONS

hive = idl.hive
P = idl.HmsProxy


def as_3_1_reads_it(args):
    """`args` written to the wire, then read as Hive 3.1's fire_listener_event_args."""
    out = TMemoryBuffer()
    args.write(TBinaryProtocolFactory().get_protocol(out))
    read = hive3.Hive3Events.fire_listener_event_args()
    read.read(TBinaryProtocolFactory().get_protocol(TMemoryBuffer(out.getvalue())))
    return read.rqst


def request(insert):
    rqst = hive.FireEventRequest(
        successful=True, data=hive.FireEventRequestData(insertData=insert), dbName="sales", tableName="orders", partitionVals=["1"]
    )
    return P.fire_listener_event_args(rqst=rqst)


TRANSLATION = TRANSLATIONS["fire_listener_event"]


def test_only_metastores_of_3_0_or_later_get_the_other_layout():
    assert TRANSLATION.needed_on((3, 1)) and TRANSLATION.needed_on((4, 0, 1))
    assert not TRANSLATION.needed_on((2, 3)) and not TRANSLATION.needed_on(())


def test_a_2_3_clients_files_and_checksums_land_where_3_1_reads_them():
    rqst = as_3_1_reads_it(
        TRANSLATION.build(request(hive.InsertEventRequestData(filesAdded=["f1", "f2"], filesAddedChecksum=["c1", "c2"])))
    )
    assert rqst.data.insertData.filesAdded == ["f1", "f2"]
    assert rqst.data.insertData.filesAddedChecksum == ["c1", "c2"]
    assert rqst.data.insertData.replace is None
    assert (rqst.successful, rqst.dbName, rqst.tableName, rqst.partitionVals) == (True, "sales", "orders", ["1"])


def test_our_layout_would_put_a_2_3_clients_files_where_3_1_wants_replace():
    rqst = as_3_1_reads_it(request(hive.InsertEventRequestData(filesAdded=["f1"])))
    assert rqst.data.insertData.filesAdded is None  # required in 3.1: the metastore refuses the request


def test_a_3_x_clients_files_decoded_at_our_id_2_go_on_as_its_files():
    # What our 2.3 layout makes of a 3.1 client's InsertEventRequestData: its files at id 2.
    rqst = as_3_1_reads_it(TRANSLATION.build(request(hive.InsertEventRequestData(filesAdded=None, filesAddedChecksum=["f1"]))))
    assert rqst.data.insertData.filesAdded == ["f1"] and rqst.data.insertData.filesAddedChecksum is None


def test_an_event_without_insert_data_keeps_its_names():
    args = P.fire_listener_event_args(rqst=hive.FireEventRequest(successful=False, data=hive.FireEventRequestData(), dbName="sales"))
    rqst = as_3_1_reads_it(TRANSLATION.build(args))
    assert (rqst.successful, rqst.dbName, rqst.data.insertData) == (False, "sales", None)
