#include "agent/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the slice of the NVML ABI the agent uses ---- */
typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
typedef struct nvml_event_set_st *nvml_event_set;

enum { NVML_OK = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_TIMEOUT = 10 };
enum { NVML_UUID_LEN = 96, NVML_NAME_LEN = 96, NVML_DRIVER_LEN = 80, NVML_MAX_LINKS = 36 };
enum { NVML_EVENT_DOUBLE_BIT_ECC = 0x2, NVML_EVENT_XID_CRITICAL = 0x8 };
enum { NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_ECC_UNCORRECTED = 1, NVML_ECC_VOLATILE = 0 };

struct nvml_memory {
    unsigned long long total, free, used;
};
struct nvml_pci_info { /* nvmlPciInfo_t, as filled by nvmlDeviceGetPciInfo_v3 */
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct nvml_utilization {
    unsigned int gpu, memory;
};
struct nvml_event_data {
    nvml_device device;
    unsigned long long event_type, event_data;
    unsigned int gpu_instance_id, compute_instance_id;
};

struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*driver_version)(char *, unsigned int);
    nvml_ret (*count)(unsigned int *);
    nvml_ret (*handle_by_index)(unsigned int, nvml_device *);
    nvml_ret (*uuid)(nvml_device, char *, unsigned int);
    nvml_ret (*name)(nvml_device, char *, unsigned int);
    nvml_ret (*memory)(nvml_device, struct nvml_memory *);
    nvml_ret (*pci)(nvml_device, struct nvml_pci_info *);
    nvml_ret (*minor)(nvml_device, unsigned int *);
    /* optional */
    nvml_ret (*nvlink_state)(nvml_device, unsigned int, int *);
    nvml_ret (*nvlink_remote_pci)(nvml_device, unsigned int, struct nvml_pci_info *);
    nvml_ret (*topo_common_ancestor)(nvml_device, nvml_device, int *);
    nvml_ret (*ecc_total)(nvml_device, int, int, unsigned long long *);
    nvml_ret (*event_set_create)(nvml_event_set *);
    nvml_ret (*supported_events)(nvml_device, unsigned long long *);
    nvml_ret (*register_events)(nvml_device, unsigned long long, nvml_event_set);
    nvml_ret (*event_wait)(nvml_event_set, struct nvml_event_data *, unsigned int);
    nvml_ret (*event_set_free)(nvml_event_set);
    nvml_ret (*utilization)(nvml_device, struct nvml_utilization *);
    nvml_ret (*power)(nvml_device, unsigned int *);
    nvml_ret (*temperature)(nvml_device, int, unsigned int *);
    nvml_ret (*clock)(nvml_device, int, unsigned int *);
};

struct nvml {
    void *lib;
    struct nvml_api api;
    nvml_device *devices;
    unsigned int n_devices;
    nvml_event_set events;
    int *pending_xid; /* per device, collected by the last event drain */
    char features[128];
};

/* dlsym into a function pointer without a pedantic object/function cast */
static void load(void *lib, const char *name, void *slot)
{
    void *p = dlsym(lib, name);
    memcpy(slot, &p, sizeof p);
}

static const char *errstr(const struct nvml *n, nvml_ret r)
{
    static char fallback[32];
    if (n->api.error_string)
        return n->api.error_string(r);
    snprintf(fallback, sizeof fallback, "nvml error %d", r);
    return fallback;
}

