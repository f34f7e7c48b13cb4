"""One client call on its way through the proxy, as features see it.

Features (features/base.py) may have any of these hook methods (mitmproxy-style,
named after the moment they run); each is optional:

- ``on_request(call)``: before routing. May set ``call.route`` itself, answer
  locally by returning a ``<method>_result``, or refuse by raising ProxyError.
- ``on_routed(call)``: after routing, before the backend is called. Same verdicts.
- ``on_response(call, result)``: after the backend answered.
- ``on_complete(call)``: once per call, after everything, errors included
  (audit, metrics). Must not raise.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hmsproxy.routing.methods import MethodSpec
from hmsproxy.routing.router import Route, Router
from hmsproxy.session import Session

#: Outcomes besides "ok", a ProxyError's own (refused, denied, not_found) and the
#: name of a declared exception the backend returned.
UNAVAILABLE = "unavailable"
NOT_FOUND = "not_found"
INTERNAL_ERROR = "internal_error"
APPLICATION_ERROR = "application_error"


@dataclass
class Call:
    session: Session
    spec: MethodSpec
    args: object
    router: Router
    client_db: str | None = None
    table: str | None = None
    route: Route | None = None
    #: What a feature routed the call to, for error messages (e.g. "remote table db.t").
    subject: str | None = None
    #: The metastore that answered: its name, "*" for fan-out, "hmsproxy" for local answers.
    backend: str | None = None
    outcome: str = "ok"
    error: str | None = None
    #: What features note about this call for their later hooks, by feature name.
    notes: dict[str, object] = field(default_factory=dict)
    #: A relayed call's outcome and error message, read from its answer's first field (relay.py).
    relayed_outcome: tuple[str, str | None] = ("ok", None)
    started: float = field(default_factory=time.perf_counter)
    elapsed_s: float = 0.0

    @property
    def method(self) -> str:
        return self.spec.name


def result_outcome(result) -> tuple[str, str | None]:
    """("ok", None), or the declared exception a result carries and its message."""
    for name, value in vars(result).items():
        if name != "success" and value is not None:
            return type(value).__name__, getattr(value, "message", None)
    return "ok", None
