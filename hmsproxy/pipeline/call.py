"""One client call on its way through the proxy, as features see it.

Features (pipeline/platform.py) may have any of these hook methods (mitmproxy-style,
named after the moment they run); each is optional:

- ``on_arrival(call)``: first, for every call of every kind (local, fan-out, routed), before
  any work, a relay shortcut included: may refuse by raising ProxyError, or wait (limits). Sees only
  the session and the method: the arguments may not be decoded yet. Its verdict is never remembered.
- ``on_request(call)``: before routing. May set ``call.route`` itself, answer
  locally by returning a ``<method>_result``, or refuse by raising ProxyError.
- ``on_routed(call)``: after routing, before the backend is called. Same verdicts.
- ``on_unavailable(call, error)``: the metastore the call went to could not be reached (error: a
  BackendUnavailable). May answer instead by returning a ``<method>_result`` (remotes: what a link
  recorded), or raise a ProxyError with a better message; None: the client gets the error.
- ``on_response(call, result)``: after the backend answered.
- ``on_complete(call)``: once per call, after everything, errors included
  (audit, metrics). Must not raise.
"""

from __future__ import annotations

import time

from hmsproxy.protocol.framing import Message
from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.methods import MethodSpec
from hmsproxy.routing.router import Route, Router
from hmsproxy.upstream.session import Session

#: Outcomes besides "ok", a ProxyError's own (refused, denied, not_found) and the
#: name of a declared exception the backend returned.
UNAVAILABLE = "unavailable"
NOT_FOUND = "not_found"
INTERNAL_ERROR = "internal_error"
APPLICATION_ERROR = "application_error"


class Call:
    """One call: what the client asked, where it went and how it ended.

    `args` is the decoded `<method>_args` struct. A call read off the wire (server.py) carries its
    `message` and is decoded when something first asks for `args`: a call the proxy relays as the
    client sent it (shortcuts.py) is never decoded unless a hook looks at its arguments.
    """

    __slots__ = (
        "session", "spec", "_args", "message", "router", "client_db", "table", "route", "subject",
        "backend", "outcome", "error", "notes", "relayed_outcome", "started", "elapsed_s", "replay", "reply_sink",
    )  # fmt: skip

    def __init__(self, session: Session, spec: MethodSpec, args, router: Router, message: Message | None = None, reply_sink=None):
        self.session = session
        self.spec = spec
        self._args = args
        #: The call as the client sent it (framing.Message), when it came off the wire.
        self.message = message
        #: The config snapshot the whole call uses.
        self.router = router
        self.client_db: str | None = None
        self.table: str | None = None
        self.route: Route | None = None
        #: What a feature routed the call to, for error messages (e.g. "remote table db.t").
        self.subject: str | None = None
        #: The metastore that answered: its name, "*" for fan-out, "hmsproxy" for local answers.
        self.backend: str | None = None
        self.outcome = "ok"
        self.error: str | None = None
        #: What features note about this call for their later hooks, by feature name.
        self.notes: dict[str, object] = {}
        #: A relayed call's outcome and error message, read from its answer's first field (relay.py).
        self.relayed_outcome: tuple[str, str | None] = ("ok", None)
        self.started = time.perf_counter()
        self.elapsed_s = 0.0
        #: (shortcut, exchange result) when the hit loop in C sent this call already and its round
        #: trip did not end in a whole answer (downstream/hits.py): the shortcut finishes it.
        self.replay: tuple | None = None
        #: Where this call may send its answer undecoded (downstream/reply_sink.py; relay.py): the
        #: client's socket, for a call off a buffered connection; None for every other call
        #: (framed, one-way, the proxy's own calls: pipeline/internal_client.py).
        self.reply_sink = reply_sink

    @property
    def args(self):
        if self._args is None and self.message is not None:
            self._args = self.message.decoded(self.spec.args_cls)
        return self._args

    @property
    def method(self) -> str:
        return self.spec.name


def accepted_note(call: Call, key: str, result):
    """What a hook noted under `key` before the call, once the metastore accepted it (else None)."""
    note = call.notes.get(key)
    return None if note is None or declared_error(result) is not None else note


def result_outcome(result) -> tuple[str, str | None]:
    """("ok", None), or the declared exception a result carries and its message."""
    error = declared_error(result)
    if error is None:
        return "ok", None
    return type(error).__name__, getattr(error, "message", None)
