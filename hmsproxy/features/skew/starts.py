"""How the skew statements start (ddl/starts.py says why apart from statements.py)."""

STARTS = (
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:SKEWED\s+BY|NOT\s+SKEWED|NOT\s+STORED\s+AS\s+DIRECTORIES|SET\s+SKEWED\s+LOCATION)\b",
    r"SHOW\s+SKEW\s+ON\b",
    r"CREATE\s+TABLE\b(?=[^;]*\bSKEWED\s+BY\b)",
)
