"""The Glue catalog client without a server: Glue's shapes as Hive's, Hive filters as Glue expressions,
and boto3's answers (botocore's Stubber) as the catalog interface's results and errors."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import pytest
from botocore.stub import Stubber

from hmsproxy.catalogs import glue_shapes
from hmsproxy.catalogs.client import CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.glue import GlueCatalog, GlueSettings
from hmsproxy.catalogs.glue_filter import glue_expression
from hmsproxy.features.remotes.factories import get_factory
from hmsproxy.protocol.partition_filter import FilterError

SETTINGS = GlueSettings.of({"aws.region": "eu-west-1", "aws.glue.endpoint": "http://127.0.0.1:1", "aws.glue.catalog-id": "123456789012"})

GLUE_TABLE = {
    "Name": "payments",
    "DatabaseName": "sales",
    "Owner": "etl",
    "CreateTime": datetime(2026, 11, 1, tzinfo=UTC),
    "TableType": "EXTERNAL_TABLE",
    "Parameters": {"EXTERNAL": "TRUE"},
    "PartitionKeys": [{"Name": "ds", "Type": "string", "Comment": "day"}],
    "StorageDescriptor": {
        "Columns": [{"Name": "id", "Type": "bigint", "Parameters": {"x": "y"}}, {"Name": "paid", "Type": "double"}],
        "Location": "s3://bucket/payments",
        "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", "Parameters": {"a": "b"}},
        "NumberOfBuckets": 4,
        "BucketColumns": ["id"],
        "SortColumns": [{"Column": "id", "SortOrder": 0}],
        "Parameters": {"sd": "param"},
        "Compressed": True,
    },
}


def test_a_glue_table_is_hives_table():
    t = glue_shapes.table(GLUE_TABLE, "sales")
    assert (t.dbName, t.tableName, t.owner, t.tableType) == ("sales", "payments", "etl", "EXTERNAL_TABLE")
    assert t.createTime == int(datetime(2026, 11, 1, tzinfo=UTC).timestamp())
    assert [(c.name, c.type) for c in t.sd.cols] == [("id", "bigint"), ("paid", "double")]
    assert [(k.name, k.type, k.comment) for k in t.partitionKeys] == [("ds", "string", "day")]
    assert t.sd.serdeInfo.serializationLib.endswith("ParquetHiveSerDe") and t.sd.serdeInfo.parameters == {"a": "b"}
    assert (t.sd.numBuckets, t.sd.bucketCols, t.sd.compressed) == (4, ["id"], True)
    assert [(o.col, o.order) for o in t.sd.sortCols] == [("id", 0)]
    assert t.sd.parameters == {"sd": "param"} and t.parameters == {"EXTERNAL": "TRUE"}
    assert t.sd.skewedInfo.skewedColNames == []


def test_what_glue_leaves_out_is_filled_as_hive_would():
    t = glue_shapes.table({"Name": "bare"}, "sales")
    assert t.tableType == "EXTERNAL_TABLE" and t.partitionKeys == [] and t.parameters == {}
    assert (t.sd.cols, t.sd.numBuckets, t.sd.bucketCols, t.sd.sortCols, t.sd.serdeInfo.parameters) == ([], -1, [], [], {})
    db = glue_shapes.database({"Name": "sales"})
    assert (db.name, db.locationUri, db.parameters) == ("sales", "hmsproxy-remote:/sales", {})  # Spark needs one
    p = glue_shapes.partition({"Values": ["2026-11-01"], "StorageDescriptor": {"Location": "s3://b/p/ds=2026-11-01"}}, "sales", "payments")
    assert (p.values, p.dbName, p.tableName, p.sd.location) == (["2026-11-01"], "sales", "payments", "s3://b/p/ds=2026-11-01")


@pytest.mark.parametrize(
    "hive, glue",
    [
        ('ds = "2026-11-02"', "ds = '2026-11-02'"),
        ("ds != 'a' and (h < 3 or h >= 10)", "ds <> 'a' AND ( h < 3 OR h >= 10 )"),
        ("'2026-11-02' < ds", "ds > '2026-11-02'"),
        ("ds between DATE '2026-11-01' and '2026-11-03'", "ds BETWEEN '2026-11-01' AND '2026-11-03'"),
        ("ds not in ('a', \"it's\")", "ds NOT IN ( 'a' , 'it''s' )"),
        ("`ds` = 'x'", "ds = 'x'"),
    ],
)
def test_hive_filters_said_in_glues_syntax(hive, glue):
    assert glue_expression(hive) == glue


def test_like_is_not_translated_and_nonsense_is_refused():
    assert glue_expression('ds like "2026.*"') is None
    with pytest.raises(FilterError):
        glue_expression("ds = 'unterminated")


def test_settings_name_the_property_that_is_wrong():
    with pytest.raises(ValueError, match="'aws.region' is required"):
        GlueSettings.of({})
    with pytest.raises(ValueError, match="'aws.glue.endpoint' must be an http"):
        GlueSettings.of({"aws.region": "eu-west-1", "aws.glue.endpoint": "127.0.0.1:1"})
    with pytest.raises(ValueError, match="'aws.glue.catalog-id' must be a 12-digit"):
        GlueSettings.of({"aws.region": "eu-west-1", "aws.glue.catalog-id": "acct"})
    assert SETTINGS.where == "Glue catalog eu-west-1 (account 123456789012) at http://127.0.0.1:1"
    factory = get_factory("glue")
    assert factory.where({"aws.region": "us-east-1", "aws.profile": "ro"}) == "Glue catalog us-east-1 as profile ro"


@pytest.fixture
def stubbed(monkeypatch):
    """A GlueCatalog whose boto3 client answers from a Stubber (no network)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    catalog = GlueCatalog(SETTINGS, 1, 1)
    catalog.open()
    with Stubber(catalog._glue) as stub:
        yield catalog, stub
    catalog.close()


