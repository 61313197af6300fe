"""Result rows: the metrics.json row model (versioned) built from a trial and its measurement."""
