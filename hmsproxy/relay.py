"""Answers forwarded as bytes: the fast path for calls whose answer needs nothing from the proxy.

A call qualifies when nothing would change its answer on the full path: no name rewriting (the
route's naming is the identity, no "@catalog#" marker, no feature routed it), no table list to
filter, no translation (a call some Hive version lacks is relayed only once the metastore has
answered it on the full path), no feature that needs the answer, no metadata
cache in front of that metastore for the call, and no Hive 3 catalog to fill in (the backend is
Hive 3+ or the answer holds no Database, Table or Partition). Then the backend's answer is not
decoded: the request goes out as usual, the reply header is read to give the client its own
sequence id, and the body is copied to the client as it arrives from the backend's socket, while
thriftpy2's C `skip` walks it to find where the message ends. Memory stays at a few socket
buffers whatever the answer's size; metrics and audit get the outcome from the body's first
field (success, or which declared exception).

Buffered transport only (a framed reply needs its length before its body). A backend that fails
after part of an answer reached the client leaves the client's stream unusable: the client's
connection is closed (`RelayBroken`).
"""

from __future__ import annotations

import struct

from thriftpy2.thrift import TMessageType

from hmsproxy.routing.default_catalog import holds_catalog_structs
from hmsproxy.routing.visibility import has_table_lists
from hmsproxy.translations import TRANSLATIONS

#: What Handler.dispatch returns for a relayed call: the answer has been sent already.
RELAYED = object()


class RelayBroken(Exception):
    """The backend failed after part of its answer was sent to the client."""


class ReplySink:
    """The client's side of a relayed answer: its reply header, then the body's bytes as they come.

    The last chunk is held back until `finish()`, which server.py calls once the call is complete
    (audit, metrics): as on the full path, a client never has its answer before the call is recorded.
    """

    def __init__(self, proto, method: str, seqid: int):
        self.proto = proto
        self.method = method
        self.seqid = seqid
        self.started = False
        self._held = b""

    def begin(self, mtype: int) -> None:
        self.proto.write_message_begin(self.method, mtype, self.seqid)
        self.started = True

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self._held:
            self.proto.trans.write(self._held)
            self.proto.trans.flush()
        self._held = data

    def finish(self) -> None:
        self.proto.trans.write(self._held)
        self.proto.trans.flush()
        self._held = b""


def header_length(head: bytes, name: str) -> int:
    """Bytes of a reply's message header (strict: version, name, seqid; old style: name, type, seqid)."""
    (first,) = struct.unpack("!i", head[:4])
    return 12 + len(name.encode()) if first < 0 else 9 + len(name.encode())


def outcome(result_cls, mtype: int, body_start: bytes) -> str:
    """What metrics and audit record for a relayed answer, from the body's first field."""
    if mtype == TMessageType.EXCEPTION:
        return "application_error"
    if len(body_start) < 3 or body_start[0] == 0:  # too little seen to tell, or a void call's empty struct
        return "ok"
    (fid,) = struct.unpack("!h", body_start[1:3])
    if fid == 0:
        return "ok"
    spec = result_cls.thrift_spec.get(fid)
    return spec[2].__name__ if spec is not None and len(spec) > 2 and isinstance(spec[2], type) else "ok"


def relayable(call, backends, config, *, routed_by_feature: bool) -> bool:
    """Whether nothing on the full path but a feature would change this call's answer (see the module
    doc); the handler then asks the features (`needs_result`), the dearer question, last."""
    spec, route = call.spec, call.route
    if not config.server.relay or config.server.transport != "buffered" or call.session.reply_sink is None:
        return False
    if spec.oneway or routed_by_feature or route is None or not route.naming.identity or route.catalog is not None:
        return False
    if call.client_db and has_table_lists(spec):
        return False
    name = route.metastore.name
    if name in backends.caches:
        return False  # a cached metastore's reads belong to the cache, its writes must invalidate it
    if spec.name in TRANSLATIONS and spec.name not in backends.state(name).present_methods:
        return False  # the backend may lack the call: the full path translates it (and learns whether it has it)
    return not holds_catalog_structs(spec.success_type) or call.session.knows_catalogs(route.metastore)
