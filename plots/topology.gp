# topology.gp — make sim-bench: bus bandwidth vs message size at p ranks on
# the simulated crossbar (solid, from sweep.csv) and on the fat trees (from
# topology.csv: the non-blocking one dashed, the 4:1 oversubscribed one
# dotted), one colour per algorithm. Where the dotted line drops below the
# others, traffic leaving a leaf switch is sharing its uplinks.
load 'plots/common.gp'
set output sprintf('%s/topology_p%d.%s', dir, p, fmt)
set title sprintf("Bus bandwidth, p = %d (simulated)\ncrossbar solid, fat tree dashed, 4:1 oversubscribed fat tree dotted", p) noenhanced
set xlabel 'message size'
set ylabel 'bus bandwidth (GB/s)'
set logscale x 2
set logscale y 10
set format y '%g'
t = dir.'/topology.csv'
sel(a) = strcol(1) eq a && $2 == p && strcol(7) eq 'out'
plot for [i=1:words(algos)] dir.'/sweep.csv' using (sel(word(algos, i)) ? $3 : NaN):13 with linespoints \
         pt 7 ps 0.6 dt 1 lc rgb acol(word(algos, i), i) title label(word(algos, i)) noenhanced, \
     for [i=1:words(algos)] t using (sel(word(algos, i)) && strcol(16) eq ft ? $3 : NaN):13 with linespoints \
         pt 6 ps 0.6 dt 2 lc rgb acol(word(algos, i), i) notitle, \
     for [i=1:words(algos)] t using (sel(word(algos, i)) && strcol(16) eq ftos ? $3 : NaN):13 with linespoints \
         pt 4 ps 0.6 dt 3 lc rgb acol(word(algos, i), i) notitle, \
     link with lines dt 2 lw 2 lc 'black' title sprintf('link %.2f GB/s', link)
