"""Hive's own bucket hashing, called through py4j, to check hmsproxy.streaming.buckets against.

Each oracle is a JVM of its own started with py4j's launch_gateway on one Hive's jars (time zone
UTC): Hive 2.3 from pyspark's wheel (version 1, ObjectInspectorUtils.hashCode / getBucketNumber),
Hive 3.1.3's hive-serde + hive-common from Maven on the 3.1 metastore's jar set (version 2,
getBucketHashCode / getBucketNumber, and its getBucketHashCodeOld). Python values become the
Writables a Hive writer holds: text through Hive's own parsers (Date/Timestamp.valueOf, BigDecimal),
varchar/char/decimal through HiveVarchar/HiveChar/enforcePrecisionScale.
"""

from __future__ import annotations

import glob
import os
import re
from importlib.util import find_spec
from pathlib import Path

from tests.contract.jars import JarsUnavailable, _download, cache_root

HIVE_31_SERDE = ("org.apache.hive:hive-serde:3.1.3", "org.apache.hive:hive-common:3.1.3")


def pyspark_jars_dir() -> Path:
    spec = find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise JarsUnavailable("pyspark is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def hive31_classpath() -> list[str]:
    """hive-serde/hive-common 3.1.3 (downloaded once) on the 3.1 metastore's jars (Hadoop, storage-api)."""
    from hmsproxy.dev import maven
    from hmsproxy.dev.versions import hive_version

    try:
        hive_version("3.1").prepare()
    except maven.FetchError as exc:
        raise JarsUnavailable(str(exc)) from exc
    target = cache_root() / "3.1.3-serde"
    names = [f"{a.split(':')[1]}-{a.split(':')[2]}.jar" for a in HIVE_31_SERDE]
    if not all((target / n).is_file() for n in names):
        _download(HIVE_31_SERDE, target)
    return [str(target / n) for n in names] + sorted(glob.glob(str(maven.hive_home("3.1") / "lib" / "*.jar")))


class HiveOracle:
    """One JVM with one Hive's serde: Writables for Python values, and Hive's hash functions on them."""

    def __init__(self, classpath: list[str], hive3: bool):
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        py4j_jar = next(iter(sorted(pyspark_jars_dir().glob("py4j-*.jar"))))
        port = launch_gateway(
            classpath=os.pathsep.join(classpath), javaopts=["-Duser.timezone=UTC"], die_on_exit=True, jarpath=str(py4j_jar)
        )
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))
        jvm = self.gateway.jvm
        self.hive3 = hive3
        self.jvm = jvm
        self.utils = jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils
        self.factory = jvm.org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory
        self.type_infos = jvm.org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils
        self.serde_io = jvm.org.apache.hadoop.hive.serde2.io
        self.hadoop_io = jvm.org.apache.hadoop.io
        self.types = jvm.org.apache.hadoop.hive.common.type
        self._inspectors: dict[str, object] = {}

    def close(self) -> None:
        self.gateway.shutdown()

    def inspector(self, hive_type: str):
        if hive_type not in self._inspectors:
            info = self.type_infos.getTypeInfoFromTypeString(hive_type)
            self._inspectors[hive_type] = self.factory.getPrimitiveWritableObjectInspector(info)
        return self._inspectors[hive_type]

    def writable(self, hive_type: str, value: object):
        """The Writable Hive holds for ``value`` in a column of ``hive_type`` (None for NULL)."""
        if value is None:
            return None
        name, args = _split(hive_type)
        sio, hio, types = self.serde_io, self.hadoop_io, self.types
        if name == "boolean":
            return hio.BooleanWritable(bool(value))
        if name == "tinyint":
            return sio.ByteWritable(value)
        if name == "smallint":
            return sio.ShortWritable(value)
        if name == "int":
            return hio.IntWritable(value)
        if name == "bigint":
            return hio.LongWritable(value)
        if name == "float":  # Java's double -> float cast, as Hive converts a double
            return hio.FloatWritable(float(value))
        if name == "double":
            return sio.DoubleWritable(float(value))
        if name == "string":
            return hio.Text(value)
        if name == "varchar":
            return sio.HiveVarcharWritable(types.HiveVarchar(value, int(args[0])))
        if name == "char":
            return sio.HiveCharWritable(types.HiveChar(value, int(args[0])))
        if name == "binary":
            return hio.BytesWritable(bytearray(value))
        if name == "date":
            if self.hive3:
                return sio.DateWritableV2(types.Date.valueOf(value.isoformat()))
            return sio.DateWritable(self.jvm.java.sql.Date.valueOf(value.isoformat()))
        if name == "timestamp":
            text = value.isoformat(sep=" ")
            if self.hive3:
                return sio.TimestampWritableV2(types.Timestamp.valueOf(text))
            return sio.TimestampWritable(self.jvm.java.sql.Timestamp.valueOf(text))
        if name == "decimal":
            precision, scale = (int(args[0]), int(args[1])) if args else (10, 0)
            dec = types.HiveDecimal.create(self.jvm.java.math.BigDecimal(str(value)))
            dec = types.HiveDecimal.enforcePrecisionScale(dec, precision, scale)
            return None if dec is None else sio.HiveDecimalWritable(dec)
        raise ValueError(hive_type)

    def field_hash(self, hive_type: str, value: object, murmur: bool) -> int:
        """ObjectInspectorUtils' hash of one value: hashCode (version 1) or hashCodeMurmur (version 2)."""
        writable, inspector = self.writable(hive_type, value), self.inspector(hive_type)
        if murmur:
            return self.utils.hashCodeMurmur(writable, inspector, self.jvm.java.nio.ByteBuffer.allocate(8))
        return self.utils.hashCode(writable, inspector)

    def row_hash(self, values: list, hive_types: list[str], murmur: bool) -> int:
        objects, inspectors = self._arrays(values, hive_types)
        if murmur:
            return self.utils.getBucketHashCode(objects, inspectors)
        if self.hive3:
            return self.utils.getBucketHashCodeOld(objects, inspectors)
        return self.utils.getBucketHashCode(objects, inspectors)

    def bucket(self, values: list, hive_types: list[str], num_buckets: int) -> int:
        """getBucketNumber: Hive 2.3's hashCode rules, or Hive 3's murmur ones."""
        objects, inspectors = self._arrays(values, hive_types)
        return self.utils.getBucketNumber(objects, inspectors, num_buckets)

    def _arrays(self, values: list, hive_types: list[str]):
        gw, jvm = self.gateway, self.jvm
        objects = gw.new_array(jvm.java.lang.Object, len(values))
        inspectors = gw.new_array(jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector, len(values))
        for i, (v, t) in enumerate(zip(values, hive_types)):
            objects[i] = self.writable(t, v)
            inspectors[i] = self.inspector(t)
        return objects, inspectors


def _split(hive_type: str) -> tuple[str, list[str]]:
    m = re.match(r"^(\w+)(?:\((.*)\))?$", hive_type.replace(" ", ""))
    assert m, hive_type
    return m.group(1), (m.group(2).split(",") if m.group(2) else [])
