"""The one thing pyproject.toml cannot say with the setuptools we support: a C extension.

hmsproxy.protocol._thriftwalk finds where a Thrift value ends without decoding it (relay.py's typed
relay). It is optional: without a C compiler the package installs and those answers take the
proxy's full path instead.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("hmsproxy.protocol._thriftwalk", ["hmsproxy/protocol/_thriftwalk.c", "hmsproxy/protocol/_hits.c"], depends=["hmsproxy/protocol/_thriftwalk.h"], optional=True)])
