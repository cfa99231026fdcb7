# model.gp — one panel of the α-β-γ model for a deck: predicted time against
# message size at one rank count, every algorithm of the CSV, at the slides'
# fixed parameters (the title says which, from slides/params.txt). Run by
# scripts/slides.sh as
#   gnuplot -e "dir='OUT/fig'; P=16; pngterm='pngcairo'; alpha='2'; beta='0.1'; gamma='0.05'; algos='...'" slides/model.gp
load 'plots/common.gp'
set terminal @pngterm size 1280,720 font 'Sans,20'
set output sprintf('%s/model-p%d.png', dir, P)
f = dir.'/extrap.csv'
set title sprintf('model, p = %d: α = %s µs, β = %s ns/B, γ = %s ns/B', P, alpha, beta, gamma)
set logscale xy
set format y '10^{%T}'
set ylabel 'predicted time (µs)'
set xlabel 'message size n'
set xtics ('8 B' 8, '1 KiB' 1024, '64 KiB' 65536, '1 MiB' 1048576, '64 MiB' 67108864, '1 GiB' 1073741824)
set key outside right top
set grid
plot for [a in algos] f using (strcol(1) eq a && $2 == P ? $3 : NaN):4 with lines lw 3 title a noenhanced
