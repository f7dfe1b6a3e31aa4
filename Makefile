# rmadht: `make demo` runs the simulator with and without the cache;
# `make test` builds and tests everything under Open MPI and MPICH.
# Both install what they need first (Debian packages when root, Python
# packages into .venv/<mpi>).

SHELL := /bin/bash
MPIS ?= openmpi mpich
BUILD ?= build
JOBS ?= 2
VENV := .venv
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
export OMPI_MCA_btl_vader_single_copy_mechanism := none

BUILDS := $(addprefix build-,$(MPIS))
VENVS := $(addprefix venv-,$(MPIS))
C_TESTS := $(addprefix test-c-,$(MPIS))
PY_TESTS := $(addprefix test-py-,$(MPIS))
ASAN_TESTS := $(addprefix test-asan-,$(MPIS))
HOSTS_TESTS := $(addprefix test-hosts-,$(MPIS))
SCALE_HOSTS_TESTS := $(addprefix test-scale-hosts-,$(MPIS))

.PHONY: all deps test test-model demo bench bench-hosts clean $(BUILDS) $(VENVS) $(C_TESTS) $(PY_TESTS) \
        $(ASAN_TESTS) test-fuzz $(HOSTS_TESTS) test-hosts test-docs build-smpi test-smpi bench-scale \
        $(SCALE_HOSTS_TESTS) test-scale-hosts test-poet

all: $(BUILDS)

# The Debian packages of every group in tools/install-deps.sh; each target
# below asks only for the groups it needs (deps-build, deps-fuzz, ...).
deps:
	@bash tools/install-deps.sh

deps-%:
	@bash tools/install-deps.sh $*

$(BUILDS): build-%: deps-build
	cmake -S . -B $(BUILD)/$* -DMPI_C_COMPILER=mpicc.$* \
	      -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.$* > /dev/null
	cmake --build $(BUILD)/$* -j $(JOBS)

$(VENVS): venv-%: deps-build
	@bash tools/make-venv.sh $*

$(C_TESTS): test-c-%: build-%
	cd $(BUILD)/$* && ctest --output-on-failure -j $(JOBS)

# The bindings' tests: every rank runs the same pytest session; mpiexec
# fails if any rank does.  The simulator's tests and the documented examples
# run in one plain pytest, launching mpiexec themselves where they need it.
$(PY_TESTS): test-py-%: venv-%
	for n in 1 2; do \
	  echo "== pytest tests/python/bindings on $$n rank(s), $*"; \
	  mpiexec.$* -n $$n $(VENV)/$*/bin/python -m pytest -q --color=no -p no:cacheprovider \
	    tests/python/bindings || exit 1; \
	done
	RTSIM_MPIEXEC=mpiexec.$* $(VENV)/$*/bin/python -m pytest -q --color=no \
	  -p no:cacheprovider tests/python/rtsim tests/python/examples

# The C tests again with AddressSanitizer + UBSan (cmake/sanitize.cmake);
# any report fails the test.  script_install is left out: it links programs
# against the installed library with the plain mpicc, which lacks the
# sanitizer runtimes, and checks packaging, which test-c-* covers.
$(ASAN_TESTS): test-asan-%: deps-build
	cmake -S . -B $(BUILD)/asan-$* -DRMADHT_SANITIZE=ON -DMPI_C_COMPILER=mpicc.$* \
	      -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.$* > /dev/null
	cmake --build $(BUILD)/asan-$* -j $(JOBS)
	cd $(BUILD)/asan-$* && ctest --output-on-failure -j $(JOBS) -E '^script_'

# Every fuzz target for FUZZ_SECONDS from its seed corpus (fuzz/run.sh).
FUZZ_SECONDS ?= 30
test-fuzz: deps-build deps-fuzz
	cmake -S . -B $(BUILD)/fuzz -DRMADHT_FUZZ=ON -DCMAKE_C_COMPILER=clang \
	      -DRMADHT_TESTS=OFF -DRMADHT_BENCH=OFF -DMPI_C_COMPILER=mpicc.openmpi \
	      -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.openmpi > /dev/null
	cmake --build $(BUILD)/fuzz -j $(JOBS)
	bash fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# The multi-rank C tests and the Python MPI tests between two emulated
# hosts (tools/hosts/), 1 and 2 ranks per host: Open MPI with osc/pt2pt, the
# one-sided component that works over TCP, and once with Debian's defaults,
# where rmadht_create must fail and name the remedy.  Skipped, saying why,
# where this machine cannot make network namespaces (it needs root).
test-hosts-openmpi: build-openmpi venv-openmpi deps-hosts
	bash tools/hosts/test.sh $(BUILD) openmpi default 1
	RMADHT_HOSTS_PYTHON=$(CURDIR)/$(VENV)/openmpi/bin/python \
	  bash tools/hosts/test.sh $(BUILD) openmpi pt2pt 1 2
test-hosts-mpich: build-mpich venv-mpich deps-hosts
	RMADHT_HOSTS_PYTHON=$(CURDIR)/$(VENV)/mpich/bin/python \
	  bash tools/hosts/test.sh $(BUILD) mpich - 1 2
test-hosts: $(HOSTS_TESTS)

