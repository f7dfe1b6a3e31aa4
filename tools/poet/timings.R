# Rscript timings.R DIR: one line of POET's own counters from DIR/timings.rds:
# DHT hits, dht_get_time and dht_fill_time summed over workers (s), the
# chemistry time (s) and the whole simulation time (s).
t <- readRDS(file.path(commandArgs(trailingOnly = TRUE)[1], "timings.rds"))
ch <- t$chemistry
s <- function(x) if (is.null(x)) NA else sum(as.numeric(x))
cat(sprintf("hits %.0f get %.4f fill %.4f chemistry %.3f simtime %.3f\n",
            s(ch$dht_hits), s(ch$dht_get_time), s(ch$dht_fill_time),
            s(ch$simtime), s(t$simtime)))
