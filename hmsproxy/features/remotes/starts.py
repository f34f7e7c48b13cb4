"""How hmsproxy's remote-link statements start: regexes matched case-insensitively after leading blanks and comments.
Apart from the grammar, so that telling them from Spark SQL (`hmsproxy sql`, the Spark helper)
loads no parser; statements.py gives them to the feature's StatementSet."""

# CREATE/DROP/SHOW REMOTE is never Spark SQL (so a typo after REMOTE gets our error message);
# DESCRIBE remote may be a table called "remote", so the next word must be ours too.
STARTS = (r"(?:CREATE|DROP|SHOW)\s+REMOTE\b", r"DESC(?:RIBE)?\s+REMOTE\s+(?:TABLE|DATABASE|SCHEMA)\b")
