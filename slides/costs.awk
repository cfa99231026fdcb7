# costs.awk — deck 03's summary table, as Markdown: each algorithm's α, β and γ terms at
# p = 16 and 1024, n = 64 MiB, read off its cost function, beside the lower bounds. Run by
# scripts/slides.sh as
#   awk -F, -v order=ALGOS -v alpha=2 -v beta=0.1 -v gamma=0.05 -f slides/costs.awk \
#       unit-alpha.csv unit-beta.csv unit-gamma.csv extrap.csv
# unit-K.csv: collbench --extrapolate with K at 1 (µs, ns/B) and the other two at 0, so a row's
# time is the algorithm's K term: messages in sequence (α), bytes sent and bytes reduced on the
# critical path (β, γ; divided by n here). extrap.csv: the same model at the slide parameters,
# to mark an algorithm whose time is not the sum of its terms.
FNR == 1 { f++ }
FNR > 1 && $3 == 67108864 { v[f, $1, $2] = $4 }
function num(x,   s) { s = sprintf("%.2f", x); sub(/\.?0+$/, "", s); return s }   # 2.00 -> 2, 1.50 -> 1.5
function cell(x, lb) { return x <= lb * 1.005 ? "**" num(x) "**" : num(x) }   # bold: at the bound
function bound(j, p) { return j == 1 ? ceil2(p) : j == 2 ? 2 * (p - 1) / p : (p - 1) / p }
function ceil2(p,   k) { for (k = 0; 2 ^ k < p; k++); return k }
END {
  n = 67108864; P[1] = 16; P[2] = 1024
  print "| | α: messages | β: bytes sent ÷ n | γ: reduced ÷ n |"
  print "|---|---|---|---|"
  na = split(order, A, ",")
  for (i = 1; i <= na; i++) {
    a = A[i]; row = a; sum = 1
    for (j = 1; j <= 3; j++) {
      c = ""
      for (q = 1; q <= 2; q++) {
        x = v[j, a, P[q]]; if (j > 1) x = x * 1000 / n    # the β, γ runs: µs at 1 ns/B → × n
        c = c (q > 1 ? " / " : "") cell(x, bound(j, P[q]))
        t[j, q] = v[j, a, P[q]]
      }
      row = row " | " c
    }
    # the time at the slide parameters against the sum of the terms
    for (q = 1; q <= 2; q++) {
      s = alpha * t[1, q] + beta * t[2, q] + gamma * t[3, q]
      if (s > 0 && (v[4, a, P[q]] / s < 0.99 || v[4, a, P[q]] / s > 1.01)) sum = 0
    }
    if (!sum) { sub(/ \|/, "\\* |", row); note = 1 }
    print "| " row " |"
  }
  printf "| lower bound | %s / %s | %s / %s | %s / %s |\n",
         num(bound(1, 16)), num(bound(1, 1024)), num(bound(2, 16)), num(bound(2, 1024)), num(bound(3, 16)), num(bound(3, 1024))
  if (note) print "\n\\* overlaps β and γ: its time is less than the sum of its terms."
}
