"""Interceptors: each one looks at a call before it is routed and may refuse it."""
