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
set title sprintf("tagtrain weak scaling, 16 rows per rank and step, simulated\n%s\n%s", where, when) noenhanced font ',18'
set logscale x 2
set xrange [0.8:80]
set xtics ('1' 1, '2' 2, '4' 4, '8' 8, '16' 16, '32' 32, '64' 64)
set xlabel 'ranks p (one per simulated host)'
set ylabel 'fraction'
set yrange [0:1.4]
set ytics 0, 0.2, 1
set key top right inside maxrows 3 samplen 2
set grid
plot for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) ? $2 : NaN):4 with linespoints lw 3 pt 7 ps 1.5 \
         lc rgb acol(word(algos, i), i) title word(algos, i).' efficiency' noenhanced, \
     for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) ? $2 : NaN):5 \
         with linespoints dt 2 lw 2 pt 6 ps 1.5 lc rgb acol(word(algos, i), i) title word(algos, i).' comm fraction' noenhanced
