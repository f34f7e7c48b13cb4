"""Skewed tables and list bucketing (../shared/design/hive-list-bucketing.md).

feature.py: the feature (hooks); statements.py + ddl.lark + runners.py: ALTER TABLE ...
SKEWED BY and friends, SHOW SKEW; rules.py: what valid skew is; layout.py: the record the
layout job (jobs/skew_layout.py) leaves on each partition it laid out.
"""
