"""rebuild_index.qualified_names: Spark's name of every file of a pass with a JVM round trip per table
directory, not per file (issue 46); tests/spark/test_rebuild_many_partitions_spark.py checks it against
Hadoop's own qualification."""

from hmsproxy.jobs.rebuild_index import qualified_names


def fake_qualify(asked: list[str]):
    def qualify(path: str) -> str:
        asked.append(path)
        return "Q(" + path.replace(" ", "%20") + ")"

    return qualify


def test_plain_files_and_partition_directories_cost_one_question_per_table():
    files = [f"hdfs://nn:8020/w/t/ds=2026-01-{d:02d}/part-{k}.c000.snappy.parquet" for d in range(1, 31) for k in range(3)]
    asked: list[str] = []
    names = qualified_names(fake_qualify(asked), files)
    assert asked == ["hdfs://nn:8020/w/t"]
    assert names[files[0]] == "Q(hdfs://nn:8020/w/t)/ds=2026-01-01/part-0.c000.snappy.parquet"
    assert len(names) == 90


def test_a_name_hadoop_would_quote_is_asked_for_itself():
    files = ["file:/tmp/t/ds=a b/f.parquet", "file:/tmp/t/ds=x%3A1/g.parquet", "file:/tmp/t/ds=1/h é.parquet"]
    asked: list[str] = []
    names = qualified_names(fake_qualify(asked), files)
    assert sorted(asked) == sorted(["file:/tmp/t/ds=a b", "file:/tmp/t/ds=x%3A1", "file:/tmp/t/ds=1/h é.parquet"])
    assert names[files[0]] == "Q(file:/tmp/t/ds=a%20b)/f.parquet"


def test_never_climbs_to_a_root_nor_more_than_two_levels():
    files = ["file:/x/f.parquet", "s3a://bucket/f.parquet", "hdfs://nn/a/b/c/d/f.parquet"]
    asked: list[str] = []
    names = qualified_names(fake_qualify(asked), files)
    assert sorted(asked) == sorted(["file:/x", "s3a://bucket/f.parquet", "hdfs://nn/a/b/c"])
    assert names["file:/x/f.parquet"] == "Q(file:/x)/f.parquet"
    assert names["hdfs://nn/a/b/c/d/f.parquet"] == "Q(hdfs://nn/a/b/c)/d/f.parquet"
