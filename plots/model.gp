# model.gp — measured time divided by the α-β-γ prediction, per algorithm,
# at p ranks. 1 = the model is exact; the shaded band is ±25 %.
load 'plots/common.gp'
set output sprintf('%s/model_p%d.%s', dir, p, fmt)
set title sprintf('Measured / model, p = %d', p)
set xlabel 'message size'
set ylabel 'measured time / predicted time'
set logscale x 2
set logscale y 2
set format y '%g'
set object 1 rect from graph 0, first 0.75 to graph 1, first 1.25 fc rgb '#d8ecd8' fs solid noborder behind
sel(a) = strcol(1) eq a && $2 == p && strcol(7) eq 'out' && $15 > 0
plot for [i = 1:words(algos)] dir.'/sweep.csv' using (sel(word(algos, i)) ? $3 : NaN):($9 / $15) with linespoints pt 7 ps 0.6 \
         lc rgb acol(word(algos, i), i) title word(algos, i) noenhanced, \
     1 with lines lc 'black' dt 2 title 'model'
