"""A feature written wrong is refused when it is installed, naming itself, the bad name and the
name it probably meant: a misspelled hook or method would otherwise never run, silently."""

from __future__ import annotations

import pytest

import hmsproxy.app
from hmsproxy import cli
from hmsproxy.app import FEATURES, build_handler
from hmsproxy.pipeline.platform import Feature, FeatureError
from hmsproxy.testing import FakeMetastore
from tests.support.fake_handlers import fake_federation


class Misspelled(Feature):
    name = "misspelled"

    def on_reqest(self, call):  # meant: on_request
        return None


class UnknownMethod(Feature):
    name = "unknown_method"
    methods = frozenset({"get_table", "get_tabel"})

    def on_request(self, call):
        return None


class NotCallable(Feature):
    name = "not_callable"
    on_response = "audit"


class ResponseWithoutResult(Feature):
    name = "response_without_result"

    def on_response(self, call):  # the pipeline passes (call, result)
        return None


class UnavailableWithDefaults(Feature):
    name = "unavailable_with_defaults"

    def on_unavailable(self, call, error=None, *more):  # takes (call, error): accepted
        return None


class MethodsAsString(Feature):
    name = "methods_as_string"
    methods = "get_table"  # a string is iterable: each letter would be a method name


def installing(tmp_path, extra: type[Feature]):
    """fake_federation's handler with `extra` added after the shipped features."""
    handler = fake_federation(tmp_path, FakeMetastore("primary"))
    try:
        handler.install(extra)
    finally:
        handler.close()


def test_a_misspelled_hook_fails_at_start_naming_the_feature_and_the_hook(tmp_path):
    with pytest.raises(FeatureError) as refused:
        installing(tmp_path, Misspelled)
    message = str(refused.value)
    assert "'misspelled'" in message and "'on_reqest' is not a hook" in message and "did you mean 'on_request'?" in message


def test_a_method_not_in_the_idl_fails_at_start_naming_it_and_the_closest(tmp_path):
    with pytest.raises(
        FeatureError, match=r"'unknown_method'.*'get_tabel', which the metastore IDL does not have \(did you mean 'get_table'\?\)"
    ):
        installing(tmp_path, UnknownMethod)


@pytest.mark.parametrize(("feature", "says"), [(NotCallable, "on_response is str, not a method"), (MethodsAsString, "not str")])
def test_hooks_must_be_methods_and_methods_a_set(tmp_path, feature, says):
    with pytest.raises(FeatureError, match=says):
        installing(tmp_path, feature)


def test_a_hook_that_cannot_take_the_pipelines_arguments_fails_at_start(tmp_path):
    with pytest.raises(FeatureError, match=r"'response_without_result'.*on_response must take \(call, result\)"):
        installing(tmp_path, ResponseWithoutResult)
    installing(tmp_path, UnavailableWithDefaults)


def test_a_feature_verdict_is_per_call_unless_declared_memoizable():
    """The safe default: a new rule on the time or the client's address is asked on every call."""
    assert Feature.memoizable_verdict is False
    hooked = [cls for cls in FEATURES if any(hasattr(cls, hook) for hook in ("on_request", "on_routed"))]
    per_call = sorted(cls.name for cls in hooked if not cls.memoizable_verdict)
    assert per_call == ["notifications", "tokens"]  # the log grows between calls; how the caller authenticated


def test_build_handler_refuses_it_before_serving(tmp_path):
    handler = fake_federation(tmp_path, FakeMetastore("primary"))
    config = handler.config
    handler.close()
    with pytest.raises(FeatureError, match="on_reqest"):
        build_handler(config, (*FEATURES, Misspelled))


def test_hmsproxy_serve_reports_it_as_one_line_not_a_traceback(tmp_path, monkeypatch):
    config = tmp_path / "hmsproxy.yml"
    config.write_text(
        "primary-meta-store:\n  name: p\n  remote-meta-store-uris: thrift://127.0.0.1:1\n"
        f"store:\n  url: sqlite:///{tmp_path / 'store.db'}\n"
    )
    real = hmsproxy.app.build_handler
    monkeypatch.setattr(hmsproxy.app, "build_handler", lambda config: real(config, (*FEATURES, Misspelled)))
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--config", str(config), "--port", "0", "--pid-file", str(tmp_path / "pid")])
    assert str(stopped.value.code).startswith("hmsproxy: can't start: feature 'misspelled'")


def test_every_shipped_feature_passes_the_checks(tmp_path):
    handler = fake_federation(tmp_path, FakeMetastore("primary"))
    try:
        assert [f.name for f in handler.features] == [cls.name for cls in FEATURES]
    finally:
        handler.close()
