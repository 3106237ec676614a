"""Reference figures printed by McPAT 1.3 for its example processors (hand-copied numbers, not McPAT's files).

Source: McPAT 1.3 (HewlettPackard/mcpat) example inputs ``ProcessorDescriptionFiles/<name>.xml`` and the results
McPAT printed for them, as kept beside this project in ``../shared/data/mcpat/outputs/``:
``T1`` (Niagara1.xml), ``T2`` (Niagara2.xml), ``Alpha21364``, ``Xeon``, ``Penryn``, ``ARM_A9_2GHz``. Each row is the
"Processor" block (totals) and the "Total ..." blocks by component class: cores (with their L1s, and a private L2
where the input has one), caches (shared L2s, L3s and the directories), NoC, memory controllers, I/O (NIUs and
PCIe). Units: mm^2 and W. Leakage = subthreshold + gate.
"""

from __future__ import annotations

# processor -> (input file, area, peak dynamic, subthreshold leakage, gate leakage)
TOTALS = {
    "Niagara1": ("Niagara1.xml", 269.699, 42.5972, 8.87864, 1.11578),
    "Niagara2": ("Niagara2.xml", 262.515, 55.1088, 14.5272, 3.33333),
    "Alpha21364": ("Alpha21364.xml", 311.691, 85.8874, 0.139369, 0.00395711),
    "Xeon": ("Xeon.xml", 410.507, 98.1063, 35.1632, 1.66871),
    "Penryn": ("Penryn.xml", 92.0211, 36.7026, 8.67012, 0.604133),
    "ARM_A9_2GHz": ("ARM_A9_2GHz.xml", 5.39698, 1.6332, 0.0523094, 0.0563774),
}

# processor -> class -> (area, peak dynamic, subthreshold leakage, gate leakage); summed over McPAT's blocks of
# that class (e.g. caches = Total L2s + Total First Level Directory).
CLASSES = {
    "Niagara1": {
        "cores": (107.922, 25.2367, 5.37285, 0.747726),
        "caches": (107.195 + 14.0901, 5.30732 + 3.5751, 2.38347 + 0.287284, 0.194952 + 0.043831),
        "noc": (9.28967, 3.61212, 0.495718, 0.0861039),
        "mc": (31.2015, 4.86589, 0.339319, 0.0431706),
    },
    "Niagara2": {
        "cores": (109.896, 34.0976, 8.7111, 1.8738),
        "caches": (79.3999 + 8.59141, 8.1374 + 2.03499, 2.77828 + 0.265204, 0.562366 + 0.105242),
        "noc": (10.0461, 1.18259, 1.62858, 0.391672),
        "mc": (32.4783, 6.28473, 0.572318, 0.106637),
        "io": (15.8633 + 6.24, 1.86482 + 1.5067, 0.357626 + 0.214091, 0.183662 + 0.109948),
    },
    "Alpha21364": {
        "cores": (127.712, 51.6216, 0.0554561, 0.00345586),
        "caches": (135.613 + 1.67179, 4.76002 + 0.826596, 0.0784831 + 0.000382801, 0.000175445 + 3.06958e-05),
        "noc": (28.9377, 14.9356, 0.00280385, 0.000158855),
        "mc": (17.7563, 13.7436, 0.00224319, 0.000136259),
    },
    "Xeon": {
        "cores": (111.713, 78.5978, 24.1131, 1.49026),
        "caches": (293.281, 6.70159, 10.9824, 0.165767),
        "noc": (5.51364, 12.807, 0.0678232, 0.0126787),
    },
    "Penryn": {
        "cores": (42.8547, 29.0117, 5.85366, 0.54912),
        "caches": (48.2462, 3.63467, 2.78837, 0.0511935),
        "noc": (0.920174, 4.05622, 0.0280913, 0.0038197),
    },
    "ARM_A9_2GHz": {
        "cores": (4.84735, 1.57159, 0.0484486, 0.0501375),
        "caches": (0.535391, 0.045212, 0.00370577, 0.0060234),
        "noc": (0.014239, 0.0164048, 0.000155022, 0.000216526),
    },
}

PROCESSORS = tuple(TOTALS)


def totals(name: str) -> dict[str, float]:
    _, area, peak, sub, gate = TOTALS[name]
    return {"area_mm2": area, "peak_dynamic_W": peak, "leakage_W": sub + gate, "subthreshold_leakage_W": sub,
            "gate_leakage_W": gate}
