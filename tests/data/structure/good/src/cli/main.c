/* main: the program (may include every module, MPI, and exit). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/ns_store.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf("%d\n", ns_store_write(argv[0], 1.0));
    MPI_Finalize();
    exit(0);
}
