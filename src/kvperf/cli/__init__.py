"""The command line: one module per subcommand; the only place that exits the process."""
