/* ns_nc: NetCDF outside its home (store). */
#include <netcdf.h>

int ns_nc_ok(int status)
{
    return status == NC_NOERR;
}
