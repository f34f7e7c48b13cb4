"""The grammar of hmsproxy's own statements: every form, the defaults, and bad input."""

from __future__ import annotations

import pytest

from hmsproxy.ddl import DdlSyntaxError
from hmsproxy.features import is_hmsproxy_statement, parse, split
from hmsproxy.features.remotes.statements import (
    CreateRemoteDatabase,
    CreateRemoteTable,
    DescribeRemoteDatabase,
    DescribeRemoteTable,
    DropRemoteDatabase,
    DropRemoteTable,
    ShowRemoteDatabases,
    ShowRemoteTables,
)

URIS = {"hive.metastore.uris": "thrift://remote-hms:9083"}


def one(text):
    statements = parse(text)
    assert len(statements) == 1
    return statements[0]


# -- the design document's examples, verbatim --------------------------------------------


def test_design_create_remote_table():
    s = one("""
    CREATE REMOTE TABLE local_db.local_tbl
    CONNECTED TO remote_db.remote_tbl
    VIA 'org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory'
    WITH TBLPROPERTIES (
      'hive.metastore.uris' = 'thrift://remote-hms:9083'
    );""")
    assert s == CreateRemoteTable(
        "local_db", "local_tbl", "remote_db", "remote_tbl", "org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory", URIS
    )


def test_design_create_remote_database():
    s = one("""
    CREATE REMOTE DATABASE local_db_name
    CONNECTED TO remote_db_name
    VIA 'org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory'
    WITH DBPROPERTIES (
      'hive.metastore.uris' = 'thrift://remote-hms:9083'
    );""")
    assert s == CreateRemoteDatabase(
        "local_db_name", "remote_db_name", "org.apache.hadoop.hive.metastore.ThriftHiveMetastoreClientFactory", URIS
    )


def test_design_defaults():
    db = one("CREATE REMOTE DATABASE db_name\n    WITH DBPROPERTIES (\n      'hive.metastore.uris' = 'thrift://remote-hms:9083'\n    );")
    assert db == CreateRemoteDatabase("db_name", remote_name="db_name", factory="thrift", properties=URIS)
    t = one("CREATE REMOTE TABLE tbl_name\n    WITH TBLPROPERTIES (\n      'hive.metastore.uris' = 'thrift://remote-hms:9083'\n    );")
    # No database: the current one, when executed; no CONNECTED TO: the same name remotely; no VIA: thrift.
    assert t == CreateRemoteTable(None, "tbl_name", None, "tbl_name", "thrift", URIS)


def test_design_ssh_example_without_commas():
    s = one("""
    CREATE REMOTE TABLE tbl_name
    VIA 'org.apache.hadoop.hive.metastore.SSHThriftHiveMetastoreClientFactory'
    WITH TBLPROPERTIES (
      'hive.metastore.uris' = 'thrift://metastore.domain:9083'
      'ssh.tunnel.route' = 'bastionuser@bastion-host.domain -> user@cluster-node.domain'
      'ssh.tunnel.private.keys' = '/home/user/.ssh/bastionuser-key-pair.pem,/home/user/.ssh/user-key-pair.pem'
      'ssh.tunnel.known.hosts' = '/home/user/.ssh/known_hosts'
    );""")
    assert s.factory == "org.apache.hadoop.hive.metastore.SSHThriftHiveMetastoreClientFactory"
    assert list(s.properties) == ["hive.metastore.uris", "ssh.tunnel.route", "ssh.tunnel.private.keys", "ssh.tunnel.known.hosts"]
    assert s.properties["ssh.tunnel.route"] == "bastionuser@bastion-host.domain -> user@cluster-node.domain"


def test_design_iceberg_example_without_semicolon():
    s = one("""CREATE REMOTE TABLE tbl_name
    VIA 'xxx.yyy.iceberg.hive.zzz.IcebergTableHiveClientFactory'
    WITH TBLPROPERTIES (
      'iceberg.table.path' = 'an-atomic-store:/tables/tbl_name'
    )""")
    assert s.properties == {"iceberg.table.path": "an-atomic-store:/tables/tbl_name"}


