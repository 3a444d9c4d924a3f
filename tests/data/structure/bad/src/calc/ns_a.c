/* ns_a: one of three units in a circle made of calls only (ns_a -> ns_b -> ns_c -> ns_a): each
 * declares what it calls itself, and none includes another's header. */
int ns_b_step(int n);

int ns_a_step(int n)
{
    return n > 0 ? ns_b_step(n - 1) : 0;
}
