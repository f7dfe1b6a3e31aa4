# rmadht: `make demo` runs the simulator with and without the cache;
# `make test` builds and tests everything under Open MPI and MPICH.
# Both install what they need first (Debian packages when root).

SHELL := /bin/bash
MPIS ?= openmpi mpich
BUILD ?= build
JOBS ?= 2
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
export OMPI_MCA_btl_vader_single_copy_mechanism := none

.PHONY: all deps test demo bench clean $(addprefix build-,$(MPIS)) \
        $(addprefix test-c-,$(MPIS))

all: $(addprefix build-,$(MPIS))

deps:
	@bash tools/install-deps.sh

$(addprefix build-,$(MPIS)): build-%: deps
	cmake -S . -B $(BUILD)/$* -DMPI_C_COMPILER=mpicc.$* \
	      -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.$* > /dev/null
	cmake --build $(BUILD)/$* -j $(JOBS)

$(addprefix test-c-,$(MPIS)): test-c-%: build-%
	cd $(BUILD)/$* && ctest --output-on-failure -j $(JOBS)

test: $(addprefix test-c-,$(MPIS))

clean:
	rm -rf $(BUILD)
