"""`dev up --backends`: a count of Hive 2.3 metastores, or their versions with the primary first."""

import pytest

from hmsproxy.dev.config import dev_config
from hmsproxy.dev.federation import parse_backends


def test_a_count_means_that_many_hive_2_3_metastores():
    assert parse_backends("3") == ["2.3", "2.3", "2.3"]


def test_versions_are_taken_in_order_and_checked():
    assert parse_backends("4.0, 2.3,3.1") == ["4.0", "2.3", "3.1"]
    with pytest.raises(ValueError, match="unknown Hive version '3.9'; known: 2.3, 3.1, 4.0"):
        parse_backends("2.3,3.9")


def test_each_metastore_is_configured_with_its_version():
    config = dev_config(["thrift://h:1", "thrift://h:2", "thrift://h:3"], hive_versions=["4.0", "2.3", "3.1"])
    assert [(m.name, m.hive_version) for m in config.metastores] == [("primary", "4.0"), ("fed1", "2.3"), ("fed2", "3.1")]
