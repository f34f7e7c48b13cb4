"""One Python REPL fed code blocks one by one, as a reader pastes them into `python`.

Run as a script: each line on standard input is JSON ``{"name": ..., "code": ...}``. The
code's lines go one by one to one ``code.InteractiveConsole`` (so a SparkSession made by one
block serves the next, and a block that would not paste into the REPL -- an indented block
followed by a statement without a blank line, say -- fails here as it would there), and a
line ``DONE_MARK {"ok": ..., "error": ...}`` on standard output follows each block, after
whatever the block printed. The README tour test drives it (test_readme_examples.py).
"""

from __future__ import annotations

import code
import json
import sys
import traceback

DONE_MARK = "@@hmsproxy-block-done"


class Console(code.InteractiveConsole):
    """The REPL, remembering the first error of a block instead of only printing it."""

    def __init__(self) -> None:
        super().__init__({"__name__": "__main__"})
        self.error: str | None = None

    def showtraceback(self) -> None:
        self.error = self.error or traceback.format_exc()
        super().showtraceback()

    def showsyntaxerror(self, *args, **kwargs) -> None:
        self.error = self.error or "".join(traceback.format_exception_only(*sys.exc_info()[:2]))
        super().showsyntaxerror(*args, **kwargs)

    def run_block(self, text: str) -> str | None:
        """Paste `text` line by line, then Enter if the REPL still waits; the first error, if any."""
        self.error = None
        self.resetbuffer()
        more = False
        for line in text.splitlines():
            more = self.push(line)
            if self.error:
                return self.error
        if more:
            self.push("")
        return self.error


def main() -> None:
    console = Console()
    for line in sys.stdin:
        request = json.loads(line)
        error = console.run_block(request["code"])
        sys.stdout.flush()
        sys.stderr.flush()
        print(f"{DONE_MARK} {json.dumps({'ok': error is None, 'error': error})}", flush=True)


if __name__ == "__main__":
    main()
