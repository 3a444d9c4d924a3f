/* ns_q: declares its own function and its sibling's (ns_p_count, defined in ns_p.c, which
 * includes this header): a circle of an include and a call. */
#ifndef NS_Q_H
#define NS_Q_H
int ns_q_count(int n);
int ns_p_count(int n);
#endif