def test_pages_are_followed_and_the_catalog_id_sent(stubbed):
    catalog, stub = stubbed
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "a"}], "NextToken": "t1"}, {"CatalogId": "123456789012"})
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "b"}]}, {"CatalogId": "123456789012", "NextToken": "t1"})
    assert catalog.databases() == ["a", "b"]


def test_partitions_send_the_expression_and_honor_max_parts(stubbed):
    catalog, stub = stubbed
    parts = [{"Values": [d], "StorageDescriptor": {"Location": f"s3://b/ds={d}"}} for d in ("d1", "d2")]
    expected = {"CatalogId": "123456789012", "DatabaseName": "sales", "TableName": "payments", "Expression": "ds >= 'd1'"}
    stub.add_response("get_partitions", {"Partitions": parts}, expected)
    got = catalog.partitions("sales", "payments", 1, 'ds >= "d1"')
    assert [p.values for p in got] == [["d1"]]


def test_like_filters_are_evaluated_here(stubbed):
    catalog, stub = stubbed
    stub.add_response("get_table", {"Table": GLUE_TABLE})
    parts = [{"Values": [d], "StorageDescriptor": {}} for d in ("2026-11-01", "2026-11-02", "2026-12-01")]
    stub.add_response("get_partitions", {"Partitions": parts})
    got = catalog.partitions("sales", "payments", -1, 'ds like "2026-11-.*"')
    assert [p.values for p in got] == [["2026-11-01"], ["2026-11-02"]]


@pytest.mark.parametrize(
    "code, status, error, words",
    [
        ("EntityNotFoundException", 400, CatalogNotFound, "has no table 'sales.nope'"),
        ("AccessDeniedException", 400, CatalogRefused, "AWS_ACCESS_KEY_ID"),
        ("ThrottlingException", 400, CatalogUnavailable, "ThrottlingException"),
        ("InternalServiceException", 500, CatalogUnavailable, "InternalServiceException"),
    ],
)
def test_glues_errors_become_the_interfaces(stubbed, code, status, error, words):
    catalog, stub = stubbed
    stub.add_client_error("get_table", service_error_code=code, service_message="said Glue", http_status_code=status)
    with pytest.raises(error) as e:
        catalog.table("sales", "nope")
    assert words in e.value.message and "Glue catalog eu-west-1" in e.value.message


def test_no_credentials_is_a_refusal_naming_what_to_set(monkeypatch):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr("hmsproxy.catalogs.glue._sessions", {})
    catalog = GlueCatalog(SETTINGS, 1, 1)
    catalog.open()
    with pytest.raises(CatalogRefused, match="no AWS credentials for the proxy: set AWS_ACCESS_KEY_ID"):
        catalog.databases()
    catalog.close()


def test_without_boto3_via_glue_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "boto3", None)  # an import of it fails, as where it isn't installed
    with pytest.raises(ValueError, match=r"VIA 'glue' needs boto3: pip install 'hmsproxy\[glue\]'"):
        get_factory("glue").validate({"aws.region": "eu-west-1"})
