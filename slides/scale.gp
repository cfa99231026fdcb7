# scale.gp — one simulated figure for a deck: the time of one all-reduce of B bytes against the
# rank count (16 to 1024), per algorithm, measured on a simulated cluster (SimGrid SMPI), the
# model at the recovered α, β dashed beside it in the same colour. The title says what ran where and when (the
# caller passes the lines of the run's platform description). Run by scripts/slides.sh as
#   gnuplot -e "csv='sweep.csv'; out='fig/scale-256.png'; B=256; pngterm='pngcairo'; algos='ring rd';
#               where='...'; when='...'" slides/scale.gp
load 'plots/common.gp'
# Sized for projection like model.gp: a small canvas, large type, the key beside the plot.
set terminal @pngterm size 960,540 font 'Sans,22'
set output out
size(b) = b >= 1048576 ? sprintf('%g MiB', b / 1048576.) : b >= 1024 ? sprintf('%g KiB', b / 1024.) : sprintf('%d B', b)
set title sprintf("one all-reduce of %s, simulated\n%s\n%s", size(B), where, when) noenhanced font ',20'
set logscale xy 2
set logscale y 10
set format y '10^{%T}'
set xrange [12:1400]
set xtics ('16' 16, '64' 64, '256' 256, '1024' 1024)
set xlabel 'ranks p (one per simulated host)'
set ylabel 'time (µs)'
set key outside top center horizontal maxrows 2 Left reverse samplen 1.5 font ',20'
set grid
plot for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) && $3 == B && strcol(7) eq 'out' ? $2 : NaN):9 \
         with linespoints lw 5 pt 7 ps 2 lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     for [i = 1:words(algos)] csv using (strcol(1) eq word(algos, i) && $3 == B && strcol(7) eq 'out' ? $2 : NaN):15 \
         with lines dt 2 lw 3 lc rgb acol(word(algos, i), i) notitle, \
     NaN with lines dt 2 lw 3 lc rgb '#666666' title 'α-β-γ model'
