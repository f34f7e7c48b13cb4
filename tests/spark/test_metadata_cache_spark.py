"""Spark through a proxy whose primary metastore has a metadata cache: what Spark changes, Spark
sees at once (every write through the proxy invalidates before it answers), and the cache answers
Spark's repeated reads."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from hmsproxy.config.model import CacheConfig

pytestmark = pytest.mark.spark


def test_a_table_spark_alters_is_seen_fresh(spark, proxy, proxy_config):
    t = f"default.cached_{uuid.uuid4().hex[:8]}"
    with proxy_config(lambda base: replace(base, primary=replace(base.primary, cache=CacheConfig(ttl_s=600)))):
        cache = proxy.handler.backends.caches["primary"]
        spark.sql(f"CREATE TABLE {t} (id INT) PARTITIONED BY (ds STRING) STORED AS PARQUET")
        try:
            spark.sql(f"INSERT INTO {t} PARTITION (ds='1') VALUES (1), (2)")
            assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 2
            hits = cache.hits
            assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 2
            assert cache.hits > hits  # Spark's repeated get_table and partition calls came from the cache
            spark.sql(f"ALTER TABLE {t} ADD COLUMNS (name STRING)")
            assert spark.table(t).columns == ["id", "name", "ds"]
            spark.sql(f"INSERT INTO {t} PARTITION (ds='2') VALUES (3, 'c')")
            assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 3
            assert sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {t}").collect()) == ["ds=1", "ds=2"]
            spark.sql(f"ALTER TABLE {t} DROP PARTITION (ds='1')")
            assert spark.sql(f"SELECT count(1) FROM {t}").collect()[0][0] == 1
        finally:
            spark.sql(f"DROP TABLE IF EXISTS {t}")
        assert not spark.catalog.tableExists(t)
