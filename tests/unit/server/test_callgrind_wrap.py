"""How a node's argv is wrapped in instruction mode (pure parts of server/callgrind.py)."""

from __future__ import annotations

from pathlib import Path

from kvperf.server.callgrind import node_wrapper, with_deterministic_rehashing, wrapper_argv


def test_valgrind_prefix_counts_nothing_until_switched_on(tmp_path: Path) -> None:
    argv = wrapper_argv(tmp_path)
    assert argv[:3] == ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
    assert argv[3] == f"--callgrind-out-file={tmp_path}/callgrind.shutdown.%p"


def test_active_rehashing_is_off_unless_the_config_sets_it() -> None:
    assert with_deterministic_rehashing(["vs", "--port", "1"])[-2:] == ["--activerehashing",
                                                                         "no"]
    own = ["vs", "--activerehashing", "yes"]
    assert with_deterministic_rehashing(own) == own


def test_fixed_seed_per_node_same_every_run(tmp_path: Path) -> None:
    wrap = node_wrapper(tmp_path, fix_seed=True)
    first, second = wrap(0, ["vs"]), wrap(1, ["vs"])
    assert first[:5] == ["unshare", "--mount", "--propagation", "private", "--"]
    seed0, seed1 = Path(first[8]), Path(second[8])
    assert seed0.read_bytes() != seed1.read_bytes()  # cluster nodes get distinct node ids
    (tmp_path / "other").mkdir()
    again = node_wrapper(tmp_path / "other", fix_seed=True)(0, ["vs"])
    assert Path(again[8]).read_bytes() == seed0.read_bytes()  # every run the same
    assert len(seed0.read_bytes()) >= 20  # getRandomBytes reads 20 bytes
    assert node_wrapper(tmp_path, fix_seed=False)(0, ["vs"])[0] == "valgrind"
