"""Iceberg's Spark runtime is chosen by pyspark's Spark minor version, from a pom per minor."""

from __future__ import annotations

import re

import pytest

from hmsproxy.dev import iceberg_jars, maven


def test_each_spark_with_a_runtime_has_a_pom_pinning_that_iceberg_release():
    for minor, iceberg in iceberg_jars.ICEBERG_FOR_SPARK.items():
        pom = maven.POMS_DIR / f"iceberg-spark-runtime-{minor}.xml"
        text = pom.read_text()
        assert f"<artifactId>iceberg-spark-runtime-{minor}_2.13</artifactId>" in text
        assert re.search(rf"<version>{re.escape(iceberg)}</version>", text), pom


def test_the_runtime_follows_the_spark_minor_version():
    assert iceberg_jars.spark_minor("4.0.5") == "4.0"
    assert iceberg_jars.has_runtime("4.0.5") and iceberg_jars.has_runtime("4.1.0")
    assert not iceberg_jars.has_runtime("4.3.0")


def test_a_spark_without_a_runtime_is_one_line_naming_the_ones_there_are(monkeypatch, tmp_path):
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(maven.FetchError) as caught:
        iceberg_jars.runtime_jar(spark_version="4.3.0")
    assert str(caught.value) == "no Iceberg Spark runtime for Spark 4.3 (there is one for Spark 4.0, 4.1)"


def test_a_fetched_runtime_is_found_without_maven(monkeypatch, tmp_path):
    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "cache"))
    home = maven.artifact_home("iceberg-spark-runtime-4.0")
    (home / "lib").mkdir(parents=True)
    (home / maven.STAMP_NAME).write_text(maven._pom_digest("iceberg-spark-runtime-4.0") + "\n")
    jar = iceberg_jars.runtime_jar(spark_version="4.0.5")
    assert jar == home / "lib" / "iceberg-spark-runtime-4.0_2.13-1.10.0.jar"
