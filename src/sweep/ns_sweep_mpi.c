/* ns_sweep_mpi: MPI errors as ns_err (see ns_sweep_mpi.h). */
#include "sweep/ns_sweep_mpi.h"

int ns_sweep_mpi_fail(ns_err *err, int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, s, &len);
    return ns_fail(err, NS_ERR_LIBRARY, "MPI %s: %s", what, s);
}
