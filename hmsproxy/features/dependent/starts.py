"""How hmsproxy's dependent-table statements start: regexes matched case-insensitively after leading blanks and comments.
Apart from the grammar, so that telling them from Spark SQL (`hmsproxy sql`, the Spark helper)
loads no parser; statements.py gives them to the feature's StatementSet."""

STARTS = (
    r"(?:CREATE|DROP)\s+DEPENDENT\s+TABLE\b",
    r"SHOW\s+(?:DEPENDENCIES|DEPENDENTS)\s+OF\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:ADD|DROP)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?PARTITION\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+(?:PARTITION\s*\([^)]*\)\s*)?DEPENDS\s+ON\b",
    r"ALTER\s+TABLE\s+[^\s;]+\s+SET\s+TBLPROPERTIES\b",
)
