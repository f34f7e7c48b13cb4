"""What a new process reads instead of making again (protocol/user_cache.py): the IDL thriftpy2
loads and the statements' LALR parser. What it reads must be what it would have made."""

from __future__ import annotations

import io
import pickle

import pytest
import thriftpy2
from thriftpy2.parser.parser import parse as parse_thrift
from thriftpy2.protocol import TBinaryProtocol
from thriftpy2.transport import TMemoryBuffer

from hmsproxy.ddl import registry
from hmsproxy.features import builtin_grammar
from hmsproxy.protocol import idl, idl_snapshot
from hmsproxy.protocol.user_cache import CACHE_DIR_ENV, cache_file, open_own

MAIN = idl.THRIFT_DIR / "hmsproxy.thrift"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def fresh(module_name: str):
    """A new parse of the IDL (not thriftpy2's per-name cache), as thriftpy2.load makes it."""
    return parse_thrift(str(MAIN), module_name=module_name, include_dirs=[str(idl.THRIFT_DIR)], enable_cache=False)


def shape(value, seen=None):
    """Specs with classes replaced by their names, so two loads' classes compare."""
    if isinstance(value, type):
        return f"<{value.__module__}.{value.__name__}>"
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shape(v) for v in value]
    return value


def classes(module, seen=None):
    """Every class of a thrift module and its includes (services' args and results too), by qualified name."""
    seen = {} if seen is None else seen
    for name, value in vars(module).items():
        if isinstance(value, type):
            seen[f"{value.__module__}.{name}"] = value
            for inner, cls in vars(value).items():
                if isinstance(cls, type):
                    seen[f"{value.__module__}.{name}.{inner}"] = cls
    for child in module.__thrift_meta__.get("includes", []):
        classes(child, seen)
    return seen


def describe(cls):
    keys = ("thrift_spec", "default_spec", "_tspec", "thrift_services", "_VALUES_TO_NAMES", "_ttype", "oneway")
    return {
        "bases": [f"{b.__module__}.{b.__name__}" for b in cls.__mro__],
        "attributes": {k: shape(getattr(cls, k)) for k in keys if hasattr(cls, k)},
        "init": cls.__init__.__code__.co_varnames if "__init__" in vars(cls) else None,
        "defaults": shape(cls.__init__.__defaults__) if "__init__" in vars(cls) else None,
    }


def encode(module, obj_of) -> bytes:
    buf = TMemoryBuffer()
    obj_of(module.hive_metastore).write(TBinaryProtocol(buf))
    return buf.getvalue()


def sample_table(hive):
    sd = hive.StorageDescriptor(
        cols=[hive.FieldSchema(name="id", type="int", comment="c")],
        location="file:/w/t",
        skewedInfo=hive.SkewedInfo(skewedColNames=["id"], skewedColValues=[["1"]], skewedColValueLocationMaps={}),
        serdeInfo=hive.SerDeInfo(name="s", serializationLib="lib", parameters={"a": "b"}),
    )
    return hive.Table(tableName="t", dbName="db", sd=sd, partitionKeys=[], parameters={"k": "v"}, tableType="MANAGED_TABLE")


def test_the_snapshot_is_the_idl_thriftpy2_loads():
    made = fresh("snapshot_check_thrift")
    buf = io.BytesIO()
    idl_snapshot.dump(made, buf)
    read = pickle.loads(buf.getvalue())

    made_classes, read_classes = classes(made), classes(read)
    assert made_classes.keys() == read_classes.keys() and len(made_classes) > 500
    for name, cls in made_classes.items():
        assert describe(read_classes[name]) == describe(cls), name
    # The same bytes on the wire, and back.
    data = encode(made, sample_table)
    assert encode(read, sample_table) == data
    back = read.hive_metastore.Table()
    back.read(TBinaryProtocol(TMemoryBuffer(data)))
    assert back == sample_table(read.hive_metastore)
    # Exceptions stay exceptions with their messages.
    error = read.hive_metastore.NoSuchObjectException(message="gone")
    assert isinstance(error, Exception) and error.message == "gone"


