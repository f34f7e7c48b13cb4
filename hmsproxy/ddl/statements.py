"""What every statement is: a frozen dataclass that remembers its own text. Features define the rest."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Statement:
    #: The statement's own text in the script (without the trailing ';').
    source: str = field(default="", compare=False, kw_only=True)


#: In a refusal: the statement looked like one of hmsproxy's but its object is not (ALTER TABLE
#: ... ADD PARTITION on an ordinary table): the Spark helper hands such statements to Spark.
NOT_HMSPROXY_OBJECT = "(not one of hmsproxy's objects: run the statement in Spark or Hive)"
