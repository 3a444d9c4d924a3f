/* ns_sweep_mpi: an MPI error code as an ns_err, and MPI_TRY, which returns one from a function
 * with an `ns_err *err` in scope (the sweep's MPI parts). */
#ifndef NS_SWEEP_MPI_H
#define NS_SWEEP_MPI_H

#include <mpi.h>

#include "common/ns_error.h"

/* An MPI error as an ns_err (NS_ERR_LIBRARY: "MPI <what>: <MPI's message>"). */
int ns_sweep_mpi_fail(ns_err *err, int code, const char *what);

#define MPI_TRY(call, what)                                  \
    do {                                                     \
        int mpi_rc_ = (call);                                \
        if (mpi_rc_ != MPI_SUCCESS)                          \
            return ns_sweep_mpi_fail(err, mpi_rc_, what);    \
    } while (0)

#endif
