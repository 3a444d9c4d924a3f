/* placeholder so the library is not empty; removed when the module lands */
int ns_io_placeholder(void);
int ns_io_placeholder(void) { return 0; }
