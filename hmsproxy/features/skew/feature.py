"""The skew feature: skewed tables and list bucketing (the package's __init__ says where each part is).

Skew is Hive's own metadata (SkewedInfo and storedAsSubDirectories on the table's and each
partition's storage descriptor), so every Thrift client sees it; this feature adds the
statements (statements.py, runners.py) and keeps skew valid and in place against every
client (protection.py).
"""

from __future__ import annotations

from hmsproxy.features.skew.protection import METHODS, Protection
from hmsproxy.features.skew.runners import Runners
from hmsproxy.features.skew.statements import STATEMENTS
from hmsproxy.pipeline.call import Call
from hmsproxy.pipeline.platform import Feature, Platform


class Skew(Feature):
    name = "skew"
    memoizable_verdict = True  # its verdicts read only the call, the caller and its records
    statements = STATEMENTS
    methods = METHODS

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._protection = Protection(platform.client_for)

    def wants(self, spec) -> bool:
        return spec.name in self.methods or spec.creates_table or spec.alters_table

    def statement_runners(self) -> dict:
        return Runners().runners()

    def on_request(self, call: Call):
        self._protection.on_request(call)
        return None
