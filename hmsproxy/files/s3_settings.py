"""pyarrow's S3FileSystem arguments for one bucket, from S3A's keys (per bucket first) and the AWS chain.

Hadoop key (or fs.s3a.bucket.NAME.KEY)      -> pyarrow S3FileSystem
  fs.s3a.endpoint (host[:port] or URL)      -> endpoint_override, scheme (fs.s3a.connection.ssl.enabled)
  fs.s3a.endpoint.region                    -> region (us-east-1 for a non-AWS endpoint when unset)
  fs.s3a.path.style.access                  -> force_virtual_addressing (its opposite, for an endpoint)
  fs.s3a.access.key / secret.key / session.token -> the keys; unset: the AWS chain (environment,
                                               profile, instance role), which pyarrow follows itself
  fs.s3a.connection.establish.timeout (ms)  -> connect_timeout (5 s when unset: errors stay quick)
  fs.s3a.attempts.maximum                   -> attempts per request (3 when unset; the first check
                                               of a bucket makes one, so a dead endpoint is quick)
  hmsproxy.s3.request.checksums             -> AWS_REQUEST_CHECKSUM_CALCULATION at the client's creation

S3-compatible stores (s3proxy, Ceph, …) reject the checksums newer AWS SDKs send by default, so
they are sent only when required unless the endpoint is AWS's or the key says otherwise; an
AWS_REQUEST_CHECKSUM_CALCULATION in the environment is left as the user set it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

from hmsproxy.files.hadoop_conf import flag, per_bucket

CHECKSUMS_KEY = "hmsproxy.s3.request.checksums"
CHECKSUM_ENV = "AWS_REQUEST_CHECKSUM_CALCULATION"
DEFAULT_CONNECT_TIMEOUT_S = 5.0
#: Attempts per request (the AWS SDK's standard retry); S3A's own default (5, with long back-offs)
#: is not taken over: a store that stopped answering would hold a commit for a minute.
DEFAULT_ATTEMPTS = 3


@dataclass(frozen=True)
class S3Settings:
    bucket: str
    options: dict = field(default_factory=dict)  # keyword arguments of pyarrow.fs.S3FileSystem
    #: the AWS_REQUEST_CHECKSUM_CALCULATION the client is made with (None: the environment's, as is)
    checksum_calculation: str | None = None
    endpoint: str = ""  # as configured, for messages ("" : AWS)
    keys_from: str = "the AWS credential chain"  # where the keys came from, for messages
    attempts: int = DEFAULT_ATTEMPTS  # per request, the first included


def is_aws(endpoint: str) -> bool:
    host = urlparse(endpoint if "://" in endpoint else f"//{endpoint}").hostname or ""
    return host == "" or host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn")


def s3_settings(bucket: str, conf: dict[str, str], environ: dict[str, str]) -> S3Settings:
    def get(key: str, default: str | None = None) -> str | None:
        return per_bucket(conf, bucket, key, default)

    options: dict = {}
    endpoint = get("endpoint", "") or ""
    if endpoint:
        parsed = urlparse(endpoint if "://" in endpoint else f"//{endpoint}")
        ssl = flag(get("connection.ssl.enabled"), True)
        options["scheme"] = parsed.scheme or ("https" if ssl else "http")
        options["endpoint_override"] = parsed.netloc
        if not is_aws(endpoint):
            options["force_virtual_addressing"] = not flag(get("path.style.access"), False)
    region = get("endpoint.region") or get("region")
    if region:
        options["region"] = region
    elif endpoint and not is_aws(endpoint):
        options["region"] = "us-east-1"  # what S3-compatible stores accept; saves a region look-up
    access, secret = get("access.key"), get("secret.key")
    keys_from = "the AWS credential chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, an instance role)"
    if access and secret:
        options["access_key"], options["secret_key"] = access, secret
        token = get("session.token")
        if token:
            options["session_token"] = token
        keys_from = f"fs.s3a.bucket.{bucket}.access.key" if conf.get(f"fs.s3a.bucket.{bucket}.access.key") else "fs.s3a.access.key"
    timeout = get("connection.establish.timeout")
    options["connect_timeout"] = _seconds(timeout) if timeout else DEFAULT_CONNECT_TIMEOUT_S
    attempts = get("attempts.maximum")
    return S3Settings(
        bucket,
        options,
        _checksums(conf.get(CHECKSUMS_KEY), endpoint, environ),
        endpoint,
        keys_from,
        max(1, int(attempts)) if attempts and attempts.strip().isdigit() else DEFAULT_ATTEMPTS,
    )


def _checksums(setting: str | None, endpoint: str, environ: dict[str, str]) -> str | None:
    if setting is not None and setting.strip():
        return "WHEN_SUPPORTED" if flag(setting, True) else "WHEN_REQUIRED"
    if environ.get(CHECKSUM_ENV):
        return None  # the user's own choice
    return None if is_aws(endpoint) else "WHEN_REQUIRED"


def _seconds(value: str) -> float:
    """Hadoop durations: plain numbers are milliseconds; suffixes s/m/ms are honoured."""
    text = value.strip().lower()
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix) and text[: -len(suffix)].strip().replace(".", "", 1).isdigit():
            return float(text[: -len(suffix)]) * scale
    return float(text) / 1000.0
