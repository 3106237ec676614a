# kvsim: `make run` sets everything up and runs the default simulation; `make test` sets up and runs every test.
# Every step is idempotent and skipped when its inputs have not changed (stamps in .stamps/).

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# The `kvsim` command (pyproject.toml [project.scripts]), installed into the venv with the engine.
KVSIM := $(VENV)/bin/kvsim
STAMPS := .stamps
RUST_SOURCES := Cargo.toml $(shell find models -name '*.rs' -o -name Cargo.toml 2>/dev/null)
SYSTEM_TOOLS := riscv64-linux-gnu-gcc qemu-riscv64 qemu-system-riscv64
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: all setup system-packages python-env engine workloads run lint test test-rust test-python bench bench-server fuzz faults soak figures validate clean \
	peer peer-build peer-cheap fs-image

all: engine workloads

setup: system-packages python-env

# Debian packages: the riscv64 cross compiler, qemu-user (the functional reference in SE mode) and qemu-system-misc
# (qemu-system-riscv64, the reference in FS mode). Installed with apt-get when
# running as root; otherwise we say what to install.
system-packages: $(STAMPS)/system-packages
$(STAMPS)/system-packages:
	@missing=""; for t in $(SYSTEM_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages for:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      gcc-riscv64-linux-gnu qemu-user qemu-system-misc python3-venv >/dev/null || exit 1; \
	  else \
	    echo "kvsim needs:$$missing. Install them with:"; \
	    echo "  sudo apt-get install gcc-riscv64-linux-gnu qemu-user qemu-system-misc python3-venv"; exit 1; \
	  fi; \
	fi
	@command -v cargo >/dev/null || { echo "kvsim needs a Rust toolchain (cargo): see https://rustup.rs"; exit 1; }
	@mkdir -p $(STAMPS) && touch $@

# The virtual environment with the Python dependencies declared in pyproject.toml.
python-env: $(STAMPS)/python-env
$(STAMPS)/python-env: pyproject.toml | $(STAMPS)/system-packages
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q $$($(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  print(" ".join(repr(d) for d in p["dependencies"] + p["optional-dependencies"]["dev"]))' | tr -d "'")
	@mkdir -p $(STAMPS) && touch $@

# The Rust engine, built by maturin into the virtual environment as models/_engine.
engine: $(STAMPS)/engine
$(STAMPS)/engine: $(RUST_SOURCES) pyproject.toml $(STAMPS)/python-env
	@$(PY) -m models.codegen --check
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release -q
	@touch $@

# The riscv64 programs (test programs, benchmarks, the KVS server).
workloads: $(STAMPS)/system-packages
	@$(MAKE) -s -C workloads

# FS mode's image (workloads/fs/): Debian's linux-source-6.1 cross-compiled from workloads/fs/linux.config, and an
# initramfs with a static /init. Skipped when its inputs have not changed. Needs linux-source-6.1, flex, bison, bc
# and cpio (the script says so when one is missing).
fs-image: $(STAMPS)/system-packages
	@nice -n 10 bash workloads/fs/build.sh

run: engine workloads
	@$(KVSIM) run

# The house rules: rustfmt (rustfmt.toml), clippy with warnings as errors, ruff ([tool.ruff] in pyproject.toml).
# Clippy checks the release profile, so it reuses the dependencies the engine's build compiled.
lint: $(STAMPS)/python-env
	cargo fmt --all --check
	cargo clippy --workspace --release --all-targets -q -- -D warnings
	$(VENV)/bin/ruff check -q .

test: lint engine workloads test-rust test-python

test-rust: $(STAMPS)/system-packages
	cargo test --workspace --release -q

test-python: engine workloads peer-cheap
	$(PY) -m pytest -q

# The peer suite (workloads/peer/, sim-scripts/peer.py): well-known open-source programs built from Debian's source
# packages with plain `riscv64-linux-gnu-gcc -static -O2`, run under kvsim (functional and detailed) and
# qemu-riscv64 on the same files. `peer-build` builds them all (about 10 minutes on this 2-core host, then cached
# per program); `make test` builds only the cheap ones (about 4 minutes, once) and tests/test_peer.py skips the rest
# while they are absent. PEER="lua jq" runs some programs only.
PEER_CHEAP := lua minigzip bzip2 lz4 pcre2grep jq fftutil
peer-build: $(STAMPS)/system-packages
	@nice -n 10 bash workloads/peer/build.sh $(PEER)

peer-cheap: $(STAMPS)/system-packages
	@nice -n 10 bash workloads/peer/build.sh $(PEER_CHEAP)

peer: engine peer-build
	@$(PY) sim-scripts/peer.py --no-build $(PEER)

# A long fuzzing run of the decoder, the executor, the FPU and the client's response parsing (proptest; `make test`
# runs a brief one). FUZZ_CASES sets the cases per property.
FUZZ_CASES ?= 1000000
fuzz:
	PROPTEST_CASES=$(FUZZ_CASES) nice -n 10 cargo test -p kvsim-engine --release -q fuzz

# Fault injection on every write path (tests/test_faults.py: kill -9, a full tmpfs, damaged files, a killed Dask
# worker) for many rounds; `make test` runs a few. FAULT_ROUNDS rounds, FAULT_SEED the seed of the random points.
FAULT_ROUNDS ?= 20
FAULT_SEED ?= 27
faults: engine workloads
	KVSIM_FAULT_ROUNDS=$(FAULT_ROUNDS) KVSIM_FAULT_SEED=$(FAULT_SEED) nice -n 10 $(PY) -m pytest -q tests/test_faults.py

# The random-configuration soak (drivers/soak.py): valid configurations drawn from the parameters' declared ranges,
# each run briefly under a watchdog, checked for panics, hangs, the coherence and client checks and determinism.
# SOAK_MINUTES of it from seed SOAK_SEED; failures are written under results/soak/.
SOAK_MINUTES ?= 30
SOAK_SEED ?= 1
soak: engine workloads
	nice -n 10 $(PY) -m drivers.soak --minutes $(SOAK_MINUTES) --seed $(SOAK_SEED) --out results/soak

bench: engine workloads
	@$(KVSIM) bench

# 1 ms of simulated time of the quad-socket target at its highest sustained load: host seconds and peak memory.
bench-server: engine workloads
	@$(PY) sim-scripts/bench_server.py

# The sensitivity and end-to-end studies' figures, CSVs and reports under results/figures/ at the paper's
# conditions (full platform, 192 Mi items, steady-state windows) for the points that carry each conclusion; FULL=1
# for every point; ITEMS=N for a smaller data set (labelled reduced); REDUCED=1 for the 4-core share with the
# studies' own data sets (COMPARE=1 with it also measures the reduced share's error on three full-socket points
# per study, COMPARE="core_weight batching" for some studies); STUDY="end_to_end scaling" for some studies only;
# ONLY="caches.llc.size=47185920" runs only the points with those swept values (one point at a time on a small host);
# SWEEP=llc-60c-16Mi-key runs only that sweep of a study (the LLC study's other driver is drawn from its store).
# A run at the full conditions rewrites results/figures/headline.md with every full point measured so far. On a host
# with less than ~32 GiB, `make figures FULL=1 ITEMS=16777216` is the way to the points not measured here.
figures: engine workloads
	@nice -n 10 $(KVSIM) figures $(if $(FULL),--full) $(if $(REDUCED),--reduced) $(if $(ITEMS),--items $(ITEMS)) \
		$(if $(COMPARE),--compare $(filter-out 1,$(COMPARE))) $(foreach s,$(STUDY),--study $(s)) \
		$(foreach o,$(ONLY),--only $(o)) $(foreach s,$(SWEEP),--sweep $(s))

# The Xeon E5-2697 v2 runs beside the published measurements (`kvsim validate --help` for its options); ITEMS=N
# sets the data set (default the paper's 192 Mi items; a smaller one is a reduced run that says so); CORES=LIST the
# points (e.g. CORES=1,3,4,24; default every published one); CHECKPOINTS=DIR loads each point's data set once into
# DIR and restores it after (default results/checkpoints/xeon; a later run restores without loading). A 192 Mi point
# loads in 20-30 min of CPU, about 10 GB of host memory and 11-12 GB of disk the first time, then runs in about a
# minute; `make validate ITEMS=65536` is a quick reduced table.
validate: engine workloads
	@nice -n 10 $(KVSIM) validate $(if $(ITEMS),--items $(ITEMS)) $(if $(CORES),--cores $(CORES)) \
		$(if $(CHECKPOINTS),--checkpoints $(CHECKPOINTS))

clean:
	rm -rf $(STAMPS) target workloads/build models/_engine*.so
