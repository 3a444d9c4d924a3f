/* ns_c: the circle's third unit; it takes ns_a_step's address instead of calling it. */
int ns_a_step(int n);

int ns_c_step(int n)
{
    int (*back)(int) = ns_a_step;
    return n > 0 ? back(n - 1) : 2;
}
