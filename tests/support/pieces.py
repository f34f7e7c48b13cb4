"""Bytes handed over a few at a time, as a socket may: for readers that must not assume whole messages."""

from __future__ import annotations


class Pieces:
    """A socket holding `data`, handed over at most `piece` bytes a read, then EOF (b"")."""

    def __init__(self, data: bytes, piece: int):
        self.data, self.piece, self.pos = data, piece, 0

    def recv(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + min(n, self.piece)]
        self.pos += len(chunk)
        return chunk

    def waiting(self) -> bool:
        """Whether bytes are left to read."""
        return self.pos < len(self.data)
