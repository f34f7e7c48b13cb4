"""The client's side of an answer relayed as bytes (protocol/relay.py copies it here)."""

from __future__ import annotations

from hmsproxy.protocol.framing import header_bytes


class ReplySink:
    """The client's side of a relayed answer: its reply header, then the body's bytes as they come,
    written to the client's socket (`send`: its sendall) in as few writes as the chunks allow.

    The last chunk is held back until `finish()`, which server.py calls once the call is complete
    (audit, metrics): as on the full path, a client never has its answer before the call is recorded.
    """

    def __init__(self, send, method: str, seqid: int):
        self._send = send
        self.method = method
        self.seqid = seqid
        self.started = False
        self._held = b""
        self._header_only = False

    def begin(self, mtype: int, header: bytes | None = None) -> None:
        """The answer starts: `header`, the metastore's reply header when it answered the client's
        own request (its sequence id is the client's), else one made here."""
        self._held = header or header_bytes(self.method, mtype, self.seqid)
        self._header_only = self.started = True

    def hold(self, reply: bytes) -> None:
        """The whole answer at once, its header included (the metastore's own: it answered the client's
        request as sent; wire.py's C exchange): sent by `finish()`."""
        self._held = reply
        self.started = True

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self._header_only:  # the header goes out with the first chunk
            self._held += data
            self._header_only = False
            return
        self._send(self._held)
        self._held = data

    def finish(self) -> None:
        self._send(self._held)
        self._held = b""
