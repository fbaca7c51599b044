#!/bin/bash
# check-results-refs.sh: the results files of test/results/ (with its plots/)
# and test/gpu/kernels/results/ against the files that name them.
#
#   test/ci/check-results-refs.sh [-q]
#
# Lists
#   1. dangling references: in any file of the repository, a path under
#      test/results/ or test/gpu/kernels/results/ (or results/... relative
#      to the file or to test/), or a bare name in the results files'
#      scheme, whose file does not exist;
#   2. results files whose name is not in the scheme
#      <what>-<host>-<cores>-<date>-<commit>.<ext> (docs/performance.md,
#      "Results files"; test/lib/results-name.sh makes such names);
#   3. results files (plots left out) that no file outside the results
#      folders names: history, kept for the record (-q: their count only).
# Exits 1 when 1 or 2 lists anything, 0 otherwise.  Needs git and grep only.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
quiet=0
[ "${1:-}" = -q ] && quiet=1

SCHEME='[A-Za-z0-9][A-Za-z0-9_.+-]*-[a-z0-9]+-[0-9]+core-20[0-9]{2}-[01][0-9]-[0-3][0-9]-[0-9a-f]{7,40}\.(txt|csv|svg)'
PATHS='(test/)?(gpu/)?(kernels/)?results/(plots/)?[A-Za-z0-9_.+-]+\.(txt|csv|svg)'
# what is not a results file there: the list of names and where each came from
NOT_RESULTS='^test/results/NAMES\.tsv$'

files=$( { git ls-files test/results test/gpu/kernels/results
	git ls-files --others --exclude-standard test/results test/gpu/kernels/results; } |
	grep -Ev "$NOT_RESULTS" | sort -u)
declare -A exists=()
while read -r f; do
	[ -n "$f" ] && exists[${f##*/}]=1
done <<<"$files"

bad=0
echo "== dangling references"
named=$(mktemp)
trap 'rm -f "$named"' EXIT
while IFS= read -r hit; do
	src=${hit%%:*}
	rest=${hit#*:}
	ref=${rest#*:}
	case $ref in
	test/*) ok=$([ -f "$ref" ] && echo 1) ;;
	*results/*) ok=$([ -f "$(dirname "$src")/$ref" ] || [ -f "test/$ref" ] && echo 1) ;;
	*) ok=${exists[$ref]:-} ;;
	esac
	if [ -z "$ok" ]; then
		echo "$hit"
		bad=1
	fi
	case $src in
	test/results/* | test/gpu/kernels/results/*) ;;
	*) echo "${ref##*/}" >>"$named" ;;
	esac
done < <(git grep -I -n -o -E "$PATHS" ; git grep -I -n -o -E "(^|[^A-Za-z0-9_./+-])$SCHEME" |
	sed -E 's/^([^:]*:[0-9]+:)[^A-Za-z0-9]?/\1/')

echo "== results files outside the scheme"
while read -r f; do
	[ -z "$f" ] && continue
	if ! grep -qE "^$SCHEME\$" <<<"${f##*/}"; then
		echo "$f"
		bad=1
	fi
done <<<"$files"

unnamed=$(while read -r f; do
	case $f in */plots/*|'') continue ;; esac
	grep -qxF "${f##*/}" "$named" || echo "$f"
done <<<"$files")
count=$(grep -c . <<<"$unnamed")
echo "== results files that no doc, script or source names: $count"
[ "$quiet" = 1 ] || { [ "$count" -gt 0 ] && echo "$unnamed"; }
echo "== $(grep -c . <<<"$files") results files; $([ "$bad" = 0 ] && echo ok || echo FAILED)"
exit $bad
