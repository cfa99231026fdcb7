# model.gp — one panel of the α-β-γ model for a deck: predicted time against
# message size at one rank count, every algorithm of the CSV, at the slides'
# fixed parameters (the title says which, from slides/params.txt). Run by
# scripts/slides.sh as
#   gnuplot -e "dir='OUT/fig'; P=16; pngterm='pngcairo'; alpha='2'; beta='0.1'; gamma='0.05'; algos='...'" slides/model.gp
load 'plots/common.gp'
# Sized for projection: the figure fills about three quarters of a 16:9 page, so the canvas is
# small and the type large (a tick label about as tall as the slide's own text); every line has
# its own colour and dash so that it stays apart on a washed-out projector and in greyscale.
set terminal @pngterm size 1200,675 font 'Sans,26'
set output sprintf('%s/model-p%d.png', dir, P)
f = dir.'/extrap.csv'
set title sprintf('α-β-γ model, p = %d: α = %s µs, β = %s ns/B, γ = %s ns/B', P, alpha, beta, gamma) font ',24'
set logscale xy
set format y '10^{%T}'
set ylabel 'predicted time (µs)'
set xlabel 'message size n'
set xtics ('8 B' 8, '1 KiB' 1024, '64 KiB' 65536, '1 MiB' 1048576, '64 MiB' 67108864, '1 GiB' 1073741824)
set xrange [8:1073741824]
set key inside left top Left reverse spacing 1.05 font ',22' box opaque
set grid
# the colours: one per algorithm in every plot (acol, plots/common.gp); the dashes by position
array dash[6] = [1, 1, 2, 1, 4, 3]
plot for [i = 1:words(algos)] f using (strcol(1) eq word(algos, i) && $2 == P ? $3 : NaN):4 \
         with lines lw 5 dt dash[(i - 1) % 6 + 1] lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced
