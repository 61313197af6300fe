"""Requests: what each kvperf command was asked, as plain frozen types — the bottom of
``pipeline/`` (every workflow imports them; they import no workflow).

The CLI maps argv to a command's flags as given (``…Flags``); the command's module in
pipeline/commands/ checks them into a ``…Request`` (UsageError/ConfigError, exit 2, before
any build, server or database connection); the workflows take the request and nothing else
from the command line (asv's one class per command; hyperfine's cli.rs declares,
options.rs validates).

``options`` holds the validated options a request carries (one run, disturbed trials,
definitions, module scenarios); ``common`` the pieces several commands share (builds, the
store, --server-host, the definitions selection, the rate sweep's flags); ``run``,
``sides`` (compare, noise, the sides of an interleaved run), ``bisect``, ``module_sides``
and ``stored`` (the database's commands, report, compare-results, doctor, suites) one
request per command.
"""
