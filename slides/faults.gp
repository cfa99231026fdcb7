# faults.gp — deck 06's save on a timeline: the file-system calls of one save of lab 06's reference
# solution as the crash harness counted them (calls.csv: K,call,tmp,new — before call K, does a
# temporary file exist, is state.bin the new version; the row after the last call: the save returned), a kill point before each call, and what
# is on disk if the process dies there. Run by scripts/slides.sh as
#   gnuplot -e "csv='fig/save/calls.csv'; out='fig/save/timeline.png'; pngterm='pngcairo'" slides/faults.gp
load 'plots/common.gp'
# sized for projection like model.gp (no text under 8 pt as placed: the slide test measures it)
set terminal @pngterm size 960,400 font 'Sans,20'
set output out
stats csv using 1 nooutput
N = int(STATS_max) - 1   # the calls; the last row is the save returned
set title sprintf("one save, %d calls: killed before call K, the disk holds", N) font ',20'
set xrange [0.5:N + 1.5]
set yrange [0:4]
unset ytics
set ytics ('state.bin' 1.4, 'a tmp file' 0.5) font ',18'
set xtics 1, 1, N + 1 nomirror
set xlabel 'killed before call K (N + 1: after the save)'
unset key
unset grid
set border 1
# per kill point K: call K (the last column: the save returned), and the disk if killed before it
set style fill solid 0.9 border rgb '#333333'
plot csv using 1:(3.2):(0.46):(0.42) with boxxyerror lc rgb '#dddddd', \
     csv using 1:(3.2):2 with labels font ',15', \
     csv using 1:(1.4):(0.46):(0.35):($4 > 0 ? 0x59a14f : 0x9c755f) with boxxyerror lc rgb variable, \
     csv using 1:(1.4):($4 > 0 ? 'new' : 'old') with labels font ',18' tc rgb '#ffffff', \
     csv using 1:($3 > 0 ? 0.5 : NaN):(0.46):(0.3) with boxxyerror lc rgb '#f28e2b', \
     csv using 1:($3 > 0 ? 0.5 : NaN):('left') with labels font ',16'
