"""Run drivers: what runs many simulations and makes sense of them, apart from the models themselves.

`capacity` finds the highest offered load a server sustains; `sweep` runs a design space (a local process pool or a
Dask cluster) into a resumable result store; `studies` defines the paper's sensitivity studies as sweeps.
"""
