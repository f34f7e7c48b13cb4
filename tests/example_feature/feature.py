"""Notes on tables: the smallest feature that uses every seam.

- a statement: ``NOTE ON TABLE shop.orders IS 'owned by the sales team'``;
- a store table with its own migration and generation counter;
- a config section: ``notes: {max-length: 200}``;
- a hook: ``get_table`` answers carry the note as the parameter ``example.note``;
- a virtual table: every database with notes lists a table ``notes``, answered by the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Column, MetaData, String, Table, select

from hmsproxy.config import readers as r
from hmsproxy.config.keys import key
from hmsproxy.config.sections import keyed_section
from hmsproxy.ddl import trees
from hmsproxy.ddl.executor import status
from hmsproxy.ddl.registry import StatementSet
from hmsproxy.ddl.statements import Statement
from hmsproxy.features.catalog import VirtualTable
from hmsproxy.pipeline.errors import InvalidRequest
from hmsproxy.pipeline.platform import Feature
from hmsproxy.protocol import idl
from hmsproxy.store import StoreSchema

# -- its store table --------------------------------------------------------------------
metadata = MetaData()
notes_table = Table(
    "example_notes",
    metadata,
    Column("db", String(256), primary_key=True),
    Column("tbl", String(256), primary_key=True),
    Column("text", String(4000), nullable=False),
)


# -- its config section -----------------------------------------------------------------
@dataclass(frozen=True)
class NotesConfig:
    max_length: int = key("max-length", r.whole(1), "the longest note, in characters", default=200)


# -- its statement ----------------------------------------------------------------------
@dataclass(frozen=True)
class NoteOnTable(Statement):
    database: str | None
    table: str
    text: str


def _build(tree, source: str) -> NoteOnTable:
    db, table = trees.qualified(trees.find(tree, "qualified"))
    return NoteOnTable(db, table, trees.string(trees.find(tree, "string")), source=source)


class Notes(Feature):
    name = "notes"
    methods = frozenset({"get_table"})
    config_section = keyed_section("notes", NotesConfig)
    store_schema = StoreSchema("notes", (lambda conn: metadata.create_all(conn),))
    statements = StatementSet.from_file(
        Path(__file__).with_name("notes.lark"),
        builders={"notes_note": _build},
        starts=(r"NOTE\s+ON\b",),
        soft_keywords=("NOTE", "IS"),
        summary="NOTE ON TABLE ...",
    )

    def statement_runners(self):
        return {NoteOnTable: self._note}

    def _note(self, s: NoteOnTable, ctx):
        db = s.database or ctx.database
        if len(s.text) > self.settings(ctx.config).max_length:
            raise InvalidRequest(f"a note is at most {self.settings(ctx.config).max_length} characters")
        ctx.client.call("get_table", dbname=db, tbl_name=s.table)  # as the user: it must exist and be visible
        with self.platform.store.writing() as conn:
            conn.execute(notes_table.delete().where(notes_table.c.db == db, notes_table.c.tbl == s.table))
            conn.execute(notes_table.insert().values(db=db, tbl=s.table, text=s.text))
            self.platform.store.bump(conn, "notes")
        return status(f"noted {db}.{s.table}")

    def notes_of(self, db: str) -> dict[str, str]:
        with self.platform.store.reading() as conn:
            rows = conn.execute(select(notes_table).where(notes_table.c.db == db))
            return {r.tbl: r.text for r in rows}

    # The hook: get_table answers carry their note.
    def on_response(self, call, result) -> None:
        table = result.success
        note = self.notes_of(call.client_db).get(call.table) if table is not None else None
        if note is not None:
            table.parameters = {**(table.parameters or {}), "example.note": note}

    # The virtual table: <db>.notes, one column per noted table.
    def virtual_tables(self, call, db):
        if db is None or not self.notes_of(db):
            return []
        return [VirtualTable(db, "notes", lambda call, db=db: self._notes_table(db))]

    def _notes_table(self, db: str):
        columns = [idl.hive.FieldSchema(name=t, type="string", comment=text) for t, text in sorted(self.notes_of(db).items())]
        sd = idl.hive.StorageDescriptor(cols=columns, parameters={})
        return idl.hive.Table(dbName=db, tableName="notes", tableType="VIRTUAL_VIEW", sd=sd, parameters={}, partitionKeys=[])
