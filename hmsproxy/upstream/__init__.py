"""The metastores' side (upstream): a client's backend connections (session.py), each metastore's
policies composed once (stack.py), every metastore's
state, versions and connection factory (backends.py), the circuit breaker (breaker.py), the Thrift
connection to one metastore (wire.py), calls a Hive version lacks (translations.py) and the
metadata cache (cache/)."""
