# trainer_scaling.gp — data-parallel training throughput of tagtrain against
# the number of ranks, one line per all-reduce algorithm (trainer.csv, written
# by scripts/bench_trainer.sh; every algorithm all-reduces the whole gradient
# buffer, ring-sparse is ring with --sparse-grads). WEAK scaling: the local
# batch per rank is fixed.
#   left:  samples/s (all ranks together); ideal (dashed): p x samples/s at p = 1
#   right: efficiency = samples/s(p) / (p x samples/s(1)), and the share of
#          step time spent waiting for the gradient all-reduce
# The GPU runs (tagtrain --device cuda) come with csv='trainer_gpu.csv',
# tag='_gpu' and setup (how the ranks sit on the GPUs), and nccl drawn thick:
# the reference line.
load 'plots/common.gp'
if (!exists('csv')) csv = 'trainer.csv'
if (!exists('tag')) tag = ''
if (!exists('setup')) setup = ''
set output sprintf('%s/trainer_scaling%s.%s', dir, tag, fmt)
f = dir.'/'.csv
stats f using 3 every ::1::1 nooutput
s1 = STATS_min
set multiplot layout 1,2 title (tag eq '_gpu' ? "tagtrain --device cuda scaling (weak: fixed local batch)\n".setup \
                                                : 'tagtrain data-parallel scaling (weak: fixed local batch)') noenhanced
set xlabel 'ranks p'
set logscale x 2
stats f using 2 every ::1 nooutput
set xtics 2
set xrange [0.8:STATS_max * 1.25]
set format x '%g'
set key inside left top
set ylabel 'samples/s'
set yrange [0:*]
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) ? $2 : NaN):3 with linespoints pt 7 \
         lw (word(algos, i) eq 'nccl' ? 3 : 1) lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     x * s1 with lines dt 2 lc 'black' title 'ideal'
set ylabel 'efficiency (solid), comm fraction (dotted)'
set yrange [0:1.1]
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) ? $2 : NaN):4 with linespoints pt 7 \
         lw (word(algos, i) eq 'nccl' ? 3 : 1) lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) ? $2 : NaN):5 with linespoints pt 6 dt 3 \
         lc rgb acol(word(algos, i), i) notitle, \
     1 with lines dt 2 lc 'black' title 'ideal'
unset multiplot
