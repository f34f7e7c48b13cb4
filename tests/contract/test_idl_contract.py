"""Our Thrift IDL, as thriftpy2 loads it, against the contract compiled into the Hive jars.

tests/contract/java/ContractDump.java reads the generated Java classes of
hive-metastore and libfb303 (the jars shipped inside pyspark) by reflection and
prints every struct, enum and service method as JSON lines.  These tests
compare that dump with hmsproxy.protocol.idl:

* every struct of the jar exists in our IDL with the same kind (struct, union,
  exception) and every field has the same id, name, requiredness and type
  (recursively; struct and enum names must match);
* every enum has the same values;
* every service method has the same argument ids/names/types, the same return
  type, the same declared exceptions (ids, types) and the same oneway-ness;
* the other way round, our IDL adds nothing that is not listed in ALLOWED_ADDITIONS
  (and everything listed there is really an addition).

javac and java are required: the tests fail, never skip, when they are missing.
tests/contract/jars.py finds the jars and runs the dump (for Hive 3.1 and 4.x too:
see test_version_diff.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hmsproxy.upstream.translations import ADDED_IN_4_0
from tests.contract import jars
from tests.contract.model import Contract, Field, jar_contract, our_contract, show, wire

#: What our IDL may have beyond the 2.3 jar: "Struct.id:name" for a field,
#: "Service.method" for a method, "Struct" / "Enum" / "Enum.VALUE" for whole types.
ALLOWED_ADDITIONS = frozenset(
    {
        # Hive 3.x fields, for talking to newer backends.
        "GetTableRequest.4:catName",
        "GetTablesRequest.4:catName",
        "GetTableResult.2:isStatsCompliant",
        "Table.17:catNameHive3",
        # Hive 3.x/4.x transaction options, kept so a newer client's reach its metastore (the transactions feature).
        *(f"AbortTxnRequest.{f}" for f in ("2:replPolicy", "3:txn_type", "4:errorCode")),
        "AbortTxnsRequest.2:errorCode",
        *(f"CommitTxnRequest.{f}" for f in ("2:replPolicy", "3:writeEventInfos", "4:replLastIdInfo", "5:keyValue")),
        *(f"CommitTxnRequest.{f}" for f in ("6:exclWriteEnabled", "7:txn_type")),
        *(f"LockRequest.{f}" for f in ("6:zeroWaitReadEnabled", "7:exclusiveCTAS", "8:locklessReadsEnabled")),
        "LockResponse.3:errorMessage",
        *(f"OpenTxnRequest.{f}" for f in ("5:replPolicy", "6:replSrcTxnIds", "7:txn_type")),
        "ShowLocksRequest.5:txnid",
        # Hive 3.x/4.x write ids.
        *(
            f"{service}.{method}"
            for service in ("ThriftHiveMetastore", "HmsProxy")
            for method in ("allocate_table_write_ids", "get_valid_write_ids", "get_open_txns_req")
        ),
        "GetOpenTxnsRequest",
        "AllocateTableWriteIdsRequest",
        "AllocateTableWriteIdsResponse",
        "TxnToWriteId",
        "GetValidWriteIdsRequest",
        "GetValidWriteIdsResponse",
        "TableValidWriteIds",
        "WriteEventInfo",
        "ReplLastIdInfo",
        "CommitTxnKeyValue",
        "TxnType",
        # Hive 3.0+/4.0's notification counts and request filters (the notifications feature).
        *(f"{service}.get_notification_events_count" for service in ("ThriftHiveMetastore", "HmsProxy")),
        "NotificationEventsCountRequest",
        "NotificationEventsCountResponse",
        "NotificationEvent.8:catName",
        *(f"NotificationEventRequest.{f}" for f in ("3:eventTypeSkipList", "4:catName", "5:dbName", "6:tableNames")),
        # The proxy's own calls.
        "HmsProxy.hmsproxy_describe",
        "HmsProxy.hmsproxy_execute",
        "HmsProxy.hmsproxy_execute_script",
    }
) | frozenset(
    # Hive 3/4's request calls that Hive 4 clients send (hmsproxy.upstream.translations answers them on older
    # metastores), with the types only they use. test_version_diff checks them against the 4.0.1 jar.
    {f"{service}.{method}" for service in ("ThriftHiveMetastore", "HmsProxy") for method in ADDED_IN_4_0}
    | {"DatabaseType", "Catalog", "GetCatalogRequest", "GetCatalogResponse", "GetCatalogsResponse", "ObjectDictionary"}
    | {f"SQL{kind}Constraint" for kind in ("Unique", "NotNull", "Default", "Check")}
    | {f"{call}Request" for call in ("AlterDatabase", "AlterPartitions", "AlterTable", "AppendPartitions", "CreateDatabase", "CreateTable")}
    | {f"{call}Request" for call in ("DropDatabase", "DropPartition", "DropTable", "GetDatabase", "GetFields", "GetPartitionNamesPs")}
    | {f"{call}Request" for call in ("GetPartition", "GetPartitionsByFilter", "GetPartitionsByNames", "GetPartitionsPsWithAuth")}
    | {f"{call}Request" for call in ("GetSchema", "Partitions", "RenamePartition")}
    | {f"{call}Response" for call in ("AlterPartitions", "AlterTable", "GetFields", "GetPartitionNamesPs", "GetPartition")}
    | {f"{call}Response" for call in ("GetPartitionsPsWithAuth", "GetSchema", "Partitions", "RenamePartition")}
    | {"GetPartitionsByNamesResult"}
)

# ----------------------------------------------------------------------- fixtures


@dataclass
class Dumps:
    jar: Contract
    ours: Contract
    jar_names: str


@pytest.fixture(scope="session")
def contract(tmp_path_factory) -> Dumps:
    try:
        found = jars.pyspark_jars()
        lines = jars.dump(found, tmp_path_factory.mktemp("contract-dump"))
    except (jars.JarsUnavailable, jars.DumpFailed) as e:
        pytest.fail(str(e))
    return Dumps(jar_contract(lines), our_contract(), found.names)


def _report(problems: list[str], what: str, jar_names: str) -> None:
    if problems:
        pytest.fail(
            f"{len(problems)} {what} mismatch(es) between our IDL and {jar_names}:\n  " + "\n  ".join(problems),
            pytrace=False,
        )


def _compare_fields(where: str, jar: dict[int, Field], ours: dict[int, Field], label: str = "field") -> list[str]:
    problems = []
    for fid, jf in sorted(jar.items()):
        of = ours.get(fid)
        if of is None:
            problems.append(f"{where}: {label} {fid}:{jf.name} ({show(jf.type)}) is missing")
            continue
        if of.name != jf.name:
            problems.append(f"{where}: {label} {fid} is named {of.name!r}, the jar says {jf.name!r}")
        if wire(of.type) != wire(jf.type):
            problems.append(f"{where}: {label} {fid}:{jf.name} is {show(of.type)}, the jar says {show(jf.type)}")
        if of.required != jf.required:
            problems.append(
                f"{where}: {label} {fid}:{jf.name} is {'required' if of.required else 'not required'}, "
                f"the jar says {'required' if jf.required else 'not required'}"
            )
    return problems


# -------------------------------------------------------------------------- tests


def test_dump_is_complete(contract):
    """Guards the rest: a broken dump (wrong package, empty jar) must not pass as 'no mismatches'."""
    jar = contract.jar
    assert len(jar.structs) > 100, f"only {len(jar.structs)} structs dumped from {contract.jar_names}"
    assert len(jar.enums) > 10, f"only {len(jar.enums)} enums dumped"
    assert "get_table" in jar.services.get("ThriftHiveMetastore", {}), "ThriftHiveMetastore not dumped"
    assert "getStatus" in jar.services.get("FacebookService", {}), "FacebookService not dumped"


def test_structs_match_jar(contract):
    problems = []
    for name, js in sorted(contract.jar.structs.items()):
        ours = contract.ours.structs.get(name)
        if ours is None:
            problems.append(f"{js.kind} {name}: missing from our IDL")
            continue
        if ours.kind != js.kind:
            problems.append(f"{name}: ours is a {ours.kind}, the jar has a {js.kind}")
        problems += _compare_fields(name, js.fields, ours.fields)
    _report(problems, "struct", contract.jar_names)


def test_enums_match_jar(contract):
    problems = []
    for name, values in sorted(contract.jar.enums.items()):
        ours = contract.ours.enums.get(name)
        if ours is None:
            problems.append(f"enum {name}: missing from our IDL")
            continue
        for value, number in sorted(values.items(), key=lambda kv: kv[1]):
            if value not in ours:
                problems.append(f"enum {name}: value {value} = {number} is missing")
            elif ours[value] != number:
                problems.append(f"enum {name}: {value} = {ours[value]}, the jar says {number}")
    _report(problems, "enum", contract.jar_names)


def test_service_methods_match_jar(contract):
    problems = []
    for service, methods in sorted(contract.jar.services.items()):
        ours_service = contract.ours.services.get(service)
        if ours_service is None:
            problems.append(f"service {service}: missing from our IDL")
            continue
        for name, jm in sorted(methods.items()):
            where = f"{service}.{name}"
            om = ours_service.get(name)
            if om is None:
                problems.append(f"{where}: method missing from our IDL")
                continue
            problems += _compare_fields(where, jm.args, om.args, label="argument")
            if (om.returns is None) != (jm.returns is None) or (om.returns is not None and wire(om.returns) != wire(jm.returns)):
                ours_ret = "void" if om.returns is None else show(om.returns)
                jar_ret = "void" if jm.returns is None else show(jm.returns)
                problems.append(f"{where}: returns {ours_ret}, the jar says {jar_ret}")
            problems += _compare_fields(where, jm.throws, om.throws, label="exception")
            jar_declared = frozenset(f.type[1] for f in jm.throws.values())
            if jar_declared != jm.declared_throws:  # the dump disagrees with itself
                problems.append(f"{where}: jar result class has {sorted(jar_declared)}, its Iface declares {sorted(jm.declared_throws)}")
            if om.declared_throws != jm.declared_throws:
                problems.append(f"{where}: throws {sorted(om.declared_throws)}, the jar declares {sorted(jm.declared_throws)}")
            if om.oneway != jm.oneway:
                problems.append(
                    f"{where}: is {'oneway' if om.oneway else 'not oneway'}, the jar's is {'oneway' if jm.oneway else 'not oneway'}"
                )
    _report(problems, "service", contract.jar_names)


def _our_additions(contract) -> set[str]:
    """Everything in our IDL that the jar does not have, in ALLOWED_ADDITIONS' notation."""
    jar, ours = contract.jar, contract.ours
    added: set[str] = set()
    for name, s in ours.structs.items():
        js = jar.structs.get(name)
        if js is None:
            added.add(name)
            continue
        added |= {f"{name}.{fid}:{f.name}" for fid, f in s.fields.items() if fid not in js.fields}
    for name, values in ours.enums.items():
        if name not in jar.enums:
            added.add(name)
            continue
        added |= {f"{name}.{v}" for v in values if v not in jar.enums[name]}
    for service, methods in ours.services.items():
        if service == "HmsProxy":
            # HmsProxy extends ThriftHiveMetastore: only its own methods are additions.
            base = jar.services.get("ThriftHiveMetastore", {})
        else:
            base = jar.services.get(service, {})
        for name, m in methods.items():
            if name not in base:
                added.add(f"{service}.{name}")
                continue
            added |= {
                f"{service}.{name}.{kind} {fid}:{f.name}"
                for kind, ours_fields, jar_fields in (("argument", m.args, base[name].args), ("exception", m.throws, base[name].throws))
                for fid, f in ours_fields.items()
                if fid not in jar_fields
            }
    return added


