"""CREATE TABLE … SKEWED BY …: the statement, and the Table it makes.

The table is what Hive would create for the same text: a managed table, the serde and
formats of its STORED AS (text when none), the metastore choosing the location when the
statement names none.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Tree

from hmsproxy.ddl import trees
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.skew.spec import Values, skewed_columns_and_values
from hmsproxy.protocol import idl

hive = idl.hive

#: STORED AS -> (serde, input format, output format), as Hive names them.
FORMATS = {
    "parquet": (
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    ),
    "orc": (
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
    ),
    "textfile": (
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
        "org.apache.hadoop.mapred.TextInputFormat",
        "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
    ),
}

Column = tuple[str, str, str | None]  # name, type, comment


@dataclass(frozen=True)
class CreateSkewedTable(Statement):
    database: str | None
    name: str
    columns: tuple[Column, ...]
    partition_columns: tuple[Column, ...]
    skewed_columns: tuple[str, ...]
    values: tuple[Values, ...]
    directories: bool = False
    file_format: str = "textfile"
    location: str | None = None
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    if_not_exists: bool = False

    def table(self, database: str, owner: str | None) -> hive.Table:
        serde, input_format, output_format = FORMATS[self.file_format]
        sd = hive.StorageDescriptor(
            cols=[_field(c) for c in self.columns],
            location=self.location,
            inputFormat=input_format,
            outputFormat=output_format,
            compressed=False,
            numBuckets=-1,
            serdeInfo=hive.SerDeInfo(serializationLib=serde, parameters={"serialization.format": "1"}),
            bucketCols=[],
            sortCols=[],
            parameters={},
            skewedInfo=hive.SkewedInfo(
                skewedColNames=list(self.skewed_columns), skewedColValues=[list(v) for v in self.values], skewedColValueLocationMaps={}
            ),
            storedAsSubDirectories=self.directories,
        )
        parameters = dict(self.properties)
        if self.comment is not None:
            parameters["comment"] = self.comment
        return hive.Table(
            tableName=self.name,
            dbName=database,
            owner=owner,
            sd=sd,
            partitionKeys=[_field(c) for c in self.partition_columns],
            parameters=parameters,
            tableType="MANAGED_TABLE",
        )


def _field(column: Column) -> hive.FieldSchema:
    return hive.FieldSchema(name=column[0], type=column[1], comment=column[2])


def _comment(tree: Tree | None) -> str | None:
    return None if tree is None else trees.string(trees.find(tree, "string"))


def _columns(nodes) -> tuple[Column, ...]:
    out = []
    for col in nodes:
        type_tree = trees.find(col, "skew_type")
        out.append((trees.name(trees.find(col, "name")).lower(), _type_text(type_tree), _comment(trees.find(col, "skew_comment"))))
    return tuple(out)


def _type_text(tree: Tree) -> str:
    """A column type as Hive writes it: lower case, no spaces (decimal(10,2), map<string,int>)."""
    base, args = trees.name(tree.children[0]).lower(), tree.children[1]
    if args is None:
        return base
    if all(not isinstance(a, Tree) for a in args.children):  # decimal(10,2), varchar(20)
        return f"{base}({','.join(str(a) for a in args.children)})"
    return f"{base}<{','.join(_type_arg(a) for a in args.children)}>"


def _type_arg(tree: Tree) -> str:
    """One argument of array<…>, map<…>, struct<…>: a type, or `field:type` in a struct."""
    if len(tree.children) == 2:
        return f"{trees.name(tree.children[0]).lower()}:{_type_text(tree.children[1])}"
    return _type_text(tree.children[0])


def build(tree: Tree, source: str) -> CreateSkewedTable:
    db, name = trees.qualified(trees.find(tree, "qualified"))
    columns = _columns(t for t in tree.children if isinstance(t, Tree) and t.data == "skew_column")
    partitioned = trees.find(tree, "skew_partitioned")
    partition_columns = _columns(t for t in partitioned.children if isinstance(t, Tree) and t.data == "skew_column") if partitioned else ()
    formats = [trees.find(tree, k) for k in ("skew_format", "skew_format_after")]
    file_format = next((str(trees.find(f, "skew_file_format").children[0]).lower() for f in formats if f is not None), "textfile")
    skewed, values = skewed_columns_and_values(trees.find(tree, "skew_spec"))
    location = trees.find(tree, "skew_location_clause")
    return CreateSkewedTable(
        database=db.lower() if db else None,
        name=name.lower(),
        columns=columns,
        partition_columns=partition_columns,
        skewed_columns=skewed,
        values=values,
        directories=trees.find(tree, "skew_directories") is not None,
        file_format=file_format,
        location=trees.string(trees.find(location, "string")) if location is not None else None,
        comment=_comment(trees.find(tree, "skew_comment")),
        properties=trees.properties(tree),
        if_not_exists=trees.find(tree, "if_not_exists") is not None,
        source=source,
    )
