"""The Python side of the Spark extension: which jar, and the settings a builder or spark-submit gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsproxy.jobs import spark_extension as ext


def test_the_jar_is_chosen_by_the_spark_line(tmp_path, monkeypatch):
    monkeypatch.delenv(ext.JAR_ENV, raising=False)
    monkeypatch.setattr(ext, "JAR_DIR", tmp_path)
    (tmp_path / ext.jar_name("4.0")).write_bytes(b"jar")
    assert ext.index_extension_jar("4.0.5") == tmp_path / "hmsproxy-spark-extension_spark-4.0.jar"
    with pytest.raises(FileNotFoundError, match=r"no hmsproxy Spark extension built for Spark 4\.3 .*make install"):
        ext.index_extension_jar("4.3.0")
    monkeypatch.setenv(ext.JAR_ENV, "/opt/ext.jar")
    assert str(ext.index_extension_jar("4.3.0")) == "/opt/ext.jar"


def test_the_settings_add_to_what_is_already_listed(monkeypatch):
    monkeypatch.setenv(ext.JAR_ENV, "/opt/ext.jar")
    conf = ext.index_extension_conf("4.0.5", jars="/a.jar", extensions="com.example.Other")
    assert conf == {"spark.jars": "/a.jar,/opt/ext.jar", "spark.sql.extensions": "com.example.Other,io.hmsproxy.spark.HmsProxyExtensions"}
    assert ext.index_extension_conf("4.0.5", jars="/opt/ext.jar")["spark.jars"] == "/opt/ext.jar"  # not twice


def test_a_builder_keeps_its_own_jars_and_extensions(tmp_path, monkeypatch):
    monkeypatch.setenv(ext.JAR_ENV, "/opt/ext.jar")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))  # no spark-defaults.conf
    built = ext.with_index_extension(_Builder(**{"spark.jars": "/a.jar"}), "4.0.5")
    assert built._options == {"spark.jars": "/a.jar,/opt/ext.jar", "spark.sql.extensions": ext.EXTENSION_CLASS}


def test_building_without_maven_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(ext.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="mvn is not installed"):
        ext.build()


def test_a_build_replaces_the_jar_without_rewriting_the_file_a_running_jvm_has_open(tmp_path, monkeypatch):
    """make bench-index rebuilds the jar while a bench JVM may still read the old one: a new file, renamed over it."""
    import subprocess

    import pyspark

    monkeypatch.setattr(ext, "SOURCES", tmp_path / "sources")
    monkeypatch.setattr(ext.shutil, "which", lambda name: "/usr/bin/mvn")

    def maven(command, **_):
        build_dir = Path(next(a for a in command if a.startswith("-Dbuild.dir=")).split("=", 1)[1])
        build_dir.mkdir(parents=True, exist_ok=True)
        (build_dir / "hmsproxy-spark-extension.jar").write_bytes(b"new jar")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(ext.subprocess, "run", maven)
    out = tmp_path / "jars"
    out.mkdir()
    old = out / ext.jar_name(ext.spark_line(pyspark.__version__))
    old.write_bytes(b"old jar")
    with open(old, "rb") as running:
        assert ext.build(pyspark_jars=tmp_path, out_dir=out) == old
        assert running.read() == b"old jar"
    assert old.read_bytes() == b"new jar" and sorted(p.name for p in out.iterdir()) == [old.name]


class _Builder:
    def __init__(self, **options):
        self._options = dict(options)

    def config(self, key, value):
        self._options[key] = value
        return self


def test_what_spark_defaults_lists_is_kept_beside_the_extension(tmp_path, monkeypatch):
    """dev up --storage s3 lists S3A's jars in spark-defaults.conf: a builder's spark.jars would replace them."""
    monkeypatch.setenv(ext.JAR_ENV, "/opt/ext.jar")
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    (tmp_path / "spark-defaults.conf").write_text(
        "# written by dev up\nspark.jars   /s3/hadoop-aws.jar,/s3/bundle.jar\nspark.sql.extensions=com.example.Other\nspark.hadoop.fs.s3a.endpoint: http://127.0.0.1:9000\n"
    )
    assert ext.spark_defaults()["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    built = ext.with_index_extension(_Builder(), "4.0.5")
    assert built._options == {
        "spark.jars": "/s3/hadoop-aws.jar,/s3/bundle.jar,/opt/ext.jar",
        "spark.sql.extensions": f"com.example.Other,{ext.EXTENSION_CLASS}",
    }
    # the builder's own setting is what Spark takes, so it is the one added to
    assert ext.with_index_extension(_Builder(**{"spark.jars": "/a.jar"}), "4.0.5")._options["spark.jars"] == "/a.jar,/opt/ext.jar"


def test_no_spark_defaults_file_lists_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert ext.spark_defaults() == {} and ext.listed_without_builder("spark.jars") == ""
