# busbw.gp — bus bandwidth vs message size, one line per algorithm, at p ranks.
# The dashed line is the local memcpy bandwidth measured in the same run: a
# shared-memory all-reduce copies every byte at least once, so it is a ceiling.
load 'plots/common.gp'
set output sprintf('%s/busbw_p%d.%s', dir, p, fmt)
set title sprintf('All-reduce bus bandwidth, p = %d (f32 sum, out-of-place)', p)
set xlabel 'message size'
set ylabel 'bus bandwidth (GB/s)'
set logscale x 2
set logscale y 10
set format y '%g'
sel(a) = strcol(1) eq a && $2 == p && strcol(7) eq 'out'
plot for [a in algos] dir.'/sweep.csv' using (sel(a) ? $3 : NaN):13 with linespoints pt 7 ps 0.6 title a noenhanced, \
     memcpy with lines dt 2 lw 2 lc 'black' title sprintf('memcpy %.1f GB/s', memcpy)
