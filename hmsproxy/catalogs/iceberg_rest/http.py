"""One REST catalog client's HTTP: a requests Session, the `/v1/config` handshake (the warehouse's
`prefix` and settings), and every answer that isn't 200 turned into a catalog error:

- 404: CatalogNotFound with the caller's words for what is missing;
- 401/403: CatalogRefused naming the property to fix (after one new token, for a 401);
- no answer, a timeout, 5xx: CatalogUnavailable (the catalog is down for health and breaker);
- 409 to a commit: CatalogConflict (a requirement failed: another writer committed first);
- any other 4xx: CatalogRefused with the catalog's message.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import requests

from hmsproxy.catalogs.client import CatalogConflict, CatalogNotFound, CatalogRefused, CatalogUnavailable
from hmsproxy.catalogs.iceberg_rest.tokens import Tokens, error_message


class RestHttp:
    def __init__(self, uri: str, warehouse: str | None, tokens: Tokens, description: str, timeouts: tuple[float, float]):
        self.uri = uri.rstrip("/")
        self.warehouse = warehouse
        self.tokens = tokens
        self.description = description
        self.timeouts = timeouts  # (connect, read) seconds, as requests takes them
        self.settings: dict[str, str] = {}
        self._prefix = ""
        self._session: requests.Session | None = None

    def handshake(self) -> dict[str, str]:
        """GET /v1/config: the catalog's settings for this warehouse (defaults, then overrides), of
        which `prefix` goes in front of every later path."""
        params = {"warehouse": self.warehouse} if self.warehouse else None
        answer = self._get_json("/v1/config", params, "no configuration endpoint /v1/config (is 'uri' the catalog's base URL, before /v1?)")
        settings = {**(answer.get("defaults") or {}), **(answer.get("overrides") or {})}
        prefix = str(settings.get("prefix") or "").strip("/")
        self.settings, self._prefix = settings, ("/" + quote(prefix, safe="/")) if prefix else ""
        return settings

    def get(self, path: str, params: dict | None, missing: str) -> dict:
        """GET /v1{prefix}{path}; `missing` says what a 404 means ("no namespace 'sales'")."""
        return self._get_json(f"/v1{self._prefix}{path}", params, missing)

    def post(self, path: str, body: dict, missing: str) -> dict:
        """POST /v1{prefix}{path} with a JSON body (a commit); `missing` as for get."""
        return self._request("POST", f"/v1{self._prefix}{path}", None, missing, body)

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def _get_json(self, path: str, params: dict | None, missing: str) -> dict:
        return self._request("GET", path, params, missing)

    def _request(self, method: str, path: str, params: dict | None, missing: str, body: dict | None = None) -> dict:
        if self._session is None:
            self._session = requests.Session()
        for attempt in (1, 2):
            header = self.tokens.header(self.timeouts)
            try:
                answer = self._session.request(method, self.uri + path, params=params, json=body, headers=header, timeout=self.timeouts)
            except requests.RequestException as e:
                raise CatalogUnavailable(f"{self.description} didn't answer {method} {path}: {_short(e)}") from None
            if answer.status_code == 401 and attempt == 1 and self.tokens.expired(header):
                continue  # a token the catalog no longer takes: one more try with a new one
            break
        status = answer.status_code
        if status == 200:
            try:
                return answer.json()
            except ValueError:
                raise CatalogUnavailable(f"{self.description} answered {method} {path} with no JSON") from None
        if status == 404:
            raise CatalogNotFound(f"{self.description} has {missing}")
        if status in (401, 403):
            word = "Unauthorized" if status == 401 else "Forbidden"
            raise CatalogRefused(
                f"{self.description} answered {status} {word} ({error_message(answer)}): check property '{self.tokens.property_name}'"
            )
        if status == 409:
            raise CatalogConflict(f"{self.description} refused the commit: {error_message(answer)}")
        if status >= 500:
            raise CatalogUnavailable(f"{self.description} answered {method} {path} with {status}: {error_message(answer)}")
        raise CatalogRefused(f"{self.description} refused {method} {path} ({status}: {error_message(answer)})")


def _short(error: Exception) -> str:
    """What happened, without the layers requests wraps around it (pools, retries, adapters)."""
    text = str(error)
    for pattern in (r"(?:Read|Connect) timed out[^'\")]*", r"\[Errno -?\d+\][^'\")]*"):
        found = re.search(pattern, text)
        if found:
            return found.group(0).strip()
    return text if len(text) <= 200 else text[:197] + "..."
