/*
 * What this machine offers: cores from hwloc (the only file that
 * includes hwloc.h), memory and load from /proc (hwloc's memory total is
 * the fallback).
 */
#include <sys/utsname.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hwloc.h>

#include "peerd.h"

static unsigned res_cores;
static uint64_t res_mem_total;
static char res_cpu_model[WIRE_MAX_HOSTINFO + 1];
static time_t res_started;

int
resources_init(char *err, size_t errlen)
{
    hwloc_topology_t topo;
    int n;

    if (hwloc_topology_init(&topo) == -1 || hwloc_topology_load(topo) == -1) {
        snprintf(err, errlen, "hwloc cannot read this machine's topology");
        return -1;
    }
    n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n <= 0)
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    res_cores = n > 0 ? (unsigned)n : 1;
    res_mem_total = hwloc_get_root_obj(topo)->total_memory;
    res_cpu_model[0] = '\0';
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) > 0) {
        const char *model = hwloc_obj_get_info_by_name(
            hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0), "CPUModel");

        if (model != NULL)
            snprintf(res_cpu_model, sizeof res_cpu_model, "%s", model);
    }
    res_started = time(NULL);
    hwloc_topology_destroy(topo);
    return 0;
}

void
resources_fini(void)
{
}

unsigned
resources_cores(void)
{
    return res_cores;
}

/* MemAvailable and MemTotal from /proc/meminfo, in bytes. */
static void
res_meminfo(uint64_t *avail, uint64_t *total)
{
    char line[128];
    unsigned long long kb;
    FILE *f;

    *avail = *total = 0;
    if ((f = fopen("/proc/meminfo", "r")) == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            *avail = (uint64_t)kb * 1024u;
        else if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            *total = (uint64_t)kb * 1024u;
    }
    fclose(f);
}

static uint32_t
res_load_milli(void)
{
    double l1 = 0;
    FILE *f;

    if ((f = fopen("/proc/loadavg", "r")) == NULL)
        return 0;
    if (fscanf(f, "%lf", &l1) != 1)
        l1 = 0;
    fclose(f);
    return l1 < 0 ? 0 : (uint32_t)(l1 * 1000.0 + 0.5);
}

void
resources_probe(struct resources *r, uint32_t slots_total, uint32_t slots_free)
{
    uint64_t avail, total;

    memset(r, 0, sizeof *r);
    res_meminfo(&avail, &total);
    r->cores = res_cores;
    /* The kernel's MemTotal is what it actually manages; hwloc sums the
     * NUMA nodes, which some virtual machines under-report. */
    r->mem_total = total ? total : res_mem_total;
    r->mem_free = avail < r->mem_total ? avail : r->mem_total;
    r->load_milli = res_load_milli();
    r->slots_total = slots_total;
    r->slots_free = slots_free < slots_total ? slots_free : slots_total;
    if (r->slots_free == 0)
        r->state = PEER_STATE_FULL;
    else if (r->slots_free < r->slots_total)
        r->state = PEER_STATE_BUSY;
    else
        r->state = PEER_STATE_AVAILABLE;
}

/* Keep printable characters only: the codec refuses the others. */
static void
res_printable(char *s)
{
    for (; *s != '\0'; s++)
        if (*s < ' ' || *s > '~')
            *s = '?';
}

/* PRETTY_NAME of os-release, unquoted. */
static void
res_os_name(char *out, size_t len)
{
    char line[256], *v, *e;
    FILE *f;

    out[0] = '\0';
    if ((f = fopen("/etc/os-release", "r")) == NULL &&
        (f = fopen("/usr/lib/os-release", "r")) == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "PRETTY_NAME=", 12) != 0)
            continue;
        v = line + 12;
        v[strcspn(v, "\n")] = '\0';
        if (*v == '"' || *v == '\'') {
            v++;
            if ((e = strpbrk(v, "\"'")) != NULL)
                *e = '\0';
        }
        snprintf(out, len, "%.*s", (int)(len - 1), v);
        break;
    }
    fclose(f);
}

void
resources_describe(struct msg_register *reg)
{
    struct utsname u;

    snprintf(reg->cpu_model, sizeof reg->cpu_model, "%s", res_cpu_model);
    res_os_name(reg->os, sizeof reg->os);
    reg->kernel[0] = '\0';
    if (uname(&u) == 0)
        snprintf(reg->kernel, sizeof reg->kernel, "%.40s %.60s %.20s",
                 u.sysname, u.release, u.machine);
    res_printable(reg->cpu_model);
    res_printable(reg->os);
    res_printable(reg->kernel);
    reg->started = (uint64_t)res_started;
}
