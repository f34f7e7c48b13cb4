"""Every method of the IDL, fed edge arguments, ends the same way through the proxy as on the metastore.

The same seeded calls (tests/support/method_fuzz.py) go to a Hive 2.3 metastore directly and, through
the proxy, to its twin (a second metastore started the same way, with the same databases), so each
call meets the same state on both sides. The proxy's outcome class (an answer, a declared exception,
a TApplicationException, a dropped connection) must equal the metastore's, or the difference must be
one of RULES, each a documented behaviour of the proxy. Never a hang, never a crash: after the run,
the proxy still answers.

A short run (2.3, two cases a method) is part of `make test`; `make fuzz` runs 2.3, 3.1 and 4.0 with
many more cases a method (FUZZ_VERSIONS, FUZZ_CASES, FUZZ_SEED; a failure prints the calls to replay,
FUZZ_METHODS replays only those methods).
"""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest
import thriftpy2.rpc

from hmsproxy.config.model import AccessControlType
from hmsproxy.features.indexes.calls import METHODS as INDEX_CALLS
from hmsproxy.features.transactions.feature import Transactions
from hmsproxy.features.transactions.ids import SLOT_SHIFT
from hmsproxy.protocol import idl
from hmsproxy.routing.methods import LOCAL_METHODS, METHOD_SPECS
from tests.support.federation import prefixed_config
from tests.support.hive_jars import require_hive
from tests.support.method_fuzz import HUGE_STRING, FuzzCall, calls, outcome_of
from tests.support.served import served

hive = idl.hive

SEED = int(os.environ.get("FUZZ_SEED", "20261129"))
CASES = int(os.environ.get("FUZZ_CASES", "2"))
#: Only these methods (space-separated), to replay a failure: a call's arguments depend on (seed, method, case) alone.
ONLY = os.environ.get("FUZZ_METHODS", "").split() or None
#: The whole run's bound; a run over it fails (a hang somewhere).
DEADLINE_S = float(os.environ.get("FUZZ_DEADLINE_S", "600"))
#: The Hive versions fuzzed: 2.3 in `make test`, all three in `make fuzz`.
VERSIONS = os.environ.get("FUZZ_VERSIONS", "2.3").split()
#: Longer than Hive's own retries of a failed store write (10 attempts 2 s apart, RetryingHMSHandler):
#: Hive 2.3 takes 21 s to refuse create_database with a 4,000-character owner (checked directly).
CALL_TIMEOUT_S = 30
FEDERATED_PREFIX = "fed_"


#: Names that mean something else through the proxy: the federated member's databases, and a Hive 3
#: client's catalog-qualified "@hive#db" (to a 2.3 metastore, the proxy sends "db"). Calls naming them
#: are not compared (a write would leave the two sides' states apart); they go through the proxy alone.
PROXY_NAMES = (FEDERATED_PREFIX, "@hive#")


def _means_otherwise(call: FuzzCall) -> bool:
    shown = repr(call.kwargs)
    return any(name in shown for name in PROXY_NAMES)


def _explained(call: FuzzCall, direct: str, proxied: str, foreign_ids: tuple[int, ...] = ()) -> str | None:
    """Why the proxy's outcome may differ from the metastore's, or None (a defect)."""
    if call.method in LOCAL_METHODS:
        return "the proxy answers fb303 status calls and its own calls itself"
    if proxied == "timeout" and _hangs_translated(call, direct):
        return "the newer call a method is translated to hangs the metastore itself (a 2 MB name on Hive 4.0)"
    if proxied in ("closed", "timeout"):
        return None  # the proxy dropped or hung where the metastore did not: a defect
    if direct == "closed":
        return "the metastore drops the connection on it (Hive 3.1 on a call without its request struct, 2.3 on get_master_keys); the proxy answers and keeps the client's"
    if proxied in ("internal-error", "app-error"):
        return None  # the proxy failed where the metastore did not fail the same way: a defect
    if direct == "unknown-method" and proxied == "internal-error-of-another-call":
        return "the older call a method is translated to fails on the metastore, which says so"
    if direct == "unknown-method":
        return "a method the metastore's version lacks is answered by translating it to an older one"
    if direct == "internal-error":
        return "the proxy answers (a declared exception, a protocol error) a request the metastore fails on"
    if call.method in Transactions.methods and any(str(i) in repr(call.kwargs) for i in foreign_ids):
        return "an id of another metastore's transaction or lock, as the proxy shows it, goes to that metastore"
    if call.method in ("unlock", "check_lock") and (getattr(call.kwargs.get("rqst"), "lockid", 0) or 0) >> SLOT_SHIFT:
        return "a lock id with bits above 2**44 names a metastore's slot to the proxy; one naming no metastore is no lock"
    if call.method in ("abort_txn", "commit_txn") and proxied == "NoSuchTxnException" and _txnid(call) >> SLOT_SHIFT:
        return "a transaction id with bits above 2**44 names a metastore's slot to the proxy; one naming no metastore is no transaction"
    if call.method == "get_valid_write_ids" and direct == "protocol-error":
        return "a field Hive 3.1 requires and the newest IDL made optional (validTxnList) is not refused by the proxy"
    if call.method in INDEX_CALLS:
        return "index calls are answered from the proxy's own index records"
    if call.method == "get_databases":
        return "the proxy matches a get_databases pattern itself, over its list of every metastore's databases"
    if call.method == "check_lock" and (direct, proxied) == ("NoSuchLockException", "NoSuchTxnException"):
        return "the proxy looks up the transaction a check_lock names before its lock"
    if "-> LIST" in call.retyped:
        return "a list's elements of another type: Hive's reader fails on them (or misreads them), the proxy's skips them"
    return None


