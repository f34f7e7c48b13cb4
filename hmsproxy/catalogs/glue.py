"""An AWS Glue Data Catalog as a catalog client (catalogs/client.py), through boto3's `glue` client.

Databases, tables and partitions come from GetDatabases/GetDatabase/GetTables/GetTable/GetPartitions
(paged), mapped to Hive's structs by glue_shapes. Credentials come from the AWS chain only
(environment, `aws.profile`'s files, an instance or task role): a link's properties are readable
by anyone who can DESCRIBE it, so no secret goes there. Glue's answers become the interface's
three errors: no such entity -> CatalogNotFound, denied or no credentials -> CatalogRefused naming
what to set, no answer, throttling or a server error -> CatalogUnavailable naming the endpoint.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from hmsproxy.catalogs import glue_shapes
from hmsproxy.catalogs.client import CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.glue_filter import glue_expression
from hmsproxy.protocol import partition_filter

REGION = "aws.region"
ENDPOINT = "aws.glue.endpoint"
CATALOG_ID = "aws.glue.catalog-id"
PROFILE = "aws.profile"

#: Glue's answers that mean "denied": the credentials' fault, or the policy's.
_REFUSALS = {
    "AccessDeniedException",
    "AccessDenied",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "ExpiredTokenException",
    "InvalidClientTokenId",
    "InvalidInputException",
}
_CREDENTIALS = f"AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the link's '{PROFILE}' or an instance role for the proxy"
#: One retry after a dropped or throttled call; a catalog that is down fails fast for the breaker.
_RETRIES = {"total_max_attempts": 2, "mode": "standard"}


def missing_boto3() -> str | None:
    """Why VIA 'glue' can't work here, or None."""
    try:
        import boto3  # noqa: F401
    except ImportError:
        return "VIA 'glue' needs boto3: pip install 'hmsproxy[glue]'"
    return None


@dataclass(frozen=True)
class GlueSettings:
    region: str
    endpoint: str | None = None
    catalog_id: str | None = None
    profile: str | None = None

    @classmethod
    def of(cls, properties: dict[str, str]) -> GlueSettings:
        """From a link's properties; ValueError naming the property that is missing or wrong."""
        region = (properties.get(REGION) or "").strip()
        if not region:
            raise ValueError(f"property '{REGION}' is required for VIA 'glue' (the Glue catalog's region, e.g. 'eu-west-1')")
        endpoint = (properties.get(ENDPOINT) or "").strip() or None
        if endpoint and not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"property '{ENDPOINT}' must be an http:// or https:// URL, not {endpoint!r}")
        catalog_id = (properties.get(CATALOG_ID) or "").strip() or None
        if catalog_id and not (catalog_id.isdigit() and len(catalog_id) == 12):
            raise ValueError(f"property '{CATALOG_ID}' must be a 12-digit AWS account id, not {catalog_id!r}")
        return cls(region, endpoint, catalog_id, (properties.get(PROFILE) or "").strip() or None)

    @property
    def where(self) -> str:
        """The catalog as messages and status name it, and what tells one Glue target from another: the
        profile too, as links read with other credentials must not share a connection."""
        text = f"Glue catalog {self.region}"
        if self.catalog_id:
            text += f" (account {self.catalog_id})"
        if self.endpoint:
            text += f" at {self.endpoint}"
        return f"{text} as profile {self.profile}" if self.profile else text


#: boto3 sessions by profile: a session loads Glue's service model once for every client made from it.
_sessions: dict[str | None, object] = {}
_sessions_lock = threading.Lock()


def _client(settings: GlueSettings, connect_timeout_s: float, call_timeout_s: float):
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=connect_timeout_s, read_timeout=call_timeout_s, retries=dict(_RETRIES))
    with _sessions_lock:  # boto3 sessions aren't thread-safe; the clients they make are
        session = _sessions.get(settings.profile)
        if session is None:
            session = _sessions[settings.profile] = boto3.session.Session(profile_name=settings.profile)
        return session.client("glue", region_name=settings.region, endpoint_url=settings.endpoint, config=config)


