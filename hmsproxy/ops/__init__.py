"""Operations: the HTTP port (metrics, health, readiness), reloads, worker processes, TLS."""
