/* Argument checks and cross-rank agreement for collective calls. */
#ifndef RMADHT_CONFIG_H
#define RMADHT_CONFIG_H

#include "internal.h"

/* Checks cfg alone and computes the window layout. */
int config_check_local(const rmadht_config *cfg, struct slot_layout *layout);

/* Collective over comm: every rank returns the same verdict — the gravest
   local error of any rank, else RMADHT_ERR_MISMATCH if sizes, mode or hash
   choice differ, else RMADHT_OK — and gets the same table identifier in
   *id, different for each table this process creates. */
int config_agree(MPI_Comm comm, const rmadht_config *cfg, int local_rc,
                 uint64_t *id);

/* Collective: RMADHT_OK if every rank passed local_rc == 0; else this
   rank's own error, or RMADHT_ERR_REMOTE on ranks that did not fail. */
int config_agree_rc(MPI_Comm comm, int local_rc);

#endif
