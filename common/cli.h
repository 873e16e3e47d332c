/*
 * What every command-line program does the same way: numeric options,
 * stray operands, --version.  Messages start with the program name given
 * to log_init().
 */
#ifndef P2P_CLI_H
#define P2P_CLI_H

#include <stdint.h>
#include <stdio.h>

/* A whole decimal number from min to max for option opt; otherwise one
 * line on stderr and -1 (the caller exits 2). */
int cli_int(const char *opt, const char *s, int min, int max, int *out);
/* No operand may follow the options; otherwise the usage on stderr and
 * -1 (the caller exits 2). */
int cli_no_operands(int argc, char **argv, int optind, void (*usage)(FILE *));
/* A size for people into buf: "3.9 GiB", "512 MiB"; returns buf. */
const char *cli_bytes(char *buf, size_t len, uint64_t n);
/* "NAME (p2pmpi) VERSION" on stdout. */
void cli_version(void);

#endif
