# busbw.gp — bus bandwidth vs message size, one line per algorithm, at p ranks.
# The dashed black line is the local memcpy bandwidth measured in the same
# run: a shared-memory all-reduce copies every byte at least once, so it is a
# ceiling. Algorithms that ran on the shm transport (NAME@shm in the CSV) are
# drawn dashed, beside the same algorithms over MPI (solid).
# The GPU sweep uses the same script: csv='sweep_gpu.csv', tag='gpu_',
# ceiling='device copy' (the device-to-device copy bandwidth), and setup, how
# the ranks sit on the GPUs ("time-shared (4 ranks on 1 GPU)"), for the title.
load 'plots/common.gp'
if (!exists("csv")) csv = 'sweep.csv'
if (!exists("tag")) tag = ''
if (!exists("ceiling")) ceiling = 'memcpy'
if (!exists("setup")) setup = ''
set output sprintf('%s/busbw_%sp%d.%s', dir, tag, p, fmt)
set title sprintf('All-reduce bus bandwidth%s, p = %d%s (f32 sum, out-of-place)', tag eq '' ? '' : ' on GPU', p, \
                  setup eq '' ? '' : ', '.setup) noenhanced
set xlabel 'message size'
set ylabel 'bus bandwidth (GB/s)'
set logscale x 2
set logscale y 10
set format y '%g'
sel(a) = strcol(1) eq a && $2 == p && strcol(7) eq 'out'
shm(a) = strstrt(a, '@shm') > 0
plot for [i=1:words(algos)] dir.'/'.csv using (sel(word(algos, i)) ? $3 : NaN):13 with linespoints \
         pt 7 - shm(word(algos, i)) ps 0.6 dt 1 + shm(word(algos, i)) lc rgb acol(word(algos, i), i) \
         title label(word(algos, i)) noenhanced, \
     memcpy with lines dt 2 lw 2 lc 'black' title sprintf('%s %.1f GB/s', ceiling, memcpy)