# Beyond four real ranks: every multi-rank test at 8 and 16 ranks (2 and 4
# per host) on 4 emulated hosts, oversubscribing this 2-core machine, each
# run bounded (tools/hosts/test.sh).  Past four ranks some tests make fewer
# calls per rank.
SCALE_HOSTS_CONFIG_openmpi := pt2pt
SCALE_HOSTS_CONFIG_mpich := -
$(SCALE_HOSTS_TESTS): test-scale-hosts-%: build-% deps-hosts
	RMADHT_HOSTS_SET=rmadht-scale RMADHT_HOSTS_N=4 RMADHT_HOSTS_TIMEOUT=420 \
	  bash tools/hosts/test.sh $(BUILD) $* $(SCALE_HOSTS_CONFIG_$*) 2 4
test-scale-hosts: $(SCALE_HOSTS_TESTS)

# POET 0.4 built against the installed rmadht as docs/howto/poet.md says,
# and run against POET's own DHT (tools/poet/test.sh): where POET's sources
# are (../shared/poet/poet-0.4-src.tar.gz, or RMADHT_POET_SRC), else
# skipped, saying why.  Installs R, Rcpp, RInside and Eigen itself (deps group poet).
test-poet: build-openmpi
	bash tools/poet/test.sh $(BUILD) openmpi

# rmadht-bench built with SimGrid's smpicc (tools/scale/), and a 64-rank
# simulated smoke run that checks exact totals (about a minute).
build-smpi: deps-build deps-smpi
	bash tools/scale/build.sh $(BUILD)/smpi
test-smpi: build-smpi
	bash tools/scale/smoke.sh $(BUILD)/smpi
	@out=$$(SCALE_WTIME=abc bash tools/scale/run.sh $(BUILD)/smpi $(BUILD)/smpi/bad 64 2>&1); \
	  [ $$? -eq 2 ] && [ ! -e $(BUILD)/smpi/bad ] && echo "$$out" | grep -q "SCALE_WTIME must be seconds" && \
	  echo "tools/scale/run.sh refuses SCALE_WTIME=abc"
	@out=$$(python3 tools/scale/table.py --report docs/benchmarks/scale.md 2>&1); \
	  [ $$? -eq 1 ] && echo "$$out" | grep -q "give --plot PNG" && \
	  echo "tools/scale/table.py refuses --report without --plot"

test: test-docs test-model $(C_TESTS) $(PY_TESTS) $(ASAN_TESTS) test-fuzz $(HOSTS_TESTS) \
      test-smpi $(SCALE_HOSTS_TESTS) test-poet

# Every relative link and anchor of the Markdown files, the README's length
# and quick starts, and the docs/ paths the code names (tools/check_links.py).
test-docs: deps-build
	python3 tools/check_links.py

# The Spin model of the lock-free slot protocol (docs/explanation/lockfree-protocol.md).
test-model: deps-build deps-model
	@bash model/check.sh

demo: venv-openmpi
	@bash tools/demo.sh $(VENV)/openmpi

bench: build-openmpi build-mpich
	@bash tools/bench.sh $(BUILD)

# rmadht between two emulated hosts (tools/hosts/bench.sh), about 20
# minutes: every mode on RMA, single and batch, under Open MPI (osc/pt2pt)
# and MPICH; JSON lines in bench-results/hosts/.  Not part of `make test`.
# BENCH_HOSTS_ARGS go to every rmadht-bench run.
# MPIDHT=DIR, a checkout of sobc/MPI-DHT, adds the reference's runs first,
# and then single lock-free operations against the reference's, medians of
# 3 runs back to back at 1 and 2 ranks per host (tools/hosts/single.sh,
# 15 more minutes).
BENCH_HOSTS_ARGS ?= --scale 0.2
bench-hosts: build-openmpi build-mpich deps-hosts
	@RMADHT_REFERENCE_SRC=$(MPIDHT) bash tools/hosts/bench.sh $(BUILD) $(BENCH_HOSTS_ARGS); \
	rc=$$?; if [ -n "$(MPIDHT)" ]; then \
	  bash tools/hosts/single.sh $(BUILD) $(MPIDHT) 3 1 || rc=1; \
	  bash tools/hosts/single.sh $(BUILD) $(MPIDHT) 3 2 || rc=1; fi; exit $$rc

# Up to 1024 ranks simulated (tools/scale/run.sh, docs/benchmarks/scale.md):
# every mode, single and batch 128, uniform and Zipf, on InfiniBand-like
# and Ethernet-like fat trees of SCALE_RANKS hosts; with MPIDHT=DIR (a
# checkout of sobc/MPI-DHT) the reference's driver too.  JSON lines in
# bench-results/scale/, then the table and docs/benchmarks/scale.png.
# Hours at 1024 ranks on a busy 2-core machine; not part of `make test`.
SCALE_RANKS ?= 64 256 1024
bench-scale: deps-build deps-smpi venv-openmpi  # the venv: matplotlib, for the plot
	MPIDHT=$(MPIDHT) bash tools/scale/build.sh $(BUILD)/smpi
	bash tools/scale/run.sh $(BUILD)/smpi bench-results/scale $(SCALE_RANKS)
	$(VENV)/openmpi/bin/python tools/scale/table.py bench-results/scale/scale.jsonl \
	  --plot docs/benchmarks/scale.png

clean:
	rm -rf $(BUILD) $(VENV) out
