/* placeholder so the library is not empty; removed when the module lands */
int ns_model_placeholder(void);
int ns_model_placeholder(void) { return 0; }
