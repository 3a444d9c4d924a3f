/* ns_m_internal: a header-only unit whose inline function calls ns_n_get, while ns_n.c includes
 * it: a circle through a header's body and an include. */
#ifndef NS_M_INTERNAL_H
#define NS_M_INTERNAL_H
int ns_n_get(void);
static inline int ns_m_twice(void)
{
    return 2 * ns_n_get();
}
#endif
