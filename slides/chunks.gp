# chunks.gp — deck 02's chunk-size U-curve: the pipelined ring's model time for one all-reduce of
# n bytes at p ranks against its chunk size c, at the slides' parameters (the plain ring beside
# it, dashed), the fastest chunk marked and named. Run by scripts/slides.sh, which writes the
# CSV (chunk_bytes,ring_pipelined_us,ring_us) from one collbench --extrapolate per chunk size, as
#   gnuplot -e "csv='fig/chunks.csv'; out='fig/chunks.png'; pngterm='pngcairo'; P=16; N='64 MiB'" slides/chunks.gp
load 'plots/common.gp'
# sized for projection like model.gp (no text under 8 pt as placed: the slide test measures it)
set terminal @pngterm size 960,540 font 'Sans,22'
set output out
stats csv using 1:2 nooutput
best_c = STATS_pos_min_y
best_t = STATS_min_y
size(b) = b >= 1048576 ? sprintf('%g MiB', b / 1048576.) : sprintf('%g KiB', b / 1024.)
set title sprintf("ring\\_pipelined, %s at p = %d (model): fastest chunk %s", N, P, size(best_c)) font ',20'
set logscale x 2
set xtics ('4 KiB' 4096, '64 KiB' 65536, '1 MiB' 1048576, '16 MiB' 16777216)
set xlabel 'chunk size c'
set ylabel 'predicted time (ms)'
set yrange [0:*]
set key inside top right font ',20'
set grid
plot csv using 1:($2 / 1000) with linespoints lw 5 pt 7 ps 1.5 lc rgb acol('ring_pipelined', 1) title 'ring\_pipelined', \
     csv using 1:($3 / 1000) with lines dt 2 lw 4 lc rgb acol('ring', 2) title 'ring', \
     '+' using (best_c):(best_t / 1000) every ::0::0 with points pt 6 ps 5 lw 4 lc rgb '#c00000' title 'fastest'
