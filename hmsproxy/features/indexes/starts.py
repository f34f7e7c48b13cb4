"""How hmsproxy's index statements start: regexes matched case-insensitively after leading blanks and comments.
Apart from the grammar, so that telling them from Spark SQL (`hmsproxy sql`, the Spark helper)
loads no parser; statements.py gives them to the feature's StatementSet."""

STARTS = (r"(?:CREATE|DROP|ALTER)\s+INDEX\b", r"SHOW\s+(?:FORMATTED\s+)?INDEX(?:ES)?\s+ON\b")
