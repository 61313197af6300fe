"""What ``--profile`` adds to a client harness's run so perf can name its frames.

perf samples the harness's whole process tree from its exec (server/perf_record.py
``launch_argv``). Native code (Go, C, a library's Rust or C core) is named from its symbols;
a JIT's code is named only from the ``/tmp/perf-PID.map`` file the runtime writes when asked:
Node.js with ``--perf-basic-prof``, the JVM with ``-XX:+DumpPerfMapAtExit`` (frame pointers
kept by ``-XX:+PreserveFramePointer``), CPython 3.12+ with ``PYTHONPERFSUPPORT=1`` (3.11 shows
the interpreter's own frames: ``_PyEval_EvalFrameDefault``). Ruby's YJIT on Debian's Ruby 3.1
writes no map: its frames stay the interpreter's. After perf script has read them, the maps
of the profiled processes are moved into the trial's directory, never left in /tmp.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path

MAP_DIR = Path("/tmp")
_APPENDED = {"node": ("NODE_OPTIONS", "--perf-basic-prof"),
             "java": ("JAVA_TOOL_OPTIONS", "-XX:+PreserveFramePointer "
                      "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit")}
_SET = {"python": ("PYTHONPERFSUPPORT", "1")}
# a sample's header line in perf script's text: "comm  PID[/TID] [CPU] time: …"
_SAMPLE = re.compile(r"^\S.*?\s(\d+)(?:/\d+)?\s+(?:\[\d+\]\s+)?\d+\.\d+:")


def runtime_env(language: str, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with what makes ``language``'s runtime write a perf map (pure)."""
    out = dict(env)
    if language in _APPENDED:
        key, flags = _APPENDED[language]
        out[key] = f"{out[key]} {flags}" if out.get(key) else flags
    if language in _SET:
        key, value = _SET[language]
        out[key] = value
    return out


def sampled_pids(script_text: str) -> set[int]:
    """The pids of perf script's samples (pure)."""
    return {int(m.group(1)) for line in script_text.splitlines()
            if (m := _SAMPLE.match(line))}


def keep_maps(pids: set[int], dest: Path, map_dir: Path = MAP_DIR) -> list[Path]:
    """Move the perf maps of ``pids`` (profiled processes, all exited) into ``dest``."""
    kept = []
    for pid in sorted(pids):
        found = map_dir / f"perf-{pid}.map"
        if found.is_file():
            kept.append(Path(shutil.move(str(found), dest / found.name)))
    return kept
