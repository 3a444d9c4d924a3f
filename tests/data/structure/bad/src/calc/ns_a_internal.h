/* ns_a_internal: calc's private header of unit ns_a. */
#ifndef NS_A_INTERNAL_H
#define NS_A_INTERNAL_H
int ns_a_step(int n);
#endif
