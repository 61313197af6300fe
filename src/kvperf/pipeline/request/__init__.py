"""Requests: what each kvperf command was asked, typed and checked before any work.

The CLI maps argv to a command's flags as given (``…Flags``) and calls the command's one
checking function here, which returns a frozen request or raises UsageError/ConfigError
(exit 2): every semantic check — ranges, incompatible flags, what ``--server-host`` can
run, ``--min-effect``, the plan a side would run — happens before a build, a server or a
database connection starts. The workflows take the request and nothing else from the
command line (asv's one class per command; hyperfine's cli.rs declares, options.rs
validates).

``common`` holds the pieces several commands share (builds, the store, --server-host, the
definitions selection); ``run``, ``sides`` (compare, noise), ``bisect`` and ``stored``
(the database's commands, compare-results, doctor, suites) one request per command.
"""
