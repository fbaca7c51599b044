#!/bin/bash
# check-arch.sh: checks that a gpusort.so built with CUDA holds device code
# (SASS) for every GPU architecture that nvcc builds from sm_75 (Turing) up,
# in every CUDA object, and the PTX of the newest (cuobjdump --list-elf and
# --list-ptx): what the Makefile's default CUDA_ARCH (cuda/arch.mk) builds.
#
#   test/ci/check-arch.sh [LIBRARY]        (default: gpusort.so of this tree)
#
# CHECK_SMS and CHECK_PTX set what is expected instead: architectures
# ("80 90"; "none": no SASS at all) and the one PTX ("80"), for a library
# built with another CUDA_ARCH (test/gpu/gpu-ptx.sh).  SASS of an architecture
# not expected fails either way.
#
# cuobjdump: on PATH, or beside nvcc, or else installed from PyPI
# (nvidia-cuda-cuobjdump of nvcc's CUDA major version) into
# ${TMPDIR:-/tmp}/gpusort-cuobjdump, and kept there.  Without nvcc there is
# nothing to check (said, not failed).  Ends with "N passed, N failed".
set -uo pipefail
lib=${1:+$(realpath "$1")}
cd "$(dirname "$0")/../.." || exit 1
lib=${lib:-gpusort.so}
nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)}
if [ -z "$nvcc" ]; then
	echo "skipped: no nvcc, so no CUDA build to check"
	echo "0 passed, 0 failed"
	exit 0
fi

cuobjdump=$(command -v cuobjdump || ls "$(dirname "$nvcc")/cuobjdump" 2>/dev/null)
if [ -z "$cuobjdump" ]; then
	dir=${TMPDIR:-/tmp}/gpusort-cuobjdump
	cuobjdump=$(find "$dir" -name cuobjdump -type f 2>/dev/null | head -n 1)
	if [ -z "$cuobjdump" ]; then
		major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
		echo "== installing cuobjdump from PyPI (nvidia-cuda-cuobjdump==$major.*) into $dir"
		python3 -m pip install --quiet --disable-pip-version-check --target "$dir" \
			"nvidia-cuda-cuobjdump==$major.*" >/dev/null 2>&1
		cuobjdump=$(find "$dir" -name cuobjdump -type f 2>/dev/null | head -n 1)
	fi
	if [ -z "$cuobjdump" ]; then
		echo "not ok - no cuobjdump (not beside nvcc, and none from PyPI)"
		echo "0 passed, 1 failed"
		exit 1
	fi
fi

passed=0
failed=0
check() {
	if [ "$2" = ok ]; then
		echo "ok - $1"
		passed=$((passed + 1))
	else
		echo "not ok - $1: $2"
		failed=$((failed + 1))
	fi
}

sms=$("$nvcc" --list-gpu-code | sed -n 's/^sm_\([0-9]*\)$/\1/p' | sort -n | awk '$1 >= 75')
newest=${CHECK_PTX:-$(echo "$sms" | tail -n 1)}
sms=${CHECK_SMS:-$sms}
[ "$sms" = none ] && sms=
echo "$lib; $("$nvcc" --version | grep release); $("$cuobjdump" --version | grep release)"
echo "expected: SASS for ${sms:+sm_}$(echo ${sms:-none} | sed 's/ /, sm_/g'); PTX for compute_$newest"
elf=$("$cuobjdump" --list-elf "$lib" 2>&1)
ptx=$("$cuobjdump" --list-ptx "$lib" 2>&1)
# how many times each architecture's SASS is there: once per CUDA object
counts=$(echo "$elf" | sed -n 's/.*\.sm_\([0-9]*\)\.cubin$/\1/p' | sort -n | uniq -c)
objects=$(echo "$counts" | awk 'NR == 1 || $1 > n { n = $1 } END { print n + 0 }')
echo "$counts" | awk 'NF == 2 { printf "   sm_%s: %d\n", $2, $1 }'
for sm in $sms; do
	n=$(echo "$counts" | awk -v sm="$sm" '$2 == sm { print $1 }')
	check "SASS for sm_$sm in every CUDA object" \
		"$([ "${n:-0}" -gt 0 ] && [ "${n:-0}" -eq "$objects" ] && echo ok || echo "in ${n:-0} of $objects")"
done
others=$(echo "$counts" | awk -v want=" $(echo $sms) " 'NF == 2 && index(want, " " $2 " ") == 0 { printf " sm_%s", $2 }')
check "no SASS of other architectures" "$([ -z "$others" ] && echo ok || echo "found:$others")"
check "PTX for compute_$newest" \
	"$(grep -q "\.sm_$newest\.ptx$" <<<"$ptx" && echo ok || echo "cuobjdump --list-ptx: $(echo "$ptx" | tr '\n' ' ' | cut -c1-200)")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
