# pipeline.gp — deck 02's ideal pipeline as a space-time diagram: a block cut into M chunks going
# through S hops (rank 0 → 1 → … → S), one chunk per hop per time slot; chunk k crosses hop h in
# slot h + k, so the last arrives after S + M − 1 slots instead of S·M without chunks (the
# model's (p − 1)(n_c α + …) in the small). No measurement: the ideal the traces are read against.
# Run by scripts/slides.sh as
#   gnuplot -e "out='fig/pipeline.png'; pngterm='pngcairo'; S=3; M=6" slides/pipeline.gp
load 'plots/common.gp'
# sized for projection like model.gp (no text under 8 pt as placed: the slide test measures it)
set terminal @pngterm size 960,440 font 'Sans,22'
set output out
set title sprintf("%d hops, %d chunks: done after %d slots, not %d (dashed)", S, M, S + M - 1, S * M) font ',20'
set xrange [0:S * M]
set yrange [0:S]
set xtics 0, 2, S * M
set ytics ("0→1" S - 0.5)
do for [h = 0:S - 1] { set ytics add (sprintf('%d→%d', h, h + 1) S - h - 0.5) }
set xlabel 'time slot'
set ylabel 'hop'
set grid xtics
unset key
array fill[6] = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2']
do for [h = 0:S - 1] {
  do for [k = 0:M - 1] {
    set object rect from h + k, S - h - 0.92 to h + k + 1, S - h - 0.08 fc rgb fill[k % 6 + 1] fs solid 0.9 border rgb '#333333'
    set label sprintf('%d', k) at h + k + 0.5, S - h - 0.5 center font ',20' tc rgb '#ffffff'
  }
}
# where the same block ends without chunks: the whole block per hop, one hop after another
set arrow from S * M - 0.05, 0 to S * M - 0.05, S nohead lw 4 dt 2 lc rgb '#c00000'
set arrow from S + M - 1, 0 to S + M - 1, S nohead lw 4 lc rgb '#333333'
plot NaN notitle
