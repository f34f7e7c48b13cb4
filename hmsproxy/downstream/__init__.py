"""The clients' side (downstream): the listener and one thread per client connection (server.py),
and where an answer relayed as bytes is written back to the client (reply_sink.py). Each call read
off a client connection goes to the pipeline (pipeline/handler.py)."""
