"""Do the members' notification settings agree with what the proxy answers `get_config_value` with?

`get_config_value` goes to the primary, so its answer stands for the whole federation; a consumer of
the merged log (Impala's EventProcessorConfigValidator, REPL DUMP's batch size) trusts it for every
metastore's events. Each member is asked the same keys; a member that answers otherwise is named in
one line per key (`hmsproxy status`, and the proxy's log). Keys by their hive.* names: Hive 2.3
refuses to answer `metastore.*` ones. A key a metastore does not know answers the default the caller
sends (Hive 3.1 does not know `hive.metastore.dml.events`, a client-side setting there): such an
answer is not compared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thriftpy2.thrift import TApplicationException

from hmsproxy.protocol import idl
from hmsproxy.upstream.wire import BackendUnavailable

if TYPE_CHECKING:
    from hmsproxy.routing.router import Router
    from hmsproxy.upstream.session import Session

P = idl.HmsProxy

#: What followers of the log read (Impala's validator: the last two; REPL DUMP: the batch size).
KEYS = (
    "hive.metastore.dml.events",
    "hive.metastore.event.message.factory",
    "hive.metastore.batch.retrieve.max",
    "hive.metastore.notifications.add.thrift.objects",
    "hive.metastore.alter.notifications.basic",
)
#: The default sent with each question: an answer equal to it means the metastore does not set the key.
UNSET = "<hmsproxy: not set>"


def _answers(session: Session, metastore) -> dict[str, str]:
    found = {}
    for key in KEYS:
        try:
            answer = session.call(metastore, "get_config_value", P.get_config_value_args(name=key, defaultValue=UNSET), read_only=True)
        except TApplicationException:  # a metastore that can't answer it: not compared
            continue
        # A key it refuses comes back as its declared exception (o1), without success: not compared either.
        if answer.success is not None and answer.success != UNSET:
            found[key] = answer.success
    return found


def disagreements(session: Session, router: Router) -> list[str]:
    """One line per member and key whose answer differs from the primary's; a line for a metastore that
    can't be asked now."""
    try:
        primary = _answers(session, router.primary.metastore)
    except BackendUnavailable as e:
        return [f"notifications: could not compare settings: the primary '{router.primary.name}' is unavailable: {e}"]
    lines = []
    for naming in router.namings:
        if naming is router.primary:
            continue
        try:
            member = _answers(session, naming.metastore)
        except BackendUnavailable as e:
            lines.append(f"notifications: could not compare settings of '{naming.name}': unavailable: {e}")
            continue
        for key in KEYS:
            if key in primary and key in member and primary[key] != member[key]:
                lines.append(
                    f"notifications: metastore '{naming.name}' has {key}={member[key]}, but the proxy answers "
                    f"get_config_value with the primary's {primary[key]}: set it alike on every metastore"
                )
    return lines
