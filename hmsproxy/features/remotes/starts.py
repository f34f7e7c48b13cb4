"""How the remote-link statements start (ddl/starts.py says why apart from statements.py)."""

# CREATE/DROP/SHOW REMOTE is never Spark SQL (so a typo after REMOTE gets our error message);
# DESCRIBE remote may be a table called "remote", so the next word must be ours too.
STARTS = (r"(?:CREATE|DROP|SHOW)\s+REMOTE\b", r"DESC(?:RIBE)?\s+REMOTE\s+(?:TABLE|DATABASE|SCHEMA)\b")
