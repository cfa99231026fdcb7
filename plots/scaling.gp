# scaling.gp — how each algorithm scales with the number of ranks, at one
# message size (scaling.csv, written by benchreport, says which).
#   speedup    = data reduced per second (p·n / t) relative to the smallest p;
#                ideal (dashed): p / p_min, time independent of p
#   efficiency = busbw(p) / busbw(p_min): 1 means the links stay as busy
load 'plots/common.gp'
set output sprintf('%s/scaling.%s', dir, fmt)
f = dir.'/scaling.csv'
stats f using 2 every ::1 nooutput
pmin = STATS_min
stats f using 3 every ::1 nooutput
n = STATS_min
set multiplot layout 1,2 title sprintf('Scaling with ranks at %.0f MB (f32 sum)', n / 1048576)
set xlabel 'ranks p'
set logscale x 2
set xtics auto
set format x '%g'
set key inside left top
set ylabel 'speedup (aggregate data rate vs p_{min})'
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) ? $2 : NaN):6 with linespoints pt 7 \
         lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     x / pmin with lines dt 2 lc 'black' title 'ideal'
set ylabel 'efficiency (busbw / busbw at p_{min})'
set yrange [0:1.2]
set key inside left bottom
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) ? $2 : NaN):7 with linespoints pt 7 \
         lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     1 with lines dt 2 lc 'black' title 'ideal'
unset multiplot
