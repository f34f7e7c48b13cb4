"""What a link recorded of its object when it was made, and the answers made from it while the
remote metastore can't give them: a link can always be dropped.

Spark and the Hive CLI fetch what they drop before dropping it (get_table, get_database; DROP
DATABASE ... CASCADE lists the database's tables too), and a remote's fetch goes to its metastore.
When that metastore can't be reached, or no longer has the object, the proxy answers instead:

- get_table / get_table_req of a remote table, get_database / get_database_req of a remote
  database: the Table or Database the remote metastore gave when the link was made (the record,
  in the store), with local names and the link in its parameters, as a live answer is shown; with
  no record (the metastore was out of reach then too) a stand-in made of the link alone: no data
  columns, no location, one partition column (reading it asks the metastore for partitions, which
  fails with the way out). The parameter hmsproxy.remote.unavailable says why (DESCRIBE EXTENDED);
- table lists of a remote database that this client was just shown so (unreachable only): empty,
  as listings leave out a remote that fails. Spark and Hive list a database's tables to drop it
  CASCADE; a client that asks for them without fetching the database first still gets the error.

The DROP that follows unlinks without asking the remote (protection.py). The config file's remotes
are not answered for: clients can't drop them.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from thriftpy2.protocol import TCyBinaryProtocolFactory
from thriftpy2.utils import deserialize, serialize

from hmsproxy.features.remotes.links import Link, add_params
from hmsproxy.features.remotes.model import when
from hmsproxy.pipeline.call import result_outcome
from hmsproxy.protocol import idl
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.default_catalog import fill_default_catalog

log = logging.getLogger(__name__)
hive = idl.hive

#: Set on an answer made here: why the remote metastore didn't answer, what the answer is made of.
UNAVAILABLE_PARAMETER = "hmsproxy.remote.unavailable"

_PROTOCOL = TCyBinaryProtocolFactory()
_KINDS = {"table": hive.Table, "database": hive.Database}


def way_out(link: Link) -> str:
    """How to get rid of a link, for messages about a link that doesn't work."""
    if link.static:
        return f"it is defined in the proxy's configuration (remotes.{link.kind}s): remove it there"
    what = link.kind.upper()
    return f'DROP {what} {link.local} (or hmsproxy sql -e "DROP REMOTE {what} {link.local}") removes the link'


def encode(struct) -> str:
    return base64.b64encode(serialize(struct, _PROTOCOL)).decode("ascii")


def decode(text: str, cls):
    return deserialize(cls(), base64.b64decode(text), _PROTOCOL)


@dataclass(frozen=True)
class Fetched:
    """What a link's metastore gave for its object: the object, or why not (missing over there,
    or out of reach)."""

    found: object = None
    missing: str | None = None
    unreachable: str | None = None


