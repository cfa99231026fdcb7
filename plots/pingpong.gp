# pingpong.gp — one-way time between two ranks (through ck_sendrecv) and the
# least-squares line t = alpha + beta·n that the model uses.
# slide=1 (make slides, deck 00): sized for projection (no text under 8 pt as placed on the page)
load 'plots/common.gp'
if (exists("slide")) { set terminal @pngterm size 960,540 font 'Sans,22'; set title font ',20' }
set output sprintf('%s/pingpong.%s', dir, fmt)
set title sprintf('Ping-pong, ranks 0 <-> 1: alpha = %.2f µs, 1/beta = %.2f GB/s', alpha_us, 1 / beta_ns)
set xlabel 'message size'
set ylabel 'one-way time (µs)'
set logscale x 2
set logscale y 10
set format y '10^{%T}'
set key inside left top
plot dir.'/pingpong.csv' using 1:2 every ::1 with points pt 7 title 'measured (median)', \
     '' using 1:4 every ::1 with lines lw 2 title 'fit alpha + beta n'
