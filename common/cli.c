/*
 * Command-line conventions shared by all programs (DESIGN.md §5): usage
 * errors exit 2 with one clear line.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "log.h"

int
cli_int(const char *opt, const char *s, int min, int max, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
        fprintf(stderr, "%s: %s: '%s' is not a number from %d to %d\n",
                log_progname(), opt, s, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int
cli_no_operands(int argc, char **argv, int optind, void (*usage)(FILE *))
{
    if (optind == argc)
        return 0;
    fprintf(stderr, "%s: unexpected argument '%s'\n", log_progname(),
            argv[optind]);
    usage(stderr);
    return -1;
}

void
cli_version(void)
{
    printf("%s (p2pmpi) %s\n", log_progname(), P2P_VERSION);
}

const char *
cli_bytes(char *buf, size_t len, uint64_t n)
{
    if (n >= (uint64_t)1 << 30)
        snprintf(buf, len, "%.1f GiB", (double)n / (double)(1ULL << 30));
    else
        snprintf(buf, len, "%llu MiB", (unsigned long long)(n >> 20));
    return buf;
}