def test_a_second_load_reads_the_snapshot_the_first_wrote(cache, monkeypatch):
    first = idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR])
    assert len(list(cache.glob("idl-*.pickle"))) == 1

    def no_parse(*_a, **_k):
        raise AssertionError("parsed the IDL again")

    monkeypatch.setattr(thriftpy2, "load", no_parse)
    second = idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR])
    assert second is not first
    assert describe(second.HmsProxy) == describe(first.HmsProxy)


def test_a_damaged_snapshot_is_made_again(cache):
    idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR])
    (snapshot,) = cache.glob("idl-*.pickle")
    snapshot.write_bytes(b"\x80\x05garbage")
    assert idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR]).HmsProxy.thrift_services
    assert pickle.loads(snapshot.read_bytes()).HmsProxy.thrift_services  # written anew, whole


def test_each_checkout_keeps_its_own_snapshot(cache, tmp_path):
    """The classes carry their files' paths, and thriftpy2 refuses a module name from a second path:
    a CI clone beside a working tree (same IDL text, same user cache) must not read the other's."""
    import shutil

    clone = tmp_path / "clone" / "thrift"
    shutil.copytree(idl.THRIFT_DIR, clone)
    here = idl_snapshot.snapshot_file(MAIN, "cachetest_thrift", [idl.THRIFT_DIR])
    there = idl_snapshot.snapshot_file(clone / MAIN.name, "cachetest_thrift", [clone])
    assert here is not None and there is not None and here != there


def test_an_unwritable_cache_costs_time_not_the_command(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "hmsproxy"))
    assert idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR]).HmsProxy.thrift_services
    assert not blocker.with_name("hmsproxy").exists()


def test_off_means_no_file(monkeypatch):
    monkeypatch.setenv(CACHE_DIR_ENV, "off")
    assert cache_file("idl", ["x"]) is None


def test_a_changed_input_is_another_file(cache):
    assert cache_file("lark", ["1.0", "grammar a"]) != cache_file("lark", ["1.0", "grammar b"])
    assert cache_file("lark", ["1.0", "grammar a"]) == cache_file("lark", ["1.0", "grammar a"])


SCRIPTS = [
    "SHOW REMOTE DATABASES",
    "CREATE REMOTE DATABASE r CONNECTED TO sales WITH DBPROPERTIES ('hive.metastore.uris'='thrift://h:1');\n"
    "  DESCRIBE REMOTE DATABASE r; DROP REMOTE DATABASE r",
    "ALTER TABLE db.t SKEWED BY (id) ON (1, 2) STORED AS DIRECTORIES",
]


def test_the_saved_parser_parses_as_the_one_it_was_saved_from(cache, monkeypatch):
    text = builtin_grammar().text
    built = registry._lalr.__wrapped__(text)
    assert len(list(cache.glob("lark-*.pickle"))) == 1

    def no_build(*_a, **_k):
        raise AssertionError("built the LALR tables again")

    monkeypatch.setattr(registry, "Lark", type("NoBuild", (), {"__new__": no_build, "load": registry.Lark.load}))
    read = registry._lalr.__wrapped__(text)
    for script in SCRIPTS:
        a, b = built.parse(script), read.parse(script)
        assert a == b
        assert [(c.meta.start_pos, c.meta.end_pos) for c in a.children] == [(c.meta.start_pos, c.meta.end_pos) for c in b.children]


def test_a_file_others_could_have_written_is_not_read(cache):
    idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR])
    (snapshot,) = cache.glob("idl-*.pickle")
    assert snapshot.stat().st_mode & 0o077 == 0  # written for this user only
    snapshot.chmod(0o666)
    with pytest.raises(PermissionError):
        open_own(snapshot)
    assert idl_snapshot.load(MAIN, "cachetest_thrift", [idl.THRIFT_DIR]).HmsProxy.thrift_services  # made anew instead
    assert snapshot.stat().st_mode & 0o077 == 0
