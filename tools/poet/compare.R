# Rscript compare.R A B: whether two POET output directories hold the same
# fields, bit for bit (every iter_*.rds, its T and C data frames), and the
# same DHT hits per step (timings.rds).  Prints one line; exits 1 if not.
args <- commandArgs(trailingOnly = TRUE)
a <- args[1]; b <- args[2]
files <- sort(list.files(a, pattern = "^iter_.*\\.rds$"))
if (length(files) < 2) stop("no fields in ", a)
if (!identical(files, sort(list.files(b, pattern = "^iter_.*\\.rds$"))))
  stop("the two runs stored different iterations")
differ <- character(0)
for (f in files) {
  x <- readRDS(file.path(a, f)); y <- readRDS(file.path(b, f))
  # identical() on doubles compares bits (NaN payloads aside)
  if (is.data.frame(x)) ok <- identical(x, y)
  else ok <- identical(x$T, y$T) && identical(x$C, y$C)
  if (!ok) differ <- c(differ, f)
}
ta <- readRDS(file.path(a, "timings.rds"))$chemistry
tb <- readRDS(file.path(b, "timings.rds"))$chemistry
hits <- identical(as.numeric(ta$dht_hits), as.numeric(tb$dht_hits))
cat(sprintf("%d fields, %d differ; hits per step %s (%s hits)\n",
            length(files), length(differ),
            if (hits) "identical" else "DIFFER", sum(as.numeric(ta$dht_hits))))
if (length(differ) || !hits) {
  if (length(differ)) cat("differing:", differ, "\n")
  if (!hits) cat("hits:", ta$dht_hits, "\nvs   ", tb$dht_hits, "\n")
  quit(status = 1)
}
