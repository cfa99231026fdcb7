# model.gp — one panel of the α-β-γ model for a deck: each algorithm's predicted time against
# message size at one rank count, as a multiple of the fastest algorithm's at that size (so the
# crossovers show as lines crossing 1), the fastest at each size marked by a dot in its colour,
# at the slides' fixed parameters (the title says which, from slides/params.txt). Run by
# scripts/slides.sh, which writes model-rel.csv (algo,p,bytes,ratio,fastest) from extrap.csv, as
#   gnuplot -e "dir='OUT/fig'; P=16; pngterm='pngcairo'; alpha='2'; beta='0.1'; gamma='0.05'; algos='...'" slides/model.gp
load 'plots/common.gp'
# Sized for projection: the figure fills about three quarters of a 16:9 page, so the canvas is
# small and the type large (no text under 8 pt as placed: the slide test measures it); every
# line has its own colour and dash so that it stays apart on a washed-out projector and in greyscale.
set terminal @pngterm size 960,540 font 'Sans,22'
set output sprintf('%s/model-p%d.png', dir, P)
f = dir.'/model-rel.csv'
set title sprintf("α-β-γ model, p = %d: time ÷ the fastest's (dot: fastest)\nα = %s µs, β = %s ns/B, γ = %s ns/B", P, alpha, beta, gamma) font ',20'
set logscale xy
set yrange [0.8:300]
set ytics ('1×' 1, '2×' 2, '4×' 4, '10×' 10, '30×' 30, '100×' 100, '300×' 300)
set ylabel "time ÷ fastest" offset 1,0
set xlabel 'message size n'
set xtics ('8 B' 8, '1 KiB' 1024, '1 MiB' 1048576, '1 GiB' 1073741824)
set xrange [8:1073741824]
set key outside top center horizontal maxrows 2 Left reverse samplen 1.5 font ',20'
set grid
# the colours: one per algorithm in every plot (acol, plots/common.gp); the dashes by position
array dash[6] = [1, 1, 2, 1, 4, 3]
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) && $2 == P ? $3 : NaN):4 \
         with lines lw 5 dt dash[(i - 1) % 6 + 1] lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) && $2 == P && $5 == 1 ? $3 : NaN):(1) \
         with points pt 7 ps 2.2 lc rgb acol(word(algos, i), i) notitle
