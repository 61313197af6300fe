"""One module per command's use case (asv's ``commands.<Name>.run``): the flags as given
(pipeline/request/) are checked into a request — every semantic check before any build,
server or database — and the request is run through the workflows, judged and written: an
outcome (rows, verdicts, files, exit status) comes back for the CLI to render. Library
users and tests call these modules directly and get what the CLI gets.

``checks`` holds the checks several commands share (builds, the store, ``--server-host``,
the definitions selection, --runs, --min-effect, --water-line, disturbed trials, the rate
sweep's flags).
"""
