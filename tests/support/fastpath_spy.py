"""Which calls took a shortcut through Python (FastPath.shortcut) rather than the C hit loop."""

from __future__ import annotations

from hmsproxy.pipeline import fastpath


def python_shortcuts_seen(monkeypatch) -> list[str]:
    """A list that FastPath.shortcut appends each call's method to, for the test's length."""
    seen: list[str] = []
    original = fastpath.FastPath.shortcut

    def counted(self, call):
        seen.append(call.spec.name)
        return original(self, call)

    monkeypatch.setattr(fastpath.FastPath, "shortcut", counted)
    return seen
