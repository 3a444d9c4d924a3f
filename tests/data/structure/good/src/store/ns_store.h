/* ns_store: keeps a bound. */
#ifndef NS_STORE_H
#define NS_STORE_H
int ns_store_write(const char *path, double t);
#endif
