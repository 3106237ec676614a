"""sim-scripts/fs_capacity.py's search: a first probe that sustains is raised until it loses frames, so a core
faster than the assumed first probe (an A15 in SE mode) still gets its capacity, and a server that never loses
frames is an error rather than a capacity."""
from drivers import capacity as cap
from drivers import sim_script


def load_script():
    return sim_script.load("fs_capacity")


def server(capacity_mpps: float):
    """A fake server that answers up to its capacity and drops the rest."""
    offered = []

    def evaluate(rate: float) -> cap.Outcome:
        offered.append(rate)
        return cap.Outcome(loss=max(0.0, 1 - capacity_mpps / rate), answered_mpps=min(rate, capacity_mpps))
    return evaluate, offered


def test_a_capacity_above_the_first_probe_is_found_by_raising_it():
    fsc = load_script()
    evaluate, offered = server(3.0)          # above 0.5 and 2.0 Mpps per hart: two raises
    res = fsc.search_from_above(evaluate, 1, 0.05, None)
    assert offered[:2] == [0.5, 0.5 * fsc.RAISE_HIGH]
    assert res.best is not None and not res.line_limited
    assert 3.0 / 1.05 <= res.best.offered_mpps <= 3.0
    assert len(res.probes) == len(offered)       # the table's probe count includes the raised first probes


def test_a_capacity_below_the_first_probe_needs_no_raise():
    fsc = load_script()
    evaluate, offered = server(0.03)
    res = fsc.search_from_above(evaluate, 2, 0.05, None)
    assert offered[0] == 1.0 and max(offered) == 1.0
    assert 0.03 / 1.05 <= res.best.offered_mpps <= 0.03


def test_a_server_that_never_loses_frames_stays_line_limited():
    fsc = load_script()
    evaluate, offered = server(1e9)
    res = fsc.search_from_above(evaluate, 1, 0.05, None)
    assert res.line_limited
    assert len(offered) == fsc.MAX_RAISES + 1
    assert len(res.probes) == len(offered)       # the raised first probes are in the record too


def args_for(platform: str, **kw):
    import argparse
    base = dict(platform=platform, latency="10ns", flash_read="20us", items=1024, requests=100, value_size=64,
                harts="1", modes="fs,se")
    return argparse.Namespace(**{**base, **kw})


def test_both_modes_run_each_stack_at_the_same_clock_and_memory():
    """The comparison is of network stacks: FS and SE must give the stack the same cores, clock and memory (session
    12's Mercury A15 FS probes ran at 1 GHz against SE's 1.5 GHz)."""
    fsc = load_script()
    for platform in fsc.STACKS:
        args = args_for(platform)
        fs = fsc.fs_system(platform, 2, args, 10, detailed=True)
        se = fsc.se_system(platform, 2, args, 1.0)
        assert fs.core.clock == se.core.clock, platform
        assert fs.memory.kind == se.memory.kind, platform
        assert fs.memory.flash.read_latency == se.memory.flash.read_latency, platform
        assert fs.memory.dram3d.access_latency == se.memory.dram3d.access_latency, platform
    assert fsc.fs_system("mercury-a15", 1, args_for("mercury-a15"), 10, detailed=True).core.clock == 1_500_000_000
    iridium = fsc.se_system("iridium-a7", 1, args_for("iridium-a7", flash_read="10us"), 1.0)
    assert iridium.memory.kind == "flash" and iridium.memory.flash.read_latency == 10_000_000


def test_a_hart_count_the_stack_cannot_have_is_refused_before_any_simulation():
    import pytest
    fsc = load_script()
    with pytest.raises(SystemExit, match="KeyVault cores = 1"):
        fsc.check_args(args_for("keyvault", harts="1,2"))
    with pytest.raises(SystemExit, match="--harts"):
        fsc.check_args(args_for("mercury-a7", harts="one"))
    assert fsc.check_args(args_for("keyvault", harts="2,4")) == ([2, 4], ["fs", "se"])


def test_a_platform_replaces_only_its_own_section():
    fsc = load_script()
    a7 = "## mercury-a7: Mercury A7\n\n| A7 rows |\n"
    kv = "## keyvault: KeyVault\n\n| old KV rows |\n"
    text = fsc.replace_section(fsc.replace_section("", "mercury-a7", a7), "keyvault", kv)
    assert text.startswith(fsc.TITLE) and text.index("A7 rows") < text.index("old KV rows")
    again = fsc.replace_section(text, "keyvault", "## keyvault: KeyVault\n\n| new KV rows |\n")
    assert "old KV rows" not in again and "new KV rows" in again and "A7 rows" in again
    # a platform whose name starts another's (mercury-a7 / mercury-a15) keeps its own section
    both = fsc.replace_section(again, "mercury-a15", "## mercury-a15: A15\n\n| A15 rows |\n")
    assert "A7 rows" in both and "A15 rows" in both
    assert fsc.replace_section(both, "mercury-a7", a7) == both


def test_each_stacks_core_count_is_the_densest_its_config_allows():
    """The per-stack scaling uses the configs' own limits: the stack builds at that many cores, not one more."""
    import pytest
    fsc = load_script()
    for platform, spec in fsc.STACKS.items():
        fsc.se_system(platform, spec.cores, args_for(platform), 1.0).validate()
        with pytest.raises(ValueError):
            fsc.se_system(platform, spec.cores + 1, args_for(platform), 1.0).validate()
