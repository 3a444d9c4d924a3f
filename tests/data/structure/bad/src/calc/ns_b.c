/* ns_b: the circle's second unit. */
int ns_c_step(int n);

int ns_b_step(int n)
{
    return n > 0 ? ns_c_step(n - 1) : 1;
}
