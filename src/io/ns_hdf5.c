/* ns_hdf5: HDF5's exit handler turned off (see ns_hdf5.h). */
#include "io/ns_hdf5.h"

#include <hdf5.h>

int ns_hdf5_no_exit_handler(void)
{
    return H5dont_atexit() < 0 ? -1 : 0;
}
