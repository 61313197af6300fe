"""The row's ``profile`` object from ``perf report`` text (pure).

``perf report --stdio --no-children --sort sym`` prints one line per symbol, ``  12.34%
[.] setCommand`` (``[.]`` user space, ``[k]`` kernel); ``--sort dso`` prints ``  40.00%
valkey-server``. Comment lines start with ``#``. The top entries are kept by self CPU. A
wall-time recording has a second section (``# Samples: … of event 'sched:sched_switch'``);
only the first, cpu-clock, is read.
"""

from __future__ import annotations

import re

from kvperf.results.records import ProfileEntry, ProfileNode

TOP = 15
_LINE = re.compile(r"^\s*(?P<pct>\d+(?:\.\d+)?)%\s+(?P<rest>\S.*?)\s*$")
_SYM = re.compile(r"^\[(?P<space>[.k])\]\s+(?P<name>.+)$")


def parse_report(text: str, top: int = TOP) -> list[ProfileEntry]:
    """``[{"name", "self_pct", ["space"]}]`` of a perf report, largest first."""
    entries: list[ProfileEntry] = []
    sections = 0
    for line in text.splitlines():
        if line.startswith("# Samples:"):
            sections += 1
        if sections > 1:
            break
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if not match:
            continue
        entry = ProfileEntry(self_pct=float(match["pct"]))
        sym = _SYM.match(match["rest"])
        if sym:
            entry["name"] = sym["name"]
            entry["space"] = "kernel" if sym["space"] == "k" else "user"
        else:
            entry["name"] = match["rest"]
        entries.append(entry)
    entries.sort(key=lambda e: -e["self_pct"])
    return entries[:top]


def node_profile(node: int, files: dict[str, str], symbols_text: str,
                 dsos_text: str) -> ProfileNode:
    """One node's part of the profile: its files and top symbols and DSOs."""
    return {"node": node, "files": files, "top_symbols": parse_report(symbols_text),
            "top_dsos": parse_report(dsos_text)}


def with_names(node: ProfileNode, names: dict[str, str]) -> ProfileNode:
    """The node with its DSOs renamed by ``names`` (the server's resolved executable → the
    name it was started as: perf_record.started_as)."""
    dsos = [ProfileEntry(**{**e, "name": names.get(e["name"], e["name"])})
            for e in node.get("top_dsos", [])]
    return {**node, "top_dsos": dsos}


def subject_nodes(nodes: list[ProfileNode]) -> list[ProfileNode]:
    """The nodes a profile is about: a client harness's part when the trial ran one (the
    client is the subject; the server is the same for every client), else the servers'."""
    clients = [n for n in nodes if n.get("role") == "client"]
    return clients or nodes


def dso_shares(nodes: list[ProfileNode]) -> list[ProfileEntry]:
    """The share of on-CPU samples per shared object over a trial's nodes: each DSO's mean
    self % (a node without it counts 0), largest first — the row's ``profile.dsos``."""
    if not nodes:
        return []
    totals: dict[str, float] = {}
    for node in nodes:
        for entry in node.get("top_dsos", []):
            totals[entry["name"]] = totals.get(entry["name"], 0.0) + entry["self_pct"]
    shares = [ProfileEntry(name=name, self_pct=round(total / len(nodes), 2))
              for name, total in totals.items()]
    return sorted(shares, key=lambda e: (-e["self_pct"], e["name"]))


def folded_has(folded_text: str, function: str) -> bool:
    """Whether any folded stack has ``function`` as a frame."""
    return any(function in line.rsplit(" ", 1)[0].split(";")
               for line in folded_text.splitlines())
