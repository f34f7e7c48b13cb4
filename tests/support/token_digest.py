"""A client that logs in with a Hive delegation token alone: pure-sasl's DIGEST-MD5 in the shape
thriftpy2's TSaslClientTransport calls (start/step/encode/decode), with the token's identifier and
password as Hadoop's clients give them (protocol/delegation_token.sasl_username/sasl_password).

`service` makes the digest-uri `<service>/default`: Hive's Java client sends `null/default`
(protocol null, server "default"), and a Hive metastore accepts nothing else.
"""

from __future__ import annotations

from hmsproxy.protocol.delegation_token import Token, sasl_password, sasl_username


class TokenDigest:
    def __init__(self, token: Token, service: str = "null"):
        from puresasl.client import SASLClient

        user, password = sasl_username(token.identifier), sasl_password(token.password)
        self._client = SASLClient("default", service, mechanism="DIGEST-MD5", username=user, password=password)

    def start(self, mechanism):
        return True, mechanism, self._client.process() or b""

    def step(self, challenge):
        return True, self._client.process(challenge) or b""

    def encode(self, data):
        return True, data  # QOP auth: frames go as they are

    def decode(self, frame):
        return True, frame[4:]  # thriftpy2 hands over the frame with its length

    def getError(self):  # noqa: N802 - thriftpy2's name
        return ""
