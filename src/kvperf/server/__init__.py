"""Server lifecycle: binaries, processes, configuration, readiness, cluster, TLS, host facts."""
