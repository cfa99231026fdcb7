# colors.awk — collectives/algos/colors.txt as gnuplot code, for plots/common.gp
# (load '< awk -f plots/colors.awk collectives/algos/colors.txt'): two strings, the names and
# their colours, word for word.
!/^#/ && NF == 2 { names = names " " $1; rgb = rgb " " $2 }
END { printf "algo_names = '%s'\nalgo_rgb = '%s'\n", substr(names, 2), substr(rgb, 2) }
