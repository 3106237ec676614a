"""Global calibration factors of the power model, per component group.

The circuit models in ``power.blocks`` get the relative sizes right (capacity, ports, associativity, issue width);
their absolute level depends on layout and circuit style details the analytical model does not capture (wire
routing overhead, clock distribution, control logic, cell libraries). These factors set that level. They were
fitted once, by least squares in log space, so that McPAT 1.3's six example processors (Niagara 1 and 2, Alpha
21364, Xeon (Tulsa), Penryn, ARM Cortex-A9) land close to McPAT's printed totals — one factor per group and metric,
the same for every processor and node: no processor is special-cased and no McPAT output is an input of the model.
Technology-level leakage constants (Ioff, Igate per node) live in ``power.tech``.

Groups:

* ``l1``          the L1 instruction and data caches with their miss/fill/write-back buffers
* ``core_array``  other RAM/CAM structures inside cores (BTB, predictors, RAT, IQ, ROB, RF, LSQ, TLBs)
* ``core_logic``  logic inside cores (decoders, ALUs, FPUs, bypass, pipeline latches and control)
* ``cache``       shared caches (L2, L3 slices), their controllers, and private L2s
* ``dir``         coherence directories
* ``noc``         routers, crossbars, buses and links
* ``mc``          memory controllers (front end, transaction engine, PHY)
* ``io``          NIC and PCIe controllers on the die

Metrics: ``area``, ``dyn`` (switched capacitance), ``sub`` (subthreshold leakage width), ``gate`` (gate leakage
width).

How they were obtained (reproducible with ``sim-scripts/mcpat_compare.py --fit``): build each example with all
factors 1, sum area / peak dynamic / leakage per processor and group, and solve for the factors minimising
``sum_p (12 log(total_p / mcpat_p))^2 + sum_{p,class} (log(class_p / mcpat_class_p))^2`` plus a pull of the
factors towards a common level (settings in ``power.fit.FIT_SETTINGS``). The leakage fit also solves one multiplier per technology node (hp 180, 90, 65,
45 nm; lop), which was folded into the node's Ioff / Igate in ``power.tech``. The ``io`` group rests on one
reference (Niagara 2's NIUs and PCIe) and ``dir`` on four small directories: treat them as rough.

How far to trust them: the 15% acceptance test is in sample (the six processors the factors were fitted to). Out
of sample, measured by leaving one processor out, refitting every factor and node multiplier on the other five and
pricing it (``sim-scripts/mcpat_compare.py --cross-validate``, ``power.fit.cross_validate``), the mean absolute
errors on the totals are area 30%, peak dynamic 23%, leakage 62% (median 12%, 22%, 67%), against 7%, 6%, 1% in
sample. Worst: area +120% (Cortex-A9, the only small low-power core), peak dynamic +38% (Penryn), leakage -91%
(Cortex-A9, the only lop device). Four of the six sit at a node no other example has; their leakage then rests on
the uncalibrated ITRS-class Ioff / Igate (-60% to -91%), or, with ``--node-prior neighbours`` (the multiplier of
the nearest fitted node, as ``power.tech`` carries it to nodes without a reference), -39%, +28% and -14% for the
hp ones (leakage mean 40%). Expect errors of tens of percent on a processor unlike these six.
"""

FACTORS: dict[str, dict[str, float]] = {
    "l1": {"area": 4.23, "dyn": 1.32, "sub": 2.809, "gate": 1.475},
    "core_array": {"area": 4.79, "dyn": 2.557, "sub": 0.737, "gate": 2.082},
    "core_logic": {"area": 0.43, "dyn": 3.226, "sub": 0.499, "gate": 0.243},
    "cache": {"area": 2.37, "dyn": 5.425, "sub": 0.756, "gate": 0.029},
    "dir": {"area": 0.96, "dyn": 1.723, "sub": 1.713, "gate": 6.192},
    "noc": {"area": 2.09, "dyn": 2.601, "sub": 2.178, "gate": 1.722},
    "mc": {"area": 1.78, "dyn": 26.8, "sub": 2.219, "gate": 1.512},
    "io": {"area": 1.37, "dyn": 2.337, "sub": 0.154, "gate": 2.855},
}

# Arrays built from long-channel devices where timing allows (McPAT's "longer_channel_device"): subthreshold
# leakage of cells falls by this factor (longer gates raise Vth; ~2x lower Ioff at ~10% delay cost).
LONG_CHANNEL_LEAK = 0.5
