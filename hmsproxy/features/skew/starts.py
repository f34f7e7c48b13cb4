"""How hmsproxy's skew statements start: regexes matched case-insensitively after leading blanks and comments.
Apart from the grammar, so that telling them from Spark SQL (`hmsproxy sql`, the Spark helper)
loads no parser; statements.py gives them to the feature's StatementSet."""

STARTS = (
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:SKEWED\s+BY|NOT\s+SKEWED|NOT\s+STORED\s+AS\s+DIRECTORIES|SET\s+SKEWED\s+LOCATION)\b",
    r"SHOW\s+SKEW\s+ON\b",
    r"CREATE\s+TABLE\b(?=[^;]*\bSKEWED\s+BY\b)",
)
