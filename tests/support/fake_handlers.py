"""A real handler (every feature) over fake metastores, and calls made to it as a client would."""

from __future__ import annotations

import dataclasses

from hmsproxy.app import FEATURES, build_handler
from hmsproxy.config.model import AccessControlType, StoreConfig
from hmsproxy.testing import FakeConnector, FakeMetastore, args, database, fake_connect, table, unwrap
from hmsproxy.upstream.session import Session
from tests.support.federation import prefixed_config


def shop_metastore(name: str = "primary") -> FakeMetastore:
    """A fake metastore holding database `shop` with one table, `orders`."""
    fake = FakeMetastore(name)
    fake.create_database(database("shop"))
    fake.create_table(table("shop", "orders"))
    return fake


def fake_federation(
    tmp_path,
    primary: FakeMetastore,
    waggle: FakeMetastore | None = None,
    *,
    hive_version: str | None = None,
    connect: FakeConnector | None = None,
    features=FEATURES,
    **config_fields,
):
    """A handler for the PREFIXED federation of tests/support/federation.py: `primary` may create
    and write anywhere, `waggle` (prefix waggle_) as that config says. Close it when done.
    `connect`: a FakeConnector over the same fakes, to count the connections made (its `requests`).
    `features`: what it runs (build_handler's); `config_fields`: Config fields set too (audit=...)."""
    base = prefixed_config("thrift://primary:1", "thrift://waggle:1")
    ms = dataclasses.replace(base.primary, access_control_type=AccessControlType.READ_AND_WRITE_AND_CREATE, hive_version=hive_version)
    config = dataclasses.replace(base, primary=ms, store=StoreConfig(f"sqlite:///{tmp_path / 'hmsproxy.db'}"), **config_fields)
    return build_handler(
        config, features, connect=connect or fake_connect({"primary": primary, "waggle": waggle or FakeMetastore("waggle")})
    )


def call(handler, method: str, **fields):
    """The call's success, or its declared exception raised, as a Thrift client would see them."""
    session = Session(handler.backends, "test")
    try:
        return unwrap(handler.dispatch(session, method, args(method, **fields)))
    finally:
        session.close()