class GlueCatalog:
    """A PartitionedCatalog over one Glue Data Catalog (one region, endpoint and account)."""

    def __init__(self, settings: GlueSettings, connect_timeout_s: float, call_timeout_s: float):
        self.settings = settings
        self.description = settings.where
        self._timeouts = (connect_timeout_s, call_timeout_s)
        self._glue = None

    def open(self) -> None:
        try:
            self._glue = _client(self.settings, *self._timeouts)
        except Exception as e:  # a profile that isn't there, a bad region
            raise self._error(e, "connecting") from None

    def close(self) -> None:
        glue, self._glue = self._glue, None
        if glue is not None:
            try:
                glue.close()
            except Exception:  # closing never fails a caller
                pass

    # -- the catalog interface ---------------------------------------------------------------

    def databases(self) -> list[str]:
        return [d["Name"] for d in self._pages("get_databases", "DatabaseList", "databases")]

    def database(self, name: str):
        found = self._call("get_database", f"database '{name}'", Name=name)
        return glue_shapes.database(found["Database"])

    def tables(self, database: str) -> list[str]:
        return [t["Name"] for t in self._pages("get_tables", "TableList", f"database '{database}'", DatabaseName=database)]

    def table(self, database: str, name: str):
        found = self._call("get_table", f"table '{database}.{name}'", DatabaseName=database, Name=name)
        return glue_shapes.table(found["Table"], database)

    def partitions(self, database: str, table: str, max_parts: int = -1, filter: str | None = None) -> list:
        what = f"table '{database}.{table}'"
        try:
            expression = glue_expression(filter) if filter and filter.strip() else None
        except partition_filter.FilterError as e:
            raise CatalogRefused(f"{self.description}: partition filter {filter!r}: {e}") from None
        if filter and filter.strip() and expression is None:
            return self._filtered_here(database, table, filter, max_parts)
        extra = {"Expression": expression} if expression else {}
        found = self._pages("get_partitions", "Partitions", what, max_parts, DatabaseName=database, TableName=table, **extra)
        return [glue_shapes.partition(p, database, table) for p in found]

    # -- the calls ---------------------------------------------------------------------------

    def _filtered_here(self, database: str, table: str, hive_filter: str, max_parts: int) -> list:
        """Partitions of a filter Glue can't say (LIKE): every partition, filtered as Hive would."""
        keys = {k.name: k.type for k in self.table(database, table).partitionKeys or ()}
        try:
            keep = partition_filter.parse(hive_filter, keys)
        except partition_filter.FilterError as e:
            raise CatalogRefused(f"{self.description}: partition filter {hive_filter!r}: {e}") from None
        kept = [p for p in self.partitions(database, table) if keep(dict(zip(keys, p.values)))]
        return kept if max_parts < 0 else kept[:max_parts]

    def _request(self, what: str, kwargs: dict) -> dict:
        if self.settings.catalog_id:
            kwargs["CatalogId"] = self.settings.catalog_id
        if self._glue is None:
            raise CatalogUnavailable(f"{self.description}: closed while asking for {what}")
        return kwargs

    def _call(self, operation: str, what: str, **kwargs) -> dict:
        kwargs = self._request(what, kwargs)
        try:
            return getattr(self._glue, operation)(**kwargs)
        except Exception as e:
            raise self._error(e, what) from None

    def _pages(self, operation: str, key: str, what: str, limit: int = -1, **kwargs) -> list[dict]:
        kwargs = self._request(what, kwargs)
        if limit >= 0:
            kwargs["PaginationConfig"] = {"MaxItems": limit}
        items: list[dict] = []
        try:
            for page in self._glue.get_paginator(operation).paginate(**kwargs):
                items += page.get(key) or []
        except Exception as e:
            raise self._error(e, what) from None
        return items if limit < 0 else items[:limit]

    def _error(self, error: Exception, what: str) -> Exception:
        """The catalog interface's error for what boto3 raised while asking for `what`."""
        from botocore import exceptions as be

        where = self.description
        if isinstance(error, be.ClientError):
            code = error.response.get("Error", {}).get("Code", "")
            message = error.response.get("Error", {}).get("Message", "") or str(error)
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            if code == "EntityNotFoundException":
                return CatalogNotFound(f"{where} has no {what} ({message})")
            if code in _REFUSALS or status in (401, 403):
                hint = "" if code == "InvalidInputException" else f"; the proxy's credentials come from {_CREDENTIALS}"
                return CatalogRefused(f"{where} refused {what}: {code}: {message}{hint}")
            return CatalogUnavailable(f"{where} failed on {what}: {code or status}: {message}")
        if isinstance(error, be.NoCredentialsError | be.PartialCredentialsError):
            return CatalogRefused(f"{where}: no AWS credentials for the proxy: set {_CREDENTIALS}")
        if isinstance(error, be.ProfileNotFound):
            return CatalogRefused(f"{where}: property '{PROFILE}': {error}")
        if isinstance(error, be.BotoCoreError):  # no connection, a timeout, a dropped answer
            return CatalogUnavailable(f"{where} can't be reached ({what}): {error}")
        return CatalogUnavailable(f"{where}: {type(error).__name__}: {error}")