def _txnid(call: FuzzCall) -> int:
    txnid = getattr(call.kwargs.get("rqst"), "txnid", None)
    return txnid if isinstance(txnid, int) else 0


def _hangs_translated(call: FuzzCall, direct: str) -> bool:
    """A method the metastore lacks, whose newer call the proxy sends it, and a multi-megabyte string:
    Hive 4.0 itself does not answer get_table_objects_by_name_req with a 2 MB database name within
    the call's timeout (checked directly), so the proxy's wait for it is the metastore's hang."""
    return direct == "unknown-method" and HUGE_STRING[:1000] in repr(call.kwargs)


@pytest.fixture(scope="module", params=VERSIONS)
def fuzz_pair(request, metastore_factory, tmp_path_factory):
    """(direct metastore, proxy in front of its twin, federated member): three fresh metastores of one version."""
    version = request.param
    if version != "2.3":
        require_hive(version)
    direct, twin, member = metastore_factory(3, name=f"fuzz{version.replace('.', '')}", hive_versions=[version] * 3)
    for ms in (direct, twin, member):
        client = ms.client()
        try:
            location = (tmp_path_factory.mktemp("fuzz-wh") / "fuzz_db.db").as_uri()
            client.create_database(hive.Database(name="fuzz_db", description=None, locationUri=location, parameters={}))
        finally:
            client.close()
    config = prefixed_config(
        twin.uri, member.uri, name="fed", database_prefix=FEDERATED_PREFIX, access_control_type=AccessControlType.READ_ONLY
    )
    with served(config) as proxy:
        yield direct, proxy, member
        direct.stop(), twin.stop(), member.stop()  # not kept for the session: nothing else uses them


def _foreign_ids(member, proxy, host: str) -> tuple[int, int]:
    """A lock and a transaction the federated member holds, taken on it directly (as client `host`),
    by the ids the proxy shows them under in its merged views (features/transactions/ids.py: the
    member's slot above its real id): ids a client of the proxy may send back, which no other
    metastore has."""
    client = member.client()
    try:
        client.open_txns(hive.OpenTxnRequest(num_txns=1, user="fuzz", hostname=host))
        component = hive.LockComponent(
            type=hive.LockType.SHARED_READ, level=hive.LockLevel.DB, dbname="fuzz_db", operationType=hive.DataOperationType.SELECT
        )
        client.lock(hive.LockRequest(component=[component], user="fuzz", hostname=host))
    finally:
        client.close()
    through = _client("127.0.0.1", proxy.port)
    try:
        locks = [lock.lockid for lock in through.show_locks(hive.ShowLocksRequest()).locks or () if lock.hostname == host]
        txns = [txn.id for txn in through.get_open_txns_info().open_txns if txn.hostname == host]
    finally:
        through.close()
    assert len(locks) == 1 and len(txns) == 1, (locks, txns)
    return locks[0], txns[0]


def _client(host: str, port: int):
    return thriftpy2.rpc.make_client(idl.HmsProxy, host, port, timeout=CALL_TIMEOUT_S * 1000)


def run(planned: list[FuzzCall], host: str, port: int, deadline: float, said: dict | None = None) -> list[str]:
    """Each call's outcome class, on one connection (a new one after a dropped or unsendable call);
    `said`: what each failed call was told (outcome_of)."""
    client = _client(host, port)
    seen = []
    try:
        for call in planned:
            assert time.monotonic() < deadline, f"the fuzz run passed its {DEADLINE_S:.0f} s bound at {call}"
            outcome = outcome_of(client, call, said)
            if outcome == "closed":  # maybe an earlier call's doing: once more on a fresh connection
                client.close()
                client = _client(host, port)
                outcome = outcome_of(client, call, said)
            seen.append(outcome)
            if outcome in ("closed", "timeout", "unsendable"):
                client.close()
                client = _client(host, port)
    finally:
        client.close()
    return seen


