"""perf report parsing into the row's profile object (pure)."""

from __future__ import annotations

from kvperf.results.profile import folded_has, node_profile, parse_report

SYMBOLS = """\
# To display the perf.data header info, please use --header/--header-only options.
#
# Samples: 905  of event 'cpu-clock'
# Event count (approx.): 905905000
#
# Overhead  Symbol
# ........  ..........................
#
    34.81%  [k] finish_task_switch.isra.0
     1.66%  [.] __GI___libc_write
     7.18%  [k] _raw_spin_unlock_irqrestore
     0.55%  [.] setCommand


#
# (Tip: ...)
#
"""

DSOS = "\n".join([  # perf pads the DSO column with trailing blanks
    "# Overhead  Shared Object",
    "# ........  ................",
    "#",
    "    88.40%  [kernel.kallsyms]",
    "     7.18%  valkey-server   ",
    "     2.21%  libc.so.6       ",
    "     1.10%  module.so       ",
])


def test_symbols_are_parsed_largest_first_with_their_space() -> None:
    entries = parse_report(SYMBOLS)
    assert entries[0] == {"self_pct": 34.81, "name": "finish_task_switch.isra.0",
                          "space": "kernel"}
    assert [e["name"] for e in entries] == ["finish_task_switch.isra.0",
                                            "_raw_spin_unlock_irqrestore",
                                            "__GI___libc_write", "setCommand"]
    assert entries[-1]["space"] == "user"


def test_dsos_keep_kernel_binary_libc_and_modules_apart() -> None:
    entries = parse_report(DSOS)
    assert [(e["name"], e["self_pct"]) for e in entries] == [
        ("[kernel.kallsyms]", 88.4), ("valkey-server", 7.18), ("libc.so.6", 2.21),
        ("module.so", 1.1)]
    assert all("space" not in e for e in entries)


def test_top_limits_and_comments_and_call_graph_lines_are_skipped() -> None:
    text = SYMBOLS + "            |--1.66%--__GI___libc_write\n"
    assert len(parse_report(text, top=2)) == 2
    assert parse_report("# only comments\n\n") == []


def test_node_profile_and_folded_frames() -> None:
    node = node_profile(1, {"flamegraph": "t/perf-node1.svg"}, SYMBOLS, DSOS)
    assert node["node"] == 1 and node["top_dsos"][1]["name"] == "valkey-server"
    folded = "valkey-server;main;aeMain;processCommand;call;setCommand 1001001\n"
    assert folded_has(folded, "setCommand") and folded_has(folded, "processCommand")
    assert not folded_has(folded, "setCommandX") and not folded_has(folded, "1001001")


def test_a_wall_time_report_is_read_from_its_cpu_clock_section_only() -> None:
    text = ("# Samples: 14  of event 'cpu-clock/freq=999/'\n#\n    60.00%  [.] setCommand\n"
            "    40.00%  [k] do_epoll_wait\n\n"
            "# Samples: 24  of event 'sched:sched_switch'\n#\n   100.00%  [k] __schedule\n")
    assert [e["name"] for e in parse_report(text)] == ["setCommand", "do_epoll_wait"]


def test_dso_shares_are_the_mean_over_nodes_largest_first() -> None:
    from kvperf.results.profile import dso_shares
    a = node_profile(0, {}, SYMBOLS, DSOS)
    b = node_profile(1, {}, SYMBOLS, "    60.00%  valkey-server\n    40.01%  libc.so.6\n")
    shares = dso_shares([a, b])
    assert [e["name"] for e in shares][:3] == ["[kernel.kallsyms]", "valkey-server",
                                               "libc.so.6"]
    by_name = {e["name"]: e["self_pct"] for e in shares}
    assert by_name == {"[kernel.kallsyms]": 44.2, "valkey-server": 33.59,
                       "libc.so.6": 21.11, "module.so": 0.55}
    assert dso_shares([]) == []


def test_the_servers_resolved_executable_is_named_as_it_was_started() -> None:
    """Debian's valkey-server is a symlink to valkey-check-rdb: perf names the latter."""
    from kvperf.results.profile import with_names
    text = "    60.00%  valkey-check-rdb\n    40.00%  libc.so.6\n"
    node = with_names(node_profile(0, {}, SYMBOLS, text),
                      {"valkey-check-rdb": "valkey-server"})
    assert [e["name"] for e in node["top_dsos"]] == ["valkey-server", "libc.so.6"]
    assert node["top_dsos"][0]["self_pct"] == 60.0 and node["top_symbols"]
