/* main: the program (may include every module, MPI, and exit). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "calc/ns_q.h"
#include "common/ns_time.h"
#include "store/ns_store.h"

int main(int argc, char **argv)
{
    char when[32];
    MPI_Init(&argc, &argv);
    ns_time_now(when, sizeof when);
    printf("%s %d %d\n", when, ns_store_write(argv[0], 1.0), ns_q_count(argc));
    MPI_Finalize();
    exit(0);
}
