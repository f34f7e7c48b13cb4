"""The one thing pyproject.toml cannot say with the setuptools we support: a C extension.

hmsproxy.protocol._thriftwalk finds where a Thrift value ends without decoding it (relay.py's typed
relay), admits calls to the metastores (_gate.c) and serves shortcut hits (_hits.c). It is
required: an install whose extension does not build fails, rather than quietly turning the relay
off. Warnings are errors; HMSPROXY_CFLAGS adds flags (`make sanitize`: the sanitizers).
"""

import os
import shlex

from setuptools import Extension, setup

STRICT = ["-Wall", "-Wextra", "-Werror"]

setup(
    ext_modules=[
        Extension(
            "hmsproxy.protocol._thriftwalk",
            ["hmsproxy/protocol/_thriftwalk.c", "hmsproxy/protocol/_hits.c", "hmsproxy/protocol/_gate.c"],
            depends=["hmsproxy/protocol/_thriftwalk.h"],
            extra_compile_args=STRICT + shlex.split(os.environ.get("HMSPROXY_CFLAGS", "")),
            extra_link_args=shlex.split(os.environ.get("HMSPROXY_CFLAGS", "")),
        )
    ]
)
