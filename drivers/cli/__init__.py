"""The command line: `kvsim` (kvsim.py) and the code behind sim-scripts/ (one module per command)."""
