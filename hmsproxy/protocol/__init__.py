"""What a message is, on either side: the Thrift IDL (idl.py, thrift/), whole messages read as bytes
(framing.py), what thriftpy2 cannot decode (codec.py), answers copied undecoded (relay.py) and the C
walker that finds where a value ends (_thriftwalk.c); for `hmsproxy sql`, its three calls without
thriftpy2 (statement_wire.py) and thrift:// URIs (uris.py). Imports no other part of the proxy but config."""
