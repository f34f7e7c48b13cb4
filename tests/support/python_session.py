"""One Python session fed code blocks one by one, as a reader pastes them into one REPL.

Run as a script: each line on standard input is JSON ``{"name": ..., "code": ...}``; the
code runs in one shared namespace (so a SparkSession made by one block serves the next),
and a line ``DONE_MARK {"ok": ..., "error": ...}`` on standard output follows each block,
after whatever the block printed. The README tour test drives it (test_readme_examples.py).
"""

from __future__ import annotations

import json
import sys
import traceback

DONE_MARK = "@@hmsproxy-block-done"


def main() -> None:
    namespace: dict = {"__name__": "__main__"}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            exec(compile(request["code"], request["name"], "exec"), namespace)
            answer = {"ok": True, "error": None}
        except BaseException:  # the block's failure is the answer, the session goes on
            answer = {"ok": False, "error": traceback.format_exc()}
        sys.stdout.flush()
        print(f"{DONE_MARK} {json.dumps(answer)}", flush=True)


if __name__ == "__main__":
    main()
