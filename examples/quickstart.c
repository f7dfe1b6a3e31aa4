/* The README's quick start: every rank stores one entry, then reads all. */
#include <rmadht.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rmadht_config cfg;
  rmadht_config_default(&cfg, sizeof(int), sizeof(double));
  rmadht *t;
  int rc = rmadht_create(MPI_COMM_WORLD, &cfg, &t); /* collective */
  if (rc) { fprintf(stderr, "%s\n", rmadht_strerror(rc)); MPI_Abort(MPI_COMM_WORLD, 1); }
  double mine = 1.5 * rank, got = 0, sum = 0;
  rmadht_write(t, &rank, &mine);
  rmadht_flush(t);                 /* make the write visible to all */
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < size; k++)
    if (rmadht_read(t, &k, &got) == RMADHT_OK) sum += got;
  printf("rank %d: sum %.1f\n", rank, sum);
  rmadht_free(&t);                 /* collective */
  MPI_Finalize();
  return sum == 0.75 * size * (size - 1) ? 0 : 1;
}
