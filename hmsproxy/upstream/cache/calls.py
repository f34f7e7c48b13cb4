"""A metastore call through the cache: answered from it, stored in it, or making it stale."""

from __future__ import annotations

from collections.abc import Callable

from hmsproxy.protocol.results import declared_error
from hmsproxy.routing.methods import METHOD_SPECS
from hmsproxy.upstream.cache.metadata import MetadataCache
from hmsproxy.upstream.cache.rules import read_scope, write_scopes
from hmsproxy.upstream.wire import BackendUnavailable


def through_cache(cache: MetadataCache, method: str, args, call: Callable[[], object], on_stale: Callable[[], None]):
    """`call()`'s answer, or the cache's. Writes make what they touch stale before they answer.

    `on_stale()` runs when a down metastore's call was answered from the cache (serve-stale).
    """
    spec = METHOD_SPECS[method]
    scope = read_scope(spec, args)
    if scope is None:
        if not spec.writes:
            return call()
        try:
            return call()
        finally:  # even a failed write may have changed something
            for s in write_scopes(spec, args):
                cache.invalidate(s, "write")
    key = cache.key(method, args)
    hit = cache.get(key, spec.result_cls)
    if hit is not None:
        return hit
    epoch = cache.epoch
    try:
        result = call()
    except BackendUnavailable:
        stale = cache.get(key, spec.result_cls, stale_ok=True) if cache.config.serve_stale else None
        if stale is None:
            raise
        on_stale()
        return stale
    if declared_error(result) is None:  # declared exceptions are not kept
        cache.put(key, scope, result, epoch)
    return result
