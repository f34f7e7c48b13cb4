"""`python -m hmsproxy.jobs NAME …`, and the file spark-submit runs: `spark-submit …/hmsproxy/jobs/__main__.py NAME …`."""

import sys
from pathlib import Path

if not __package__:
    # Run as a file (spark-submit can't do -m): Python put this directory first on sys.path, where
    # errors.py, session.py, … would shadow top-level modules of those names; import this file's own
    # hmsproxy instead (a checkout, an installed package, or a --py-files archive alike).
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(here.parents[1]))

from hmsproxy.jobs.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
