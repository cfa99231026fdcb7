# latency.gp — all-reduce time vs message size (log-log), one line per
# algorithm, at p ranks. Flat on the left: latency (α) bound; rising with
# slope 1 on the right: bandwidth (β, γ) bound.
load 'plots/common.gp'
set output sprintf('%s/latency_p%d.%s', dir, p, fmt)
set title sprintf('All-reduce time, p = %d (median of the slowest rank per iteration)', p)
set xlabel 'message size'
set ylabel 'time (µs)'
set logscale x 2
set logscale y 10
set format y '10^{%T}'
sel(a) = strcol(1) eq a && $2 == p && strcol(7) eq 'out'
shm(a) = strstrt(a, '@shm') > 0   # the shm transport's rows: dashed, open points
plot for [i=1:words(algos)] dir.'/sweep.csv' using (sel(word(algos, i)) ? $3 : NaN):9 with linespoints \
         pt 7 - shm(word(algos, i)) ps 0.6 dt 1 + shm(word(algos, i)) lc rgb acol(word(algos, i), i) title label(word(algos, i)) noenhanced
