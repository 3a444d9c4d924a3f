/* ns_n: includes ns_m_internal.h, whose inline function calls back into this file. */
#include "calc/ns_m_internal.h"

int ns_n_get(void)
{
    return 21;
}

int ns_n_four(void)
{
    return ns_m_twice() * 2;
}
