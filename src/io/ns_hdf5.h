/* ns_hdf5: the one thing normsweep asks of HDF5 itself, the library under NetCDF-4 files. */
#ifndef NS_HDF5_H
#define NS_HDF5_H

/* Ask HDF5 not to install its exit handler; call first in main, before any NetCDF call.
 *
 * At exit that handler closes every HDF5 file still open. A NetCDF file whose nc_close failed
 * (a full disk: the last metadata flush has no room) stays open inside HDF5, and HDF5 1.10.8
 * (Debian 12) then crashes in that handler (H5F__close_cb): `normsweep dump` to a full disk ended
 * with SIGSEGV instead of exit 1. normsweep closes or removes every file it writes itself, so the
 * handler has nothing left to do but crash. Returns 0, or -1 when HDF5 was already initialised
 * (too late: the handler stays). */
int ns_hdf5_no_exit_handler(void);

#endif
