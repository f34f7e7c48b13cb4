"""Between the two sides: what happens to one call. handler.py is the error boundary and the call's
way (local, fan-out, routed); call.py what a hook sees; fastpath.py the one decision of how a call
is answered (shortcut -> relay -> metadata cache -> full path); fanout.py calls to every metastore;
platform.py what a feature is and is given; internal_client.py calls features make as a user;
errors.py the proxy's refusals as the method's declared exceptions."""
