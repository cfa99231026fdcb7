# common.gp — settings every collkit plot shares. The scripts pick rows of a
# CSV with (condition ? x : NaN); "missing NaN" makes the rows not picked
# invisible, so a line joins the picked points even with other rows between.
# Each script is run as
#   gnuplot -e "dir='bench-results/latest'; fmt='png'; pngterm='pngcairo'" [-e "p=4"] plots/NAME.gp
# dir: the results folder (input CSVs, output images); fmt: png or svg;
# pngterm: png or pngcairo, whichever this gnuplot has; algos: names to draw.
if (!exists("fmt")) fmt = 'png'
if (!exists("pngterm")) pngterm = 'png'
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic font 'Sans,12'
} else {
    set terminal @pngterm size 960,600 font 'Sans,11'
}
# label(a): the legend of algorithm a; refname/reflabel rename one (make
# sim-bench: mpi is SMPI's own MPI_Allreduce, "SMPI model, reductions free").
if (!exists("refname")) refname = ''
if (!exists("reflabel")) reflabel = ''
label(a) = (refname ne '' && a eq refname) ? sprintf('%s (%s)', a, reflabel) : a
# acol(a, i): the colour of algorithm a (a '@shm' suffix dropped), one per algorithm in every
# plot, from the table beside the registry (collectives/algos/colors.txt); a name it does not
# hold (a student's my_ring) gets the i-th of a few colours the table does not use.
load '< awk -f plots/colors.awk collectives/algos/colors.txt'
algo_base(a) = strstrt(a, '@') > 0 ? a[1:strstrt(a, '@') - 1] : a
algo_find(a, k) = k > words(algo_names) ? '' : word(algo_names, k) eq a ? word(algo_rgb, k) : algo_find(a, k + 1)
algo_others = '#000000 #999999 #fb9a99 #cab2d6 #a6cee3 #b15928'
acol(a, i) = algo_find(algo_base(a), 1) ne '' ? algo_find(algo_base(a), 1) : \
             word(algo_others, (i - 1) % words(algo_others) + 1)
set datafile separator ','
set datafile missing NaN
set grid
set key outside right top
# Message sizes are powers of two: label them in binary units.
set xtics ('8 B' 8, '128 B' 128, '1 KB' 1024, '16 KB' 16384, '256 KB' 262144, \
           '4 MB' 4194304, '64 MB' 67108864, '1 GB' 1073741824)