class Records:
    """Takes a link's record when it is made and answers its fetches from it (see the module doc)."""

    def __init__(self, repo, metastore: Callable[[Link], object]):
        self.repo = repo  # a RemoteRepository
        self._metastore = metastore  # Link -> the MetastoreConfig its calls go to (Routes.metastore)

    # -- recording --------------------------------------------------------------------------

    def fetch(self, session, link: Link) -> Fetched:
        """Ask the link's metastore for its table or database (on `session`, the creating client's)."""
        if link.kind == "table":
            method, args = "get_table", idl.HmsProxy.get_table_args(dbname=link.remote_db, tbl_name=link.remote_table)
        else:
            method, args = "get_database", idl.HmsProxy.get_database_args(name=link.remote_db)
        try:
            answer = session.call(self._metastore(link), method, args, read_only=True)
        except Exception as e:  # unreachable, a bad property, a tunnel that won't open
            reason = str(e).removeprefix("hmsproxy: ").removeprefix(f"{link.subject}: ")
            return Fetched(unreachable=reason if link.where in reason else f"{link.where} didn't answer: {reason}")
        found = answer.success
        if found is None:
            kind, message = result_outcome(answer)
            error = f"{kind}: {message}"
            if kind == "NoSuchObjectException":
                return Fetched(missing=f"{link.where} has no {link.kind} '{link.remote}' ({error})")
            return Fetched(unreachable=f"{link.where} answered {error}")
        if link.kind == "table" and found.sd is not None and found.sd.skewedInfo is not None:
            found.sd.skewedInfo.skewedColValueLocationMaps = {}  # keyed by lists: thriftpy2 can't decode those
        return Fetched(found=found)

    def keep(self, link: Link, fetched: Fetched) -> bool:
        """Record what `fetch` found for the (now stored) link; False if it found nothing."""
        if fetched.found is None:
            log.info("%s: nothing recorded: %s", link.subject, fetched.missing or fetched.unreachable)
            return False
        return self.repo.record(link.kind, link.local, encode(fetched.found), time.time())

    def take(self, session, link: Link) -> bool:
        """Fetch and keep; False if the metastore can't give it now (the link works all the same)."""
        return self.keep(link, self.fetch(session, link))

    # -- answering ----------------------------------------------------------------------------

    def answer(self, call, link: Link, reason: str, *, empty_lists: bool = False):
        """The `<method>_result` answering `call` on `link` without its metastore (see the module
        doc), or None when this call can't be answered so. `reason`: why the metastore didn't;
        `empty_lists`: whether the database's table lists may be answered (empty)."""
        spec = call.spec
        if link.static:
            return None
        if link.kind == "database" and spec.lists_table_names and empty_lists:
            log.warning("%s: %s lists no tables: %s", spec.name, link.subject, reason)
            return self._result(call, [])
        if link.kind == "table" and spec.gets_table:
            table = self._table(link, reason)
            return self._result(call, table if spec.name == "get_table" else hive.GetTableResult(table=table))
        if link.kind == "database" and spec.gets_database:
            return self._result(call, self._database(link, reason))
        return None

    def instead_of_missing(self, call, link: Link, result) -> bool:
        """A remote's own get_table / get_database that its metastore answered with "no such object"
        (dropped over there, or never there): answered from the record instead (`result` is changed)."""
        if not (call.spec.gets_table if link.kind == "table" else call.spec.gets_database):
            return False
        missing = declared_error(result)
        if type(missing).__name__ != "NoSuchObjectException":
            return False
        answer = self.answer(call, link, f"{link.where} has no {link.kind} {link.remote} ({missing.message})")
        if answer is None:
            return False
        for name in vars(result):
            setattr(result, name, getattr(answer, name))
        return True

    def _result(self, call, success):
        fill_default_catalog(success, call.spec.success_type)  # Hive 3+ clients expect one
        result = call.spec.result_cls()
        result.success = success
        return result

    def _recorded(self, link: Link):
        """(the recorded struct, when it was recorded) or (None, None)."""
        found = self.repo.recorded(link.kind, link.local)
        if found is None:
            return None, None
        try:
            return decode(found[0], _KINDS[link.kind]), found[1]
        except Exception as e:  # a damaged record must not stop the drop it is there for
            log.warning("%s: its record can't be read (%s); answering without it", link.subject, e)
            return None, None

    def _note(self, link: Link, reason: str, recorded_at: float | None) -> str:
        made_of = f"as recorded on {when(recorded_at)}" if recorded_at else "nothing was recorded (it was out of reach then too)"
        return f"{reason}; shown {made_of}; {way_out(link)}"

    def _table(self, link: Link, reason: str):
        table, at = self._recorded(link)
        table = table or _stand_in_table()
        table.dbName, table.tableName = link.local_db, link.local_table
        add_params(table, link)
        table.parameters[UNAVAILABLE_PARAMETER] = self._note(link, reason, at)
        return table

    def _database(self, link: Link, reason: str):
        db, at = self._recorded(link)
        note = self._note(link, reason, at)
        # Spark needs a location; the stand-in's says where it points, never a place with files.
        db = db or hive.Database(description=f"hmsproxy: {note}", locationUri=f"hmsproxy-remote:/{link.remote_db}", parameters={})
        db.name = link.local
        db.parameters = {**(db.parameters or {}), **link.parameters(), UNAVAILABLE_PARAMETER: note}
        return db


#: The stand-in table's one partition column: reading it asks the metastore for partitions, and
#: that fails with the message naming the way out (a table with no partitions would read as empty).
STAND_IN_PARTITION = "hmsproxy_unavailable"


def _stand_in_table():
    """A table as Hive and Spark read one (they dereference the storage, the serde, the skew) with no
    data columns and no location."""
    sd = hive.StorageDescriptor(
        cols=[],
        location=None,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=hive.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=hive.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=False,
    )
    partition = hive.FieldSchema(name=STAND_IN_PARTITION, type="string", comment="the remote metastore is out of reach")
    return hive.Table(
        sd=sd, partitionKeys=[partition], parameters={}, tableType="EXTERNAL_TABLE", createTime=0, lastAccessTime=0, retention=0
    )
