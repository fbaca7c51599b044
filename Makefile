# gpusort: PostgreSQL extension that sorts on NVIDIA GPUs (PGXS build).
#
#   make                      build gpusort.so (with CUDA when nvcc is found)
#   make GPUSORT_CUDA=no      build the CPU-only library
#   make install              install into the PostgreSQL that pg_config names
#   make installcheck         run the regression suites against a server
#   make prove_installcheck   run the TAP tests (test/t/*.pl), not as root
#
# PG_CONFIG picks the PostgreSQL to build against; NVCC the CUDA compiler.
# CUDA_ARCH the GPU code: by default (cuda/arch.mk) device code for every
# architecture that NVCC builds from sm_75 (Turing) up, plus PTX of the
# newest for GPUs newer still, in one library; an override builds only what
# it names, e.g. for one GPU, or PTX alone that the driver compiles:
#   make CUDA_ARCH="-gencode arch=compute_90,code=sm_90"
#   make CUDA_ARCH="-gencode arch=compute_80,code=compute_80"
# A change of NVCC, NVCCFLAGS or CUDA_ARCH rebuilds the CUDA objects.

MODULE_big = gpusort
EXTENSION = gpusort
DATA = sql/gpusort--1.0.sql sql/gpusort--1.1.sql sql/gpusort--1.2.sql sql/gpusort--1.3.sql \
       sql/gpusort--1.0--1.1.sql sql/gpusort--1.1--1.2.sql sql/gpusort--1.2--1.3.sql
PGFILEDESC = "gpusort - ORDER BY and array sorting on NVIDIA GPUs or a radix-sort CPU engine"

SRCS = $(sort $(wildcard src/*.c src/*/*.c src/*/*/*.c src/*/*/*/*.c))
OBJS = $(SRCS:.c=.o)

# Regression suites: every suite of test/sql (expected output in
# test/expected), node_plan first: it creates the extension and the helper
# functions that the others call; the others by name (reliability and
# window call node_spill's cancelled()).  They run against any server that
# preloads gpusort, on the engine GPUSORT_TEST_DEVICE names (cpu here, gpu
# on a GPU host), through PGOPTIONS, which pg_regress passes on.  The
# suites that only scripts run live beside them (test/README.md):
# GPUSORT_REGRESS_DIR=test/ci REGRESS=loading runs one of those.
REGRESS = node_plan $(filter-out node_plan,$(sort $(basename $(notdir $(wildcard test/sql/*.sql)))))
GPUSORT_REGRESS_DIR ?= test
REGRESS_OPTS = --inputdir=$(GPUSORT_REGRESS_DIR) $(GPUSORT_REGRESS_OPTS)
# the kernel tests' build, which PostgreSQL run-tests.sh last built for, the
# CUDA objects and their flags whether or not this make builds them,
# run-tests.sh's log
# (pg_regress's results/, regression.diffs and regression.out go with REGRESS)
EXTRA_CLEAN = .kbuild .build-pg_config cuda/*.o $(CUDA_STAMP) test/regress.log
GPUSORT_TEST_DEVICE ?= cpu
installcheck: export PGOPTIONS += -c gpusort.device=$(GPUSORT_TEST_DEVICE)

# TAP tests: test/t/*.pl, run by prove through make prove_installcheck (not
# by installcheck, which runs against the server it is given).  They start
# clusters of their own (PostgreSQL::Test::Cluster) from the PostgreSQL that
# pg_config names, with gpusort installed there, and need PGXS configured
# with --enable-tap-tests and perl's IPC::Run (without them PGXS says "TAP
# tests not enabled"); initdb refuses root, so they run as another user
# (test/ci/run-tests.sh does that for root).  Their clusters and logs go to
# tmp_check/ (PGXS puts it under $(CURDIR)).
PROVE_TESTS ?= test/t/*.pl

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/cuda
SHLIB_LINK = -lpthread

# CUDA: nvcc compiles the architectures of one object in parallel
# (--threads 0: as many threads as cores).
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
NVCCFLAGS ?= -O3 -std=c++17 -Xcompiler -fPIC -Xcompiler -Wall --threads 0 $(CUDA_ARCH)
CUDA_SRCS = $(sort $(wildcard cuda/*.cu))
GPUSORT_CUDA ?= $(if $(NVCC),yes,no)
CUDA_STAMP = cuda/nvccflags.stamp

ifeq ($(GPUSORT_CUDA),yes)
# (-: the TAP tests run from a copy of this Makefile alone, building nothing)
-include cuda/arch.mk
CUDA_ARCH ?= $(CUDA_ARCH_ALL)
ifneq ($(filter-out print-%,$(or $(MAKECMDGOALS),all)),)
$(call cuda_flags_stamp,$(CUDA_STAMP),$(NVCC) $(NVCCFLAGS))
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
OBJS += $(CUDA_SRCS:.cu=.o)
PG_CPPFLAGS += -DGPUSORT_WITH_CUDA
SHLIB_LINK += -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -ldl -lpthread -lstdc++
endif
ifeq ($(MAKECMDGOALS),)
$(info gpusort: $(if $(filter yes,$(GPUSORT_CUDA)),building with CUDA ($(NVCC)),nvcc not found or GPUSORT_CUDA=no: building the CPU-only library))
endif

# No LLVM bitcode: the .cu objects have none, and the node is not JIT-relevant.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

cuda/%.o: cuda/%.cu $(wildcard cuda/*.h cuda/*.cuh) $(CUDA_STAMP)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(OBJS): $(wildcard src/*.h src/*/*.h src/*/*/*.h src/*/*/*/*.h)

# the TAP tests
.PHONY: prove_installcheck
prove_installcheck:
	@if [ "$$(id -u)" = 0 ]; then \
		echo "The TAP tests start clusters of their own, and initdb refuses root: run them as another user, or through test/ci/run-tests.sh." >&2; \
		exit 1; \
	fi
	$(prove_installcheck)

print-cuda:
	@echo $(GPUSORT_CUDA)

# the CUDA objects' names, and the architectures they are built for
print-cuda-objs:
	@echo $(CUDA_SRCS:.cu=.o)
print-cuda-arch:
	@echo $(CUDA_ARCH)