# -- every form ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("create remote table t", CreateRemoteTable(None, "t", None, "t")),
        ("CREATE REMOTE TABLE IF NOT EXISTS d.t", CreateRemoteTable("d", "t", None, "t", if_not_exists=True)),
        ("create remote table d.t connected to rt", CreateRemoteTable("d", "t", None, "rt")),
        ("create remote table d.t connected to rd.rt", CreateRemoteTable("d", "t", "rd", "rt")),
        ('create remote table t via "thrift"', CreateRemoteTable(None, "t", None, "t", "thrift")),
        ("create remote table t with tblproperties ()", CreateRemoteTable(None, "t", None, "t")),
        ("create remote database d", CreateRemoteDatabase("d", "d")),
        (
            "Create Remote Database If Not Exists d Connected To r Via 'my.mod:Factory'",
            CreateRemoteDatabase("d", "r", "my.mod:Factory", if_not_exists=True),
        ),
        ("create remote schema d", CreateRemoteDatabase("d", "d")),
        ("drop remote table t", DropRemoteTable(None, "t")),
        ("drop remote table if exists d.t", DropRemoteTable("d", "t", if_exists=True)),
        ("drop remote database d", DropRemoteDatabase("d")),
        ("DROP REMOTE DATABASE IF EXISTS d", DropRemoteDatabase("d", if_exists=True)),
        ("show remote tables", ShowRemoteTables(None)),
        ("show remote tables in d", ShowRemoteTables("d")),
        ("show remote tables from d", ShowRemoteTables("d")),
        ("show remote databases", ShowRemoteDatabases()),
        ("SHOW REMOTE SCHEMAS", ShowRemoteDatabases()),
        ("describe remote table t", DescribeRemoteTable(None, "t")),
        ("desc remote table d.t", DescribeRemoteTable("d", "t")),
        ("describe remote database d", DescribeRemoteDatabase("d")),
    ],
)
def test_every_form(text, expected):
    assert one(text) == expected
    assert one(text + " ;") == expected
    assert one(text.upper() if "'" not in text and '"' not in text else text) == expected


def test_names_are_lower_cased_quotes_removed():
    s = one("CREATE REMOTE TABLE `My Db`.`Ta``ble` CONNECTED TO `Remote-DB`.T1 WITH TBLPROPERTIES ('K'='V')")
    assert (s.database, s.name, s.remote_database, s.remote_name) == ("my db", "ta`ble", "remote-db", "t1")
    assert s.properties == {"K": "V"}  # property keys and values keep their case


def test_keywords_as_backquoted_names_and_soft_keywords_as_plain_names():
    assert one("drop remote table `table`.`database`") == DropRemoteTable("table", "database")
    assert one("create remote table remote.via connected to tables.connected") == CreateRemoteTable("remote", "via", "tables", "connected")
    assert one("create remote database iffy") == CreateRemoteDatabase("iffy", "iffy")
    assert one("describe remote database show") == DescribeRemoteDatabase("show")


def test_strings():
    text = "create remote table t with tblproperties ('a'='it''s', \"b\"=\"say \"\"hi\"\"\", 'c'='tab\\there', 'd'='', 'e' = \"x'y\")"
    s = one(text)
    assert s.properties == {"a": "it's", "b": 'say "hi"', "c": "tab\there", "d": "", "e": "x'y"}


