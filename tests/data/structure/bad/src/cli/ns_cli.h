/* ns_cli: the program's helpers. ns_cli_unused is declared and defined, never used. */
#ifndef NS_CLI_H
#define NS_CLI_H
int ns_cli_unused(void);
#endif
