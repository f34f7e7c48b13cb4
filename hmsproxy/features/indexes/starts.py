"""How the index statements start (ddl/starts.py says why apart from statements.py)."""

STARTS = (r"(?:CREATE|DROP|ALTER)\s+INDEX\b", r"SHOW\s+(?:FORMATTED\s+)?INDEX(?:ES)?\s+ON\b")
