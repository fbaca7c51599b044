# cuda/arch.mk: the GPU architectures that gpusort's device code is built
# for, shared by the Makefile and test/gpu/kernels/Makefile (which set NVCC).
#
#   CUDA_SMS        every real architecture that $(NVCC) can build code for
#                   (nvcc --list-gpu-code), from 75 (compute capability
#                   7.5, Turing) up, in numeric order: 75 80 86 ... 121
#                   with CUDA 13.0
#   CUDA_ARCH_ALL   device code (SASS) for each of them, plus the PTX of
#                   the newest, which the driver compiles at first load
#                   for a GPU newer still: the default CUDA_ARCH
#   CUDA_ARCH_ENDS  SASS of the oldest and PTX of the newest alone: the
#                   code of both ends compiled in two architectures' time
#                   (the kernel tests' build check, where they cannot run)
#
# $(call cuda_flags_stamp,FILE,FLAGS) keeps FLAGS in FILE, rewritten (and
# so newer than the objects that depend on it) whenever they change: a
# build with another CUDA_ARCH rebuilds every object.

comma := ,
CUDA_SMS := $(shell $(NVCC) --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9]*\)$$/\1/p' | sort -n | awk '$$1 >= 75')
ifeq ($(strip $(CUDA_SMS)),)
$(warning $(NVCC) --list-gpu-code listed no architecture from sm_75 up: building for sm_75 and its PTX)
CUDA_SMS := 75
endif
cuda_gencode = -gencode arch=compute_$(1)$(comma)code=$(2)_$(1)
CUDA_ARCH_ALL := $(foreach s,$(CUDA_SMS),$(call cuda_gencode,$(s),sm)) \
	$(call cuda_gencode,$(lastword $(CUDA_SMS)),compute)
CUDA_ARCH_ENDS := $(call cuda_gencode,$(firstword $(CUDA_SMS)),sm) \
	$(call cuda_gencode,$(lastword $(CUDA_SMS)),compute)

cuda_flags_stamp = $(shell mkdir -p $(dir $(1)) && \
	{ echo '$(2)' | cmp -s - $(1) || echo '$(2)' >$(1); })
