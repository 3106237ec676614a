"""The classes the power model groups its components into, on the die and off it (shared by the model and its
report, so neither imports the other for them)."""

ON_DIE_CLASSES = ("cores", "caches", "noc", "mc", "io", "other")   # other: the die beyond them (power.die)
OFF_DIE_CLASSES = ("dram", "nic")
