#!/bin/bash
# Draws the benchmark results under RESULTS_DIR (default test/results) as SVG
# charts in RESULTS_DIR/plots, with test/bench/plot-results.py and matplotlib.
#
#   test/bench/plot-results.sh [RESULTS_DIR]
#
# Uses the first of python3 on PATH and /usr/bin/python3 that has matplotlib.
# When none has, it installs python3-matplotlib into the system with apt-get
# (as root, or through sudo) and says so; with PLOT_INSTALL=no (what the
# benchmark scripts pass) it installs nothing and says that no charts were
# drawn.  Never fails: the charts are a convenience beside the results.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:-$here/../results}

find_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import matplotlib' 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	return 1
}

if ! py=$(find_python); then
	if [ "${PLOT_INSTALL:-yes}" = no ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "== no charts: python3 has no matplotlib (apt-get install python3-matplotlib, then test/bench/plot-results.sh)"
		exit 0
	fi
	sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	echo "== installing into the system with apt-get: python3-matplotlib (for the charts)"
	{ "${sudo[@]}" apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null; } ||
		{ echo "== no charts: python3-matplotlib could not be installed"; exit 0; }
	py=$(find_python) || { echo "== no charts: matplotlib still not found"; exit 0; }
fi
echo "== drawing the charts of $results into $results/plots"
"$py" "$here/plot-results.py" "$results" | tail -n 1 || echo "== the charts could not be drawn"
exit 0