struct nvml *nvml_open(const char *lib, struct err *err)
{
    const char *name = lib ? lib : "libnvidia-ml.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        err_set(err, NULL, 0, 0, "%s not found: use --inventory FILE (a fake inventory) on a machine without "
                                 "NVIDIA's driver",
                name);
        return NULL;
    }
    struct nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(h);
        err_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    n->lib = h;
    struct nvml_api *a = &n->api;
    load(h, "nvmlInit_v2", &a->init);
    load(h, "nvmlShutdown", &a->shutdown);
    load(h, "nvmlErrorString", &a->error_string);
    load(h, "nvmlSystemGetDriverVersion", &a->driver_version);
    load(h, "nvmlDeviceGetCount_v2", &a->count);
    load(h, "nvmlDeviceGetHandleByIndex_v2", &a->handle_by_index);
    load(h, "nvmlDeviceGetUUID", &a->uuid);
    load(h, "nvmlDeviceGetName", &a->name);
    load(h, "nvmlDeviceGetMemoryInfo", &a->memory);
    load(h, "nvmlDeviceGetPciInfo_v3", &a->pci);
    load(h, "nvmlDeviceGetMinorNumber", &a->minor);
    load(h, "nvmlDeviceGetNvLinkState", &a->nvlink_state);
    load(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &a->nvlink_remote_pci);
    load(h, "nvmlDeviceGetTopologyCommonAncestor", &a->topo_common_ancestor);
    load(h, "nvmlDeviceGetTotalEccErrors", &a->ecc_total);
    load(h, "nvmlEventSetCreate", &a->event_set_create);
    load(h, "nvmlDeviceGetSupportedEventTypes", &a->supported_events);
    load(h, "nvmlDeviceRegisterEvents", &a->register_events);
    load(h, "nvmlEventSetWait_v2", &a->event_wait);
    load(h, "nvmlEventSetFree", &a->event_set_free);
    load(h, "nvmlDeviceGetUtilizationRates", &a->utilization);
    load(h, "nvmlDeviceGetPowerUsage", &a->power);
    load(h, "nvmlDeviceGetTemperature", &a->temperature);
    load(h, "nvmlDeviceGetClockInfo", &a->clock);
    if (!a->init || !a->count || !a->handle_by_index || !a->uuid) {
        err_set(err, NULL, 0, 0, "%s lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2/"
                                 "nvmlDeviceGetUUID: driver too old",
                name);
        dlclose(h);
        free(n);
        return NULL;
    }
    nvml_ret r = a->init();
    if (r != NVML_OK) {
        err_set(err, NULL, 0, 0, "nvmlInit_v2 failed: %s", errstr(n, r));
        dlclose(h);
        free(n);
        return NULL;
    }
    snprintf(n->features, sizeof n->features, "%s%s%s%s%s", a->nvlink_state && a->nvlink_remote_pci ? " nvlink" : "",
             a->topo_common_ancestor ? " topology" : "", a->ecc_total ? " ecc" : "",
             a->event_set_create && a->register_events && a->event_wait ? " xid" : "",
             a->utilization || a->power || a->temperature ? " samples" : "");
    return n;
}

void nvml_close(struct nvml *n)
{
    if (!n)
        return;
    if (n->events && n->api.event_set_free)
        n->api.event_set_free(n->events);
    if (n->api.shutdown)
        n->api.shutdown();
    dlclose(n->lib);
    free(n->devices);
    free(n->pending_xid);
    free(n);
}

const char *nvml_features(const struct nvml *n)
{
    return n->features[0] ? n->features + 1 : "none";
}

