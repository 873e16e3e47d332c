# bench/lib.sh: what the benchmark scripts share; sourced, not run.

# median: the median of the numbers on standard input, one a line ("-"
# when there are none).
median() { sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
    else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ratio A B: A / B to two places, "-" when either is missing or B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
    if (a == "-" || b == "-" || b + 0 == 0) print "-";
    else printf "%.2f\n", a / b }'; }
