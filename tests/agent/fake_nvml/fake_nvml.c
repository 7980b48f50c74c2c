/* fake_nvml.c: a stand-in libnvidia-ml.so.1 for tests on machines without
 * GPUs. tests/agent/run.sh builds it and puts it first on LD_LIBRARY_PATH,
 * so the agent's real NVML code path (dlopen, versioned dlsym, NVLink,
 * ECC, XID events, samples) runs against two fake GPUs joined by NVLink.
 * It deliberately lacks nvmlDeviceGetTopologyCommonAncestor: a missing
 * symbol must mean "feature unavailable", not a crash.
 * FAKE_NVML_XID=N makes the first event wait report XID N on GPU 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int ret_t;
struct dev { int index; };
static struct dev devs[2] = {{0}, {1}};
struct pci { char legacy[16]; unsigned int domain, bus, device, id, subsys; char bus_id[32]; };
struct mem { unsigned long long total, free, used; };
struct util { unsigned int gpu, memory; };
struct event { void *device; unsigned long long type, data; unsigned int gi, ci; };
static int xid_sent;

ret_t nvmlInit_v2(void) { return 0; }
ret_t nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(ret_t r) { return r ? "fake error" : "success"; }
ret_t nvmlSystemGetDriverVersion(char *b, unsigned int n) { snprintf(b, n, "550.54.15-fake"); return 0; }
ret_t nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
ret_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
    if (i > 1)
        return 2;
    *d = &devs[i];
    return 0;
}
static int idx(void *d) { return ((struct dev *)d)->index; }
ret_t nvmlDeviceGetUUID(void *d, char *b, unsigned int n)
{
    snprintf(b, n, "GPU-0b5e55ed-0000-4000-8000-00000000000%d", idx(d));
    return 0;
}
ret_t nvmlDeviceGetName(void *d, char *b, unsigned int n) { (void)d; snprintf(b, n, "NVIDIA H100 80GB HBM3"); return 0; }
ret_t nvmlDeviceGetMemoryInfo(void *d, struct mem *m)
{
    m->total = 85520809984ULL;
    m->used = idx(d) ? 1048576ULL * 1024 : 0;
    m->free = m->total - m->used;
    return 0;
}
ret_t nvmlDeviceGetPciInfo_v3(void *d, struct pci *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", 0x18 + idx(d));
    return 0;
}
ret_t nvmlDeviceGetMinorNumber(void *d, unsigned int *m) { *m = (unsigned int)idx(d); return 0; }
ret_t nvmlDeviceGetNvLinkState(void *d, unsigned int link, int *active)
{
    (void)d;
    if (link >= 2)
        return 2; /* INVALID_ARGUMENT: no more links */
    *active = 1;
    return 0;
}
ret_t nvmlDeviceGetNvLinkRemotePciInfo_v2(void *d, unsigned int link, struct pci *p)
{
    (void)link;
    memset(p, 0, sizeof *p);
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", 0x18 + (1 - idx(d)));
    return 0;
}
ret_t nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *n)
{
    (void)type;
    (void)counter;
    if (idx(d) == 0)
        return 3; /* NOT_SUPPORTED */
    *n = 0;
    return 0;
}
ret_t nvmlEventSetCreate(void **set) { static int s; *set = &s; return 0; }
ret_t nvmlDeviceGetSupportedEventTypes(void *d, unsigned long long *t) { (void)d; *t = 0x1f; return 0; }
ret_t nvmlDeviceRegisterEvents(void *d, unsigned long long mask, void *set) { (void)d; (void)mask; (void)set; return 0; }
ret_t nvmlEventSetWait_v2(void *set, struct event *e, unsigned int ms)
{
    (void)set;
    (void)ms;
    const char *x = getenv("FAKE_NVML_XID");
    if (!x || xid_sent)
        return 10; /* TIMEOUT */
    xid_sent = 1;
    e->device = &devs[1];
    e->type = 0x8;
    e->data = strtoull(x, NULL, 10);
    return 0;
}
ret_t nvmlEventSetFree(void *set) { (void)set; return 0; }
ret_t nvmlDeviceGetUtilizationRates(void *d, struct util *u) { u->gpu = 40 + idx(d); u->memory = 10; return 0; }
ret_t nvmlDeviceGetPowerUsage(void *d, unsigned int *mw) { *mw = 300000 + 1000 * (unsigned int)idx(d); return 0; }
ret_t nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *c) { (void)sensor; *c = 40 + (unsigned)idx(d); return 0; }
ret_t nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz) { (void)d; *mhz = type == 1 ? 1980 : 2619; return 0; }