static int find_parent(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

int nvml_fill_inventory(struct nvml *n, const char *node_name, struct inventory *inv, struct err *err)
{
    struct nvml_api *a = &n->api;
    unsigned int count = 0;
    nvml_ret r = a->count(&count);
    if (r != NVML_OK)
        return err_set(err, NULL, 0, 0, "nvmlDeviceGetCount_v2 failed: %s", errstr(n, r));
    if (count == 0)
        return err_set(err, NULL, 0, 0, "NVML sees no GPU on this host");
    if (count > INV_MAX_NODE_GPUS)
        return err_set(err, NULL, 0, 0, "NVML reports %u GPUs, more than the %d a node may hold", count,
                       INV_MAX_NODE_GPUS);
    inventory_release(inv);
    inv->source = INVENTORY_NVML;
    if (a->driver_version && a->driver_version(inv->driver_version, sizeof inv->driver_version) != NVML_OK)
        inv->driver_version[0] = '\0';
    free(n->devices);
    free(n->pending_xid);
    n->devices = calloc(count, sizeof *n->devices);
    n->pending_xid = calloc(count, sizeof *n->pending_xid);
    int node = n->devices && n->pending_xid ? inventory_add_node(inv, node_name, (int32_t)count) : -1;
    if (node < 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    n->n_devices = count;
    for (unsigned int i = 0; i < count; i++) {
        struct inv_gpu *g = &inv->gpus[i];
        if ((r = a->handle_by_index(i, &n->devices[i])) != NVML_OK)
            return err_set(err, NULL, 0, 0, "nvmlDeviceGetHandleByIndex_v2(%u) failed: %s", i, errstr(n, r));
        if ((r = a->uuid(n->devices[i], g->uuid, sizeof g->uuid)) != NVML_OK)
            return err_set(err, NULL, 0, 0, "nvmlDeviceGetUUID(%u) failed: %s", i, errstr(n, r));
        if (!a->name || a->name(n->devices[i], g->model, sizeof g->model) != NVML_OK)
            snprintf(g->model, sizeof g->model, "unknown");
        struct nvml_memory m;
        if (a->memory && a->memory(n->devices[i], &m) == NVML_OK)
            g->memory_bytes = m.total;
        struct nvml_pci_info pci;
        if (a->pci && a->pci(n->devices[i], &pci) == NVML_OK)
            snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%.31s", pci.bus_id);
        unsigned int minor;
        if (a->minor && a->minor(n->devices[i], &minor) == NVML_OK)
            g->minor = (int32_t)minor;
    }
    /* NVLink: GPUs joined by an active link share a domain; a link whose far
     * end is no GPU of ours goes to an NVSwitch, which joins all of them. */
    if (a->nvlink_state && a->nvlink_remote_pci) {
        int parent[INV_MAX_NODE_GPUS + 1];
        for (unsigned int i = 0; i <= count; i++)
            parent[i] = (int)i;
        int linked[INV_MAX_NODE_GPUS] = {0};
        for (unsigned int i = 0; i < count; i++) {
            struct inv_gpu *g = &inv->gpus[i];
            for (unsigned int link = 0; link < NVML_MAX_LINKS; link++) {
                int active = 0;
                r = a->nvlink_state(n->devices[i], link, &active);
                if (r == NVML_ERROR_INVALID_ARGUMENT || r == NVML_ERROR_NOT_SUPPORTED)
                    break;
                if (r != NVML_OK || !active)
                    continue;
                struct nvml_pci_info remote;
                if (a->nvlink_remote_pci(n->devices[i], link, &remote) != NVML_OK)
                    continue;
                linked[i] = 1;
                int peer = -1;
                for (unsigned int k = 0; k < count; k++)
                    if (k != i && strncasecmp(inv->gpus[k].pci_bus_id, remote.bus_id, sizeof remote.bus_id) == 0)
                        peer = (int)k;
                int a_root = find_parent(parent, (int)i);
                int b_root = find_parent(parent, peer >= 0 ? peer : (int)count);
                parent[a_root] = b_root;
                if (peer >= 0) {
                    int dup = 0;
                    for (int p = 0; p < g->n_peers; p++)
                        dup |= g->peers[p] == peer;
                    if (!dup && g->n_peers < INV_MAX_PEERS)
                        g->peers[g->n_peers++] = peer;
                }
            }
        }
        int domain_of_root[INV_MAX_NODE_GPUS + 1];
        for (unsigned int i = 0; i <= count; i++)
            domain_of_root[i] = -1;
        int next = 0;
        for (unsigned int i = 0; i < count; i++) {
            if (!linked[i])
                continue;
            int root = find_parent(parent, (int)i);
            if (domain_of_root[root] < 0)
                domain_of_root[root] = next++;
            inv->gpus[i].nvlink_domain = domain_of_root[root];
            inv->nodes[0].nvlink_domain = 0;
        }
    }
    if (a->topo_common_ancestor) {
        inv->pcie_level = malloc((size_t)count * count);
        if (inv->pcie_level)
            for (unsigned int i = 0; i < count; i++)
                for (unsigned int k = 0; k < count; k++) {
                    int level = 0;
                    inv->pcie_level[i * count + k] =
                        i == k ? 0
                               : (a->topo_common_ancestor(n->devices[i], n->devices[k], &level) == NVML_OK
                                      ? (int8_t)level
                                      : -1);
                }
    }
    if (a->event_set_create && a->register_events && a->event_wait && !n->events &&
        a->event_set_create(&n->events) == NVML_OK) {
        for (unsigned int i = 0; i < count; i++) {
            unsigned long long supported = NVML_EVENT_XID_CRITICAL | NVML_EVENT_DOUBLE_BIT_ECC;
            if (a->supported_events)
                a->supported_events(n->devices[i], &supported);
            unsigned long long mask = supported & (NVML_EVENT_XID_CRITICAL | NVML_EVENT_DOUBLE_BIT_ECC);
            if (mask)
                a->register_events(n->devices[i], mask, n->events);
        }
    }
    return 0;
}

static void drain_events(struct nvml *n)
{
    if (!n->events)
        return;
    for (int guard = 0; guard < 1024; guard++) {
        struct nvml_event_data ev;
        memset(&ev, 0, sizeof ev);
        if (n->api.event_wait(n->events, &ev, 0) != NVML_OK)
            return;
        for (unsigned int i = 0; i < n->n_devices; i++)
            if (n->devices[i] == ev.device) {
                if (ev.event_type & NVML_EVENT_XID_CRITICAL)
                    n->pending_xid[i] = ev.event_data ? (int)ev.event_data : 999;
                else if (ev.event_type & NVML_EVENT_DOUBLE_BIT_ECC)
                    n->pending_xid[i] = 48;
            }
    }
}

int nvml_poll_health(struct nvml *n, uint32_t gpu, struct gpu_health_sample *s)
{
    if (gpu >= n->n_devices)
        return -1;
    if (gpu == 0)
        drain_events(n);
    s->xid = n->pending_xid[gpu];
    n->pending_xid[gpu] = 0;
    s->ecc_uncorrected = -1;
    unsigned long long c;
    if (n->api.ecc_total &&
        n->api.ecc_total(n->devices[gpu], NVML_ECC_UNCORRECTED, NVML_ECC_VOLATILE, &c) == NVML_OK)
        s->ecc_uncorrected = (int64_t)c;
    return 0;
}

int nvml_sample(struct nvml *n, uint32_t gpu, struct gpu_sample *s)
{
    struct gpu_sample none = {-1, -1, -1, -1, -1.0, -1, -1, -1};
    *s = none;
    if (gpu >= n->n_devices)
        return -1;
    nvml_device d = n->devices[gpu];
    struct nvml_api *a = &n->api;
    struct nvml_memory m;
    if (a->memory && a->memory(d, &m) == NVML_OK) {
        s->fb_used_mib = (int64_t)(m.used >> 20);
        s->fb_free_mib = (int64_t)(m.free >> 20);
    }
    struct nvml_utilization u;
    if (a->utilization && a->utilization(d, &u) == NVML_OK) {
        s->gpu_util_pct = u.gpu;
        s->mem_copy_util_pct = u.memory;
    }
    unsigned int v;
    if (a->power && a->power(d, &v) == NVML_OK)
        s->power_w = v / 1000.0;
    if (a->temperature && a->temperature(d, NVML_TEMPERATURE_GPU, &v) == NVML_OK)
        s->gpu_temp_c = v;
    if (a->clock && a->clock(d, NVML_CLOCK_SM, &v) == NVML_OK)
        s->sm_clock_mhz = v;
    if (a->clock && a->clock(d, NVML_CLOCK_MEM, &v) == NVML_OK)
        s->mem_clock_mhz = v;
    return 0;
}
