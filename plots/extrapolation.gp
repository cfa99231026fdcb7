# extrapolation.gp — the α-β-γ model of each algorithm beyond this machine:
# time vs size at 1024 and 4096 ranks (top), time vs ranks at 64 KB and
# 64 MB (bottom). Parameters measured here, held fixed as p grows.
load 'plots/common.gp'
if (fmt eq 'svg') { set terminal svg size 1200,900 dynamic font 'Sans,12' } else { set terminal @pngterm size 1200,900 font 'Sans,11' }
set output sprintf('%s/extrapolation.%s', dir, fmt)
f = dir.'/extrap.csv'
set multiplot layout 2,2 title 'Model extrapolation (alpha, beta, gamma from this machine)'
set logscale xy
set format y '10^{%T}'
set ylabel 'predicted time (µs)'
set key inside left top
do for [P in '1024 4096'] {
    set title sprintf('p = %s ranks', P)
    set xlabel 'message size'
    set xtics ('8 B' 8, '1 KB' 1024, '1 MB' 1048576, '1 GB' 1073741824)
    plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) && $2 == P+0 ? $3 : NaN):4 with lines lw 2 lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced
}
set xlabel 'ranks p'
set xtics auto
set format x '%g'
do for [N in '65536 67108864'] {
    set title sprintf('%s per rank', N+0 == 65536 ? '64 KB' : '64 MB')
    plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) && $3 == N+0 ? $2 : NaN):4 with linespoints pt 7 ps 0.5 \
         lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced
}
unset multiplot
