/* ns_p: includes ns_q.h (ns_p -> ns_q); ns_q.c calls ns_p_count (ns_q -> ns_p). */
#include "calc/ns_q.h"

int ns_p_count(int n)
{
    return n;
}
