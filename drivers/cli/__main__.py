"""`python -m drivers.cli ARGS` is `kvsim ARGS` (before the package is installed)."""

from drivers.cli.kvsim import main

raise SystemExit(main())