def test_every_method_ends_as_on_the_metastore(fuzz_pair, caplog):
    direct, proxy, member = fuzz_pair
    foreign_ids = _foreign_ids(member, proxy, "fuzzed")
    everything = calls(SEED, CASES, ONLY, foreign_ids)
    planned = [c for c in everything if not _means_otherwise(c)]
    deadline = time.monotonic() + DEADLINE_S
    direct_said, proxy_said = {}, {}
    on_metastore = run(planned, direct.host, direct.port, deadline, direct_said)
    through_proxy = run(planned, "127.0.0.1", proxy.port, deadline, proxy_said)
    # The calls naming what the proxy reads otherwise, through the proxy alone: an answer every time.
    proxy_only = [c for c in everything if _means_otherwise(c)]
    caplog.clear()
    alone = run(proxy_only, "127.0.0.1", proxy.port, deadline)
    # Internal errors of the proxy's own among those (the others are a metastore's, relayed): none.
    own = sorted(
        {
            r.getMessage().removeprefix("internal error processing ")
            for r in caplog.records
            if r.getMessage().startswith("internal error processing")
        }
    )
    # A method the metastore itself left unanswered in the compared run (add_token on Hive 2.3) may hang
    # alone too: the proxy waits for the metastore as a client would.
    hangs_hive = {c.method for c, left in zip(planned, on_metastore) if left == "timeout"}
    dropped = [f"{c}: {o}" for c, o in zip(proxy_only, alone) if o == "closed" or (o == "timeout" and c.method not in hangs_hive)]

    unexplained, explained, examples = [], Counter(), {}
    for call, left, right in zip(planned, on_metastore, through_proxy, strict=True):
        if left == right:
            continue
        why = _explained(call, left, right, foreign_ids)
        if why is None:
            told = f"\n    metastore said {direct_said.get(str(call), '-')!r}\n    proxy said {proxy_said.get(str(call), '-')!r}"
            unexplained.append(f"{call}: metastore {left}, proxy {right}{told}")
        else:
            explained[f"{why} ({left} -> {right})"] += 1
            examples.setdefault(f"{why} ({left} -> {right})", set()).add(call.method + (" retyped" if call.retyped else ""))
    retyped = Counter(o for c, o in zip(planned, through_proxy) if c.retyped)
    print(
        f"\nfuzz seed {SEED}: {len(planned)} calls compared ({sum(retyped.values())} retyped: {dict(retyped)}), {len(proxy_only)} through the proxy alone, outcomes {Counter(through_proxy).most_common(8)}; alone {Counter(alone).most_common(6)}"
    )
    both_hung = [str(c) for c, left, right in zip(planned, on_metastore, through_proxy) if left == right == "timeout"]
    if both_hung:
        print(f"  hung on the metastore, and so through the proxy: {both_hung}")
    for why, count in explained.most_common():
        print(f"  {count:4d} x {why}: {', '.join(sorted(examples[why])[:4])}")
    hung = [
        f"{c}: metastore {left}"
        for c, left, right in zip(planned, on_metastore, through_proxy)
        if right == "timeout" and left != "timeout" and not _hangs_translated(c, left)
    ]
    assert not hung, f"hung through the proxy only: {hung}"
    assert not unexplained, "\n".join(unexplained[:40])
    assert not dropped, "through the proxy alone, dropped or hung: " + "\n".join(dropped[:40])
    assert not own, f"the proxy's own internal errors, through the proxy alone: {own}"
    # The proxy still serves after everything it was fed, and so does the metastore it was compared
    # with (else the comparison's end was against a dead one). `default`, as Hive never drops it: the
    # calls may drop or rename fuzz_db (through the proxy alone too, as `@hive#fuzz_db`).
    for host, port in (("127.0.0.1", proxy.port), (direct.host, direct.port)):
        client = _client(host, port)
        try:
            assert "default" in client.get_all_databases(), (host, port)
        finally:
            client.close()
    if ONLY is not None:
        return  # a replay of a few methods: the whole run's shape is not asked of it
    # The run reached every method's server side: most calls were not refused by the client's encoder.
    assert Counter(through_proxy)["unsendable"] < len(planned) / 4
    assert any(METHOD_SPECS[c.method].writes and o == "ok" for c, o in zip(planned, through_proxy)), "no write went through at all"


def test_an_id_of_the_members_lock_reaches_the_member(fuzz_pair):
    """The rule the fuzz run allows for foreign ids, shown on its own: check_lock of the member's lock,
    by the id the proxy shows it under, is answered by the member; the metastore called directly
    has no such lock."""
    direct, proxy, member = fuzz_pair
    lock_id, _ = _foreign_ids(member, proxy, "checked")  # its own: the fuzz run may have released the other
    request = hive.CheckLockRequest(lockid=lock_id)
    through = _client("127.0.0.1", proxy.port)
    try:
        assert through.check_lock(request).state == hive.LockState.ACQUIRED
    finally:
        through.close()
    client = direct.client()
    try:
        with pytest.raises(hive.NoSuchLockException):
            client.check_lock(request)
    finally:
        client.close()
