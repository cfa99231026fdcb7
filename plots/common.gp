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
set datafile separator ','
set datafile missing NaN
set grid
set key outside right top
# Message sizes are powers of two: label them in binary units.
set xtics ('8 B' 8, '128 B' 128, '1 KB' 1024, '16 KB' 16384, '256 KB' 262144, \
           '4 MB' 4194304, '64 MB' 67108864, '1 GB' 1073741824)
