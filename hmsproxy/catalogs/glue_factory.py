"""`VIA 'glue'`: a remote database or table in an AWS Glue Data Catalog (catalogs/glue.py).

Properties: `aws.region` (required: a link names its catalog itself, so it reads the same one from
every proxy whatever region their hosts' AWS settings name), `aws.glue.endpoint` (a VPC endpoint,
or a Glue-compatible server), `aws.glue.catalog-id` (another account's catalog) and `aws.profile`
(a profile of the proxy host's AWS config). No credentials: those come from the AWS chain.
"""

from __future__ import annotations

from hmsproxy.catalogs.glue import GlueCatalog, GlueSettings, missing_boto3
from hmsproxy.catalogs.metastore import catalog_metastore
from hmsproxy.config.model import MetastoreConfig


class GlueFactory:
    def validate(self, properties: dict[str, str]) -> None:
        GlueSettings.of(properties)
        why = missing_boto3()
        if why:
            raise ValueError(why)

    def where(self, properties: dict[str, str]) -> str:
        """Region, account, endpoint and profile: the target's key and its name in messages."""
        try:
            return GlueSettings.of(properties).where
        except ValueError:
            return "Glue catalog (no aws.region)"

    def metastore(self, key: str, properties: dict[str, str]) -> MetastoreConfig:
        self.validate(properties)
        settings = GlueSettings.of(properties)
        return catalog_metastore(key, settings.where, lambda connect_s, call_s: GlueCatalog(settings, connect_s, call_s))
