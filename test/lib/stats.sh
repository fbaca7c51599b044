#!/bin/bash
# stats.sh: what the benchmark scripts compute of their timings.  Source it.
#
#   ... | median     the median of the numbers read (separated by spaces or
#                    newlines; blanks ignored): the middle one, or the mean
#                    of the two middle ones; nothing for no numbers

median() {
	tr ' ' '\n' | awk NF | sort -n |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else if (NR) print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
