"""The Python side of the Spark extension: which jar, and the settings a builder or spark-submit gets."""

from __future__ import annotations

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


def test_a_builder_keeps_its_own_jars_and_extensions(monkeypatch):
    monkeypatch.setenv(ext.JAR_ENV, "/opt/ext.jar")

    class Builder:
        def __init__(self):
            self._options = {"spark.jars": "/a.jar"}

        def config(self, key, value):
            self._options[key] = value
            return self

    built = ext.with_index_extension(Builder(), "4.0.5")
    assert built._options == {"spark.jars": "/a.jar,/opt/ext.jar", "spark.sql.extensions": ext.EXTENSION_CLASS}


def test_building_without_maven_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(ext.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="mvn is not installed"):
        ext.build()
