"""The bearer token a REST catalog's requests carry: a fixed `token`, or one obtained with OAuth2
client credentials (`credential` = 'client-id:secret' or 'secret', `scope`) from the token endpoint.

One Tokens is shared by every connection to a target (factory.py), so a target logs in once, not
per connection or call. A token is fetched again shortly before it expires (`expires_in`), and once
when the catalog answers 401 to it (`expired`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import requests

from hmsproxy.catalogs.client import CatalogRefused, CatalogUnavailable

DEFAULT_SCOPE = "catalog"
#: A token is renewed this long (or a tenth of its lifetime, if shorter) before it expires.
RENEW_AHEAD_S = 60.0


class Tokens:
    def __init__(
        self,
        token_uri: str,
        *,
        credential: str | None = None,
        token: str | None = None,
        scope: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.token_uri = token_uri
        self._credential, self._scope = credential, scope or DEFAULT_SCOPE
        self._token, self._renew_at = token, None
        self._clock = clock
        self._lock = threading.Lock()
        self._session: requests.Session | None = None

    @property
    def property_name(self) -> str:
        """The link property whose value a refusal is about: what the user should fix."""
        return "credential" if self._credential else "token" if self._token else "credential' or 'token"

    def header(self, timeouts: tuple[float, float]) -> dict[str, str]:
        """The Authorization header for a request (none without credential or token)."""
        with self._lock:
            if self._credential and (self._token is None or (self._renew_at is not None and self._clock() >= self._renew_at)):
                self._token, self._renew_at = self._login(timeouts)
            token = self._token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def expired(self, used: dict[str, str]) -> bool:
        """The catalog refused the token in header `used`: forget it. True if a new one can be had
        (client credentials), so the request is worth one more try."""
        with self._lock:
            if self._credential and used.get("Authorization") == f"Bearer {self._token}":
                self._token = None
            return bool(self._credential)

    def close(self) -> None:
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            session.close()

    def _login(self, timeouts: tuple[float, float]) -> tuple[str, float | None]:
        client_id, _, secret = self._credential.rpartition(":")
        form = {"grant_type": "client_credentials", "client_secret": secret, "scope": self._scope}
        if client_id:
            form["client_id"] = client_id
        if self._session is None:
            self._session = requests.Session()
        try:
            answer = self._session.post(self.token_uri, data=form, timeout=timeouts)
        except requests.RequestException as e:
            raise CatalogUnavailable(f"token endpoint {self.token_uri} didn't answer: {e}") from None
        if answer.status_code >= 500:
            raise CatalogUnavailable(f"token endpoint {self.token_uri} answered {answer.status_code}")
        if answer.status_code != 200:
            raise CatalogRefused(
                f"token endpoint {self.token_uri} refused the client credentials ({answer.status_code} {error_message(answer)}): "
                "check properties 'credential' and 'scope'"
            )
        try:
            body = answer.json()
            token = body["access_token"]
        except (ValueError, KeyError):
            raise CatalogRefused(f"token endpoint {self.token_uri} answered no access_token") from None
        lifetime = body.get("expires_in")
        if lifetime is None:
            return token, None
        ahead = min(RENEW_AHEAD_S, float(lifetime) / 10)
        return token, self._clock() + float(lifetime) - ahead


def error_message(answer: requests.Response) -> str:
    try:
        body = answer.json()
    except ValueError:
        return answer.reason or ""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)
        return str(body.get("error_description") or inner or body)
    return str(body)