def test_idl_adds_only_allow_listed(contract):
    extra = sorted(_our_additions(contract) - ALLOWED_ADDITIONS)
    assert not extra, (
        f"our IDL has things {contract.jar_names} does not, and ALLOWED_ADDITIONS does not list them "
        f"(a typo, or an addition to allow-list): {extra}"
    )


def test_allow_list_is_current(contract):
    """Each allowed addition must be in our IDL and not (yet) in the jar."""
    stale = sorted(ALLOWED_ADDITIONS - _our_additions(contract))
    assert not stale, (
        f"ALLOWED_ADDITIONS lists entries that are not additions of our IDL over {contract.jar_names} "
        f"(missing from the IDL, misspelled, or now part of the jar): {stale}"
    )


def test_binary_matches_jar(contract):
    """binary and string share the wire type, but thriftpy2 decodes string to str and binary to bytes."""
    problems = []

    def walk(where: str, jar_fields: dict[int, Field], ours_fields: dict[int, Field]) -> None:
        for fid, jf in sorted(jar_fields.items()):
            of = ours_fields.get(fid)
            if of is not None and wire(of.type) == wire(jf.type) and of.type != jf.type:
                problems.append(f"{where}: field {fid}:{jf.name} is {show(of.type)}, the jar says {show(jf.type)}")

    for name, js in sorted(contract.jar.structs.items()):
        if name in contract.ours.structs:
            walk(name, js.fields, contract.ours.structs[name].fields)
    for service, methods in sorted(contract.jar.services.items()):
        for name, jm in sorted(methods.items()):
            om = contract.ours.services.get(service, {}).get(name)
            if om is None:
                continue
            walk(f"{service}.{name}", jm.args, om.args)
            if jm.returns and om.returns and wire(jm.returns) == wire(om.returns) and jm.returns != om.returns:
                problems.append(f"{service}.{name}: returns {show(om.returns)}, the jar says {show(jm.returns)}")
    _report(problems, "binary/string", contract.jar_names)
