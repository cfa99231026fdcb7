# trainer.gp — deck 04's scaling figure: tagtrain's weak-scaling efficiency and communication
# fraction against the rank count (1 to 64), per all-reduce algorithm, on a simulated cluster
# (make sim-bench's trainer.csv: the whole gradient all-reduced every step, 16 rows per rank per
# step, compute charged as modelled flops). The title says what ran where and when. Run by
# scripts/slides.sh as
#   gnuplot -e "csv='trainer.csv'; out='fig/trainer.png'; pngterm='pngcairo'; algos='ring rd';
#               where='...'; when='...'" slides/trainer.gp
load 'plots/common.gp'
set terminal @pngterm size 780,439 font 'Sans,19'
set output out
# the title over the whole canvas (the key takes the right of it), three lines above the plot
set label 1 sprintf("tagtrain, 16 rows per rank and step, simulated\n%s\n%s", where, when) at screen 0.5, screen 0.95 \
    center noenhanced font ',18'
set tmargin 4
set logscale x 2
set xrange [0.8:80]
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16, '32' 32, '64' 64)
set xlabel 'ranks p (one per simulated host)'
set ylabel 'fraction'
set yrange [0:1.05]
set ytics 0, 0.2, 1
set key outside right top vertical Left reverse samplen 1.2 font ',18'
set grid
# solid: efficiency, dashed: the communication fraction, one colour per algorithm (one key entry each)
plot for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) ? $2 : NaN):4 with linespoints lw 3 pt 7 ps 1.5 \
         lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) ? $2 : NaN):5 \
         with linespoints dt 2 lw 2 pt 6 ps 1.5 lc rgb acol(word(algos, i), i) notitle, \
     NaN with lines lw 3 lc rgb '#666666' title 'efficiency', NaN with lines dt 2 lw 2 lc rgb '#666666' title 'comm fraction'
