"""A feature whose verdict depends on who asks: refuses user bob's get_table, lets everyone else's
through, and keeps whom it was asked for (the fast path must never reuse one caller's verdict for another)."""

from __future__ import annotations

from hmsproxy.pipeline.errors import AccessDenied
from hmsproxy.pipeline.platform import Feature


class NoBob(Feature):
    name = "no_bob"
    methods = frozenset({"get_table"})
    memoizable_verdict = True  # who asks is part of the remembered key: its verdict may be remembered

    def __init__(self, platform):
        super().__init__(platform)
        self.asked: list[str | None] = []

    def on_request(self, call):
        self.asked.append(call.session.user)
        if call.session.user == "bob":
            raise AccessDenied("hmsproxy: bob may not read tables")
