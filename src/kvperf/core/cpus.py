"""CPU list syntax as taskset and /proc use it: "0-3", "0,2,4", "144-191,48-95"."""

from __future__ import annotations


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """Parse a CPU list into sorted unique CPU numbers; raise ValueError naming the bad part."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            raise ValueError(f"empty element in CPU list {text!r}")
        lo, sep, hi = part.partition("-")
        if not (lo.isdigit() and (not sep or hi.isdigit())):
            raise ValueError(f"{part!r} is not a CPU number or range in {text!r}")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            raise ValueError(f"range {part!r} runs backwards in {text!r}")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: tuple[int, ...] | list[int]) -> str:
    """Render CPU numbers compactly ("0-2,5"), the inverse of parse_cpu_list."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