def test_scripts_several_statements_comments_and_semicolons():
    text = """
    -- remotes for the sales team
    CREATE REMOTE DATABASE sales WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1');;
    /* a table
       too */
    CREATE REMOTE TABLE analytics.orders CONNECTED TO sales.orders
      WITH TBLPROPERTIES ('hive.metastore.uris'='thrift://h:1');
    show remote databases
    """
    statements = parse(text)
    assert [type(s) for s in statements] == [CreateRemoteDatabase, CreateRemoteTable, ShowRemoteDatabases]
    assert split(text) == [
        "CREATE REMOTE DATABASE sales WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1')",
        "CREATE REMOTE TABLE analytics.orders CONNECTED TO sales.orders\n      WITH TBLPROPERTIES ('hive.metastore.uris'='thrift://h:1')",
        "show remote databases",
    ]
    # Each statement's text parses to the same statement again.
    assert [one(s) for s in split(text)] == statements


def test_empty_scripts():
    assert parse("") == [] and parse("  ;; -- nothing\n") == []


# -- bad input -----------------------------------------------------------------------------


def error(text) -> DdlSyntaxError:
    with pytest.raises(DdlSyntaxError) as e:
        parse(text)
    return e.value


def test_unexpected_word_names_what_was_expected():
    e = error("CREATE REMOTE TABLE db.t foo")
    assert (e.line, e.column) == (1, 26)
    assert "expected one of: CONNECTED, VIA, WITH, ;" in str(e)
    assert "found 'foo'" in str(e)
    assert str(e).startswith("line 1, column 26: ")


def test_error_positions_on_later_lines():
    e = error("show remote databases;\nCREATE REMOTE DATABASE d\n  CONNECTED r")
    assert (e.line, e.column) == (3, 13)
    assert "expected TO" in str(e)


def test_end_of_input():
    e = error("CREATE REMOTE")
    assert (e.line, e.column) == (1, 14)
    assert "found the end of the input" in str(e)
    assert "expected one of: TABLE, DATABASE" in str(e) or "expected one of: DATABASE, TABLE" in str(e)


def test_missing_name_and_bad_properties():
    assert "expected a name" in str(error("show remote tables in"))
    assert "expected =" in str(error("create remote table t with tblproperties ('a' 'b')"))
    assert "expected a quoted string" in str(error("create remote table t via thrift"))
    assert "expected TBLPROPERTIES" in str(error("create remote table t with dbproperties ('a'='b')"))
    assert "expected DBPROPERTIES" in str(error("create remote database d with tblproperties ('a'='b')"))
    e = error("create remote database d with dbproperties ('a'='b'")
    assert "found the end of the input" in str(e) and ")" in str(e)


def test_bad_characters_and_unterminated_strings():
    assert "found '~'" in str(error("create remote table t ~"))
    e = error("create remote table t via 'unterminated")
    assert (e.line, e.column) == (1, 27)


def test_statements_need_separators():
    e = error("show remote databases show remote databases")
    assert "expected ;" in str(e)


def test_not_an_hmsproxy_statement():
    e = error("SELECT * FROM t")
    assert "found 'SELECT'" in str(e) and "CREATE/DROP/SHOW/DESCRIBE REMOTE" in str(e)
    assert "expected one of: ALTER, CREATE, DESC, DESCRIBE, DROP, SHOW" in str(e) and "SKEWED BY" in str(e)


def test_no_three_part_names():
    assert (error("drop remote table a.b.c").line, error("drop remote table a.b.c").column) == (1, 22)


@pytest.mark.parametrize(
    "text",
    [
        "CREATE REMOTE TABLE t",
        "  create remote database d",
        "-- c\nshow remote tables",
        "/* x */ DESC REMOTE TABLE t",
        "describe\nremote database d",
        ";show remote databases",
        "drop\tremote table t",
    ],
)
def test_is_hmsproxy_statement(text):
    assert is_hmsproxy_statement(text)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT 1",
        "CREATE TABLE remote (a int)",
        "show databases",
        "CREATE REMOTEX TABLE t",
        "DROP TABLE remote",
        "describe remote",
        "",
        "-- create remote table t\nselect 1",
        "INSERT INTO t SELECT 'create remote table'",
    ],
)
def test_is_not_hmsproxy_statement(text):
    assert not is_hmsproxy_statement(text)
