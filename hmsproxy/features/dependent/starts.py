"""How the dependent-table statements start (ddl/starts.py says why apart from statements.py)."""

STARTS = (
    r"(?:CREATE|DROP)\s+DEPENDENT\s+TABLE\b",
    r"SHOW\s+(?:DEPENDENCIES|DEPENDENTS)\s+OF\b",
    r"SHOW\s+PARTITIONS\b",
    r"DESC(?:RIBE)?\s+(?:EXTENDED|FORMATTED)\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:ADD|DROP)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?PARTITION\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:PARTITION\s*\([^)]*\)\s*)?DEPENDS\s+ON\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+SET\s+TBLPROPERTIES\b",
)
