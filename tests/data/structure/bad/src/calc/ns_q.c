/* ns_q: calls back into ns_p. */
#include "calc/ns_q.h"

int ns_q_count(int n)
{
    return ns_p_count(n) + 1;
}
